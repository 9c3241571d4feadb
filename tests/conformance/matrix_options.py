"""The options of the pairwise conformance matrix (issue 30 item 2), in one place.

Every option of torch 2.13's FSDP2 that can change the numbers a training step computes
or the memory it holds, each with the values the matrix tries. The **first value of each
option is its default**: the value a case without that option has, and the one a failing
case's option is reset to when it is shrunk (:func:`tests.conformance.matrix_cases.shrink`).

:data:`CONSTRAINTS` are the combinations that are not a configuration at all (an HSDP
option without HSDP, an int ``reshard_after_forward`` where no smaller group exists, ...):
the generator never makes them. Combinations torch *refuses* are not constraints: such a
case runs, and fsdp_ref must refuse it the same way (torch's exception type, a message
starting with torch's). :data:`TORCH_LIMITS` names the cases torch cannot run on gloo
ranks, or gets wrong; those are held to one-process training on the global batch instead.

How each value is applied is written once, in :mod:`tests.conformance.matrix_build`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Option:
    """An option's values (the default first) and what it drives (markdown)."""

    values: tuple[Any, ...]
    what: str


#: Keep the names those of the torch API they drive, so that a shrunk failing case reads
#: as the calls that reproduce it.
SPEC: dict[str, Option] = {
    "mesh": Option(("dp2", "dp4", "hsdp", "tp"),
                   "the mesh of every `fully_shard` call: 1-D over 2 or 4 ranks; HSDP "
                   "`(rep 2, shard 2)`; `(dp 2, tp 2)` with each block's MLP "
                   "tensor-parallel (`ColwiseParallel` / `RowwiseParallel`) and FSDP over `dp`"),
    "param_dtype": Option((None, "bfloat16", "float16"),
                          "`MixedPrecisionPolicy.param_dtype`, root and blocks"),
    "reduce_dtype": Option((None, "float32", "bfloat16", "float16"),
                           "`MixedPrecisionPolicy.reduce_dtype`, root and blocks"),
    "output_dtype": Option((None, "float32", "bfloat16"),
                           "`MixedPrecisionPolicy.output_dtype`, on the root (its output "
                           "is the loss's input)"),
    "cast_forward_inputs": Option((True, False),
                                  "`MixedPrecisionPolicy.cast_forward_inputs`, on the "
                                  "blocks (a block then keeps its residual in the dtype "
                                  "it was given)"),
    "offload": Option((False, True), "`CPUOffloadPolicy(pin_memory=False)`"),
    "reshard_after_forward": Option((None, True, False, 2),
                                    "`fully_shard(reshard_after_forward=...)` on every "
                                    "call; `None` is torch's default (the root keeps its "
                                    "parameters, the blocks reshard); `2`: to groups of 2"),
    "reshard_after_backward": Option((True, False),
                                     "`set_reshard_after_backward(False)` before all but "
                                     "the last microbatch, `True` before it"),
    "microbatches": Option((1, 2), "backwards per optimizer step, each on its share of "
                                   "the step's batch"),
    "gradient_sync_off": Option((False, True),
                                "`set_requires_gradient_sync(False)` before all but the "
                                "last microbatch"),
    "is_last_backward": Option((False, True),
                               "`set_is_last_backward(False)` before all but the last "
                               "microbatch, `True` before it"),
    "all_reduce_off": Option((False, True),
                             "`set_requires_all_reduce(False)` before all but the last "
                             "microbatch"),
    "explicit_prefetch": Option((False, True),
                                "`set_modules_to_forward_prefetch` (root to block 0 to "
                                "block 1) and `set_modules_to_backward_prefetch` (block 1 "
                                "to block 0)"),
    "unshard_async": Option((False, True),
                            "`unshard(async_op=True)` on the root and block 0 before each "
                            "forward (the block's handle waited, the root's left to "
                            "forward)"),
    "gradient_divide_factor": Option((None, 3.0),
                                     "`set_gradient_divide_factor` on every FSDP module"),
    "force_sum_reduction": Option((False, True),
                                  "`set_force_sum_reduction_for_comms(True)` on every "
                                  "FSDP module"),
    "unused_params": Option(("none", "unused", "reduce_scatter"),
                            "a `Linear` in each block that forward never calls; "
                            "`reduce_scatter`: and `set_reduce_scatter_unused_params(True)`"),
    "frozen_params": Option((False, True),
                            "each block's `in_proj` frozen (`requires_grad=False`)"),
    "activation_checkpointing": Option((False, True),
                                       "`checkpoint_wrapper` (non-reentrant) around each "
                                       "block before `fully_shard`"),
    "compile": Option((False, True),
                      "each block replaced by `torch.compile(block, "
                      "backend=\"aot_eager\")` before `fully_shard` (torchtitan's order: "
                      "checkpointing, compile, FSDP)"),
    "shard_placement": Option((None, "dim1", "own_mesh"),
                              "`shard_placement_fn`: `dim1`: `Shard(1)` for each 2-D "
                              "weight whose dim 1 the shard group divides (torch refuses "
                              "uneven dim-1 shards); `own_mesh`: each block's "
                              "`out_proj.weight` on a mesh of its own, a "
                              "`ShardPlacementResult` with an `HSDPMeshInfo` of an "
                              "`(ep, efsdp)` mesh (torchtitan's expert layout)"),
}

#: option -> its values, the default first
OPTIONS: dict[str, tuple[Any, ...]] = {name: o.values for name, o in SPEC.items()}

#: world size of each mesh
WORLD_SIZE = {"dp2": 2, "dp4": 4, "hsdp": 4, "tp": 4}

STEPS = 3


