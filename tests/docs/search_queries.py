"""What a reader types into the site's search box, and the hand-written page that answers it.

Two kinds of query (issue 32, item 5): the start of an error message as torch 2.13 (or
torchao) prints it, and the name of a method or argument. Material's search splits on
white space and hyphens only (the index's ``separator``), so ``set_requires_gradient_sync``
or ``torch.Tensor`` is one term. Each query names the pages that answer it, as site paths.

``tests/docs/test_site.py`` checks that every query's terms appear together in one
indexed section of an answering page; ``tests/docs/test_browser.py`` runs the queries
through the site's own search worker in Chromium and checks that no generated page
(:data:`GENERATED`) ranks above the first answering page.
"""

from __future__ import annotations

#: Site folders written by generators: the mkdocstrings API pages, indexgen's reference
#: pages and the rendered torch sources. Everything else is written by hand.
GENERATED = ("api/", "reference/", "upstream/")

TROUBLE = ("troubleshooting/",)

#: (query, pages that answer it)
QUERIES: list[tuple[str, tuple[str, ...]]] = [
    # ---- error texts, as printed
    ("Parameter is shared with a parameter already managed by another FSDP group", TROUBLE),
    ("stream cannot be set when using native HSDP", TROUBLE),
    ("got mixed torch.Tensor and DTensor", TROUBLE),
    ("Cannot use ReduceOp.PREMUL_SUM with Gloo", TROUBLE),
    ("FSDP does not support deepcopy", TROUBLE),
    ("FSDP expects uniform original parameter dtype", TROUBLE),
    ("FSDP reduce-scatter expects uniform gradient dtype", TROUBLE),
    ("FSDP parameters should be materialized on CPU when enabling CPU offloading", TROUBLE),
    ("FSDP parameters should be materialized from meta device before training", TROUBLE),
    ("NF4Tensor dispatch: attempting to run _c10d_functional.all_gather_into_tensor", TROUBLE),
    ("fully_shard does not support containers that do not implement forward", TROUBLE),
    ("FSDP state has already been lazily initialized", TROUBLE),
    ("FSDP requires a single root module", TROUBLE),
    ("Invariant encountered: value was None when it should not be", TROUBLE),
    ("Please init the 2D mesh for HSDP with mesh_dim_names specified", TROUBLE),
    ("Each distinct composable distributed API can only be applied to a module once", TROUBLE),
    ("FSDP does not support non-contiguous parameters yet", TROUBLE),
    ("Cannot access accelerator device when none is available", TROUBLE),
    ("No backend type associated with device type cpu", TROUBLE),
    ("mat1 and mat2 must have the same dtype", TROUBLE),
    # ---- method and argument names
    ("register_fsdp_forward_method", ("using/train/",)),
    ("MixedPrecisionPolicy", ("using/train/",)),
    ("GradScaler", ("using/mixed-precision/",)),
    ("cast_forward_inputs", ("using/mixed-precision/",)),
    ("output_dtype", ("using/mixed-precision/",)),
    ("register_post_accumulate_grad_hook", ("using/accumulate/",)),
    ("set_requires_gradient_sync", ("using/accumulate/",)),
    ("set_reshard_after_backward", ("using/accumulate/",)),
    ("set_is_last_backward", ("using/accumulate/",)),
    ("set_requires_all_reduce", ("using/accumulate/",)),
    ("set_reshard_after_forward", ("using/inference/", "using/memory/")),
    ("unshard", ("using/inference/",)),
    ("reset_iter_state", ("using/control-flow/",)),
    ("set_reduce_scatter_unused_params", ("using/control-flow/",)),
    ("clip_grad_norm_ full_tensor", ("using/gradients/",)),
    ("set_gradient_divide_factor", ("using/gradients/",)),
    ("set_force_sum_reduction_for_comms", ("using/gradients/",)),
    ("set_all_reduce_hook", ("using/gradients/",)),
    ("set_modules_to_forward_prefetch", ("using/memory/",)),
    ("set_modules_to_backward_prefetch", ("using/memory/",)),
    ("set_reduce_scatter_max_input_buffers", ("using/memory/",)),
    ("set_unshard_in_backward", ("using/memory/",)),
    ("set_post_optim_event", ("using/memory/",)),
    ("set_custom_all_gather", ("using/memory/",)),
    ("set_symm_mem_for_comm", ("using/memory/",)),
    ("set_separate_reduce_scatter_group", ("using/memory/",)),
    ("share_comm_ctx", ("using/memory/",)),
    ("CPUOffloadPolicy", ("using/memory/",)),
    ("DataParallelMeshDims", ("using/parallelism/",)),
    ("shard_placement_fn", ("using/parallelism/",)),
    ("ignored_params", ("using/train/",)),
    ("get_model_state_dict", ("using/checkpoint/",)),
    ("set_model_state_dict", ("using/checkpoint/",)),
    ("from_local", ("using/checkpoint/",)),
    ("summon_full_params", ("migration/",)),
    ("no_sync", ("migration/",)),
]


def is_generated(location: str) -> bool:
    """Whether a search result's location (``page/#anchor``) is a generated page."""
    return location.startswith(GENERATED)