@dataclass(frozen=True)
class Constraint:
    """A combination the generator never makes: ``violated(case)`` is True when the
    options it looks at are all set (a partial case may lack some) and clash."""

    why: str
    violated: Callable[[dict[str, Any]], bool]


def _is(case: dict[str, Any], name: str, *values: Any) -> bool:
    """``name`` is set in (a possibly partial) ``case`` and is one of ``values``."""
    return name in case and case[name] in values


def _set_but_not(case: dict[str, Any], name: str, *values: Any) -> bool:
    return name in case and case[name] not in values


CONSTRAINTS: tuple[Constraint, ...] = (
    Constraint("set_requires_gradient_sync(False) needs a later microbatch that syncs",
               lambda c: _is(c, "gradient_sync_off", True) and _is(c, "microbatches", 1)),
    Constraint("set_is_last_backward(False) needs a later microbatch",
               lambda c: _is(c, "is_last_backward", True) and _is(c, "microbatches", 1)),
    Constraint("set_reshard_after_backward(False) needs a later microbatch",
               lambda c: _is(c, "reshard_after_backward", False)
               and _is(c, "microbatches", 1)),
    Constraint("set_requires_all_reduce(False) needs a later microbatch",
               lambda c: _is(c, "all_reduce_off", True) and _is(c, "microbatches", 1)),
    Constraint("set_requires_all_reduce is an HSDP option",
               lambda c: _is(c, "all_reduce_off", True)
               and _set_but_not(c, "mesh", "hsdp")),
    Constraint("an int reshard_after_forward names a smaller shard group: only dp4 has "
               "one (2 of 4; on 2 ranks 2 means True, 1 means False)",
               lambda c: _is(c, "reshard_after_forward", 2)
               and _set_but_not(c, "mesh", "dp4")),
)


def violation(case: dict[str, Any]) -> str | None:
    """Why ``case`` (possibly partial) is not a configuration, or None."""
    for constraint in CONSTRAINTS:
        if constraint.violated(case):
            return constraint.why
    return None


def defaults() -> dict[str, Any]:
    """Every option at its default value."""
    return {name: values[0] for name, values in OPTIONS.items()}


@dataclass(frozen=True)
class TorchLimit:
    """Cases where torch 2.13 is not the truth. The matrix holds fsdp_ref to one-process
    training there and, where torch can run, checks that torch still fails with
    ``raises`` (a piece of its message) or, with ``raises=None``, still differs from
    fsdp_ref, so that a torch that learns to run them, or
    is fixed, is noticed and compared bitwise again. ``runs=False``: torch is not run at
    all (it fails on some ranks and leaves the others waiting in a collective).

    ``stand_in``: how torch runs the case on gloo and computes the same numbers (the
    same sums and divisions, in the same order): options of the case to change, or
    ``premul_sum_on_gloo`` (:func:`tests.conformance.scenarios_matrix.train`'s argument);
    fsdp_ref is then also compared with that run, bitwise, except the records named in
    ``stand_in_skips`` (what the stand-in changes on purpose)."""

    why: str
    applies: Callable[[dict[str, Any]], bool]
    raises: str | None = None
    runs: bool = True
    stand_in: dict[str, Any] | None = None
    stand_in_skips: tuple[str, ...] = ()


TORCH_LIMITS: tuple[TorchLimit, ...] = (
    TorchLimit("a gradient divide factor other than the reduce-scatter group's size, "
               "without forced sums, reducing in float32 or bfloat16, is "
               "`ReduceOp.PREMUL_SUM(1/factor)` in torch, which gloo refuses",
               lambda c: _is(c, "gradient_divide_factor", 3.0)
               and _is(c, "force_sum_reduction", False) and not _reduces_in_fp16(c),
               raises="Cannot use ReduceOp.PREMUL_SUM with Gloo",
               # torch with its PREMUL_SUM reduce-scatter done as NCCL does it: each
               # rank's input multiplied by 1/factor, then summed (a custom ReduceScatter)
               stand_in={"premul_sum_on_gloo": True}),
    TorchLimit("torch divides twice by a gradient divide factor where a group shards "
               "over one rank and all-reduces over others (`own_mesh` on 2 ranks: "
               "`(ep 2, efsdp 1)`) and the division is not left to the collective (forced "
               "sums, or a float16 reduction): `foreach_reduce`'s one-rank path divides "
               "while copying, then the pre- and post-division divide again",
               lambda c: _is(c, "gradient_divide_factor", 3.0)
               and (_is(c, "force_sum_reduction", True) or _reduces_in_fp16(c))
               and _is(c, "shard_placement", "own_mesh") and _is(c, "mesh", "dp2")),
    TorchLimit("torch fails with an int `reshard_after_forward` and parameters sharded "
               "on dim 1: when dim 0 does not divide by the ranks, `RuntimeError: "
               "setStorage: ... out of bounds` on some ranks while the others wait; when "
               "it does, `IndexError: list index out of range` in the backward "
               "all-gather's copy-out on every rank "
               "(using/memory.md#reshard-after-forward-an-int): torch is not run",
               lambda c: _is(c, "reshard_after_forward", 2)
               and _is(c, "shard_placement", "dim1"),
               runs=False,
               # resharding to 2 ranks after forward changes what is held, not a number
               stand_in={"reshard_after_forward": True}, stand_in_skips=("layout",)),
)


def _reduces_in_fp16(case: dict[str, Any]) -> bool:
    """Gradients are reduced in float16 (``reduce_dtype``, else ``param_dtype``)."""
    return (case.get("reduce_dtype") or case.get("param_dtype")) == "float16"


def torch_limit(case: dict[str, Any]) -> TorchLimit | None:
    """The limit of torch that ``case`` meets, or None (torch is the truth)."""
    return next((limit for limit in TORCH_LIMITS if limit.applies(case)), None)
