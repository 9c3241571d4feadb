"""fsdp_ref: a readable reference implementation of PyTorch's FSDP2 (``fully_shard``).

Drop-in usage: replace ``from torch.distributed.fsdp import fully_shard`` with
``from fsdp_ref import fully_shard``; names, signatures and semantics are the same::

    import torch, torch.distributed as dist
    from fsdp_ref import fully_shard

    dist.init_process_group("gloo")            # torchrun sets rank and world size
    model = Transformer()
    for block in model.blocks:
        fully_shard(block)                     # one communication group per block
    fully_shard(model)                         # the root takes what is left
    optim = torch.optim.AdamW(model.parameters())
    loss = model(tokens).sum(); loss.backward(); optim.step()

Code written for torch's FSDP2 runs unchanged after ``fsdp_ref.install()`` (call it before
importing the training framework): torch's ``fully_shard``, ``replicate`` and policy names
then point at fsdp_ref, and fsdp_ref's modules pass torch's ``isinstance(m, FSDPModule)``
checks either way (:mod:`fsdp_ref.compat`).

Modules, one concept each, from the entry point down to pure functions:

* :mod:`fsdp_ref.fully_shard`: the entry point: validation and grouping;
* :mod:`fsdp_ref.collect`: which parameters a call takes, in torch's order (children first);
* :mod:`fsdp_ref.replicate`: ``replicate``, data parallelism on the same machinery;
* :mod:`fsdp_ref.placement`: what ``shard_placement_fn`` may return, including a
  ``ShardPlacementResult`` that puts a parameter on a mesh of its own (one group per mesh);
* :mod:`fsdp_ref.compat`: torch's names and ``isinstance`` checks seeing fsdp_ref;
* :mod:`fsdp_ref.module`: the ``FSDPModule`` methods users call to drive a module
  (unshard, reshard, recovery, prefetch targets) and the functions around it;
* :mod:`fsdp_ref.module_settings`: its ``set_*`` methods of gradient synchronization,
  resharding and communication;
* :mod:`fsdp_ref.state`: when things happen: the module hooks, the root's lazy init, the
  end-of-backward callback and the end of an iteration;
* :mod:`fsdp_ref.iter_context`: what one root's iteration shares with every state under
  it;
* :mod:`fsdp_ref.agreement`: the check, at the root's lazy init, that every rank built
  the same model;
* :mod:`fsdp_ref.order`: the order groups run in, and which one to prefetch;
* :mod:`fsdp_ref.param_group`: one group's state machine (unshard, reshard, the hooks of
  forward and backward);
* :mod:`fsdp_ref.group_state`: the group's states, allowed transitions and settings;
* :mod:`fsdp_ref.autograd_nodes`: the two identity nodes through which backward reaches
  FSDP, before and after each module;
* :mod:`fsdp_ref.all_gather`: a group's all-gather: copy-in, collective, wait, copy-out,
  and the deferred free of its output;
* :mod:`fsdp_ref.reduce`: a group's reduction: reduce-scatter, HSDP all-reduce, division,
  gradient assignment, and the queue of reductions in flight;
* :mod:`fsdp_ref.division`: where a reduction divides by the data-parallel size (torch's
  rule: the same numbers, and what an all-reduce hook sees);
* :mod:`fsdp_ref.comm_context`: what the groups under one root share to communicate;
* :mod:`fsdp_ref.param`: one parameter's sharded and unsharded faces;
* :mod:`fsdp_ref.param_gather`: what one parameter puts into the all-gather and where
  the output goes;
* :mod:`fsdp_ref.param_grad`: one parameter's gradient, unsharded and sharded;
* :mod:`fsdp_ref.extensions`: the ``fsdp_pre_all_gather`` / ``fsdp_post_all_gather``
  contract of tensor subclasses (NF4, float8);
* :mod:`fsdp_ref.spmd`: the DTensor placements of tensor-parallel parameters, sharded
  and unsharded (FSDP on top of TP);
* :mod:`fsdp_ref.mesh`: reading a ``DeviceMesh`` (FSDP, HSDP, ``dp_mesh_dims``) and
  resolving ``reshard_after_forward``;
* :mod:`fsdp_ref.collectives`, :mod:`fsdp_ref.buffer_plan` and :mod:`fsdp_ref.layout`:
  the all-gather / reduce-scatter / all-reduce calls and the pure buffer and shard math
  around them;
* :mod:`fsdp_ref.streams`: streams, events and where device streams come from;
* :mod:`fsdp_ref.ordering`: what the host-ordered path (no device streams: gloo on CPU)
  does differently, in one place;
* :mod:`fsdp_ref.recorder`: the log of every stream operation that tests, figures and
  the race detector read;
* :mod:`fsdp_ref.api`: the policy dataclasses and communication hooks;
* :mod:`fsdp_ref.loading` and :mod:`fsdp_ref.staged_load`: all-or-nothing
  ``load_state_dict`` and DCP checkpoint loads, the ranks agreeing before anything is
  copied;
* :mod:`fsdp_ref.load_checks`: what a state dict entry must satisfy to load, checked on
  one rank, in torch's words and fsdp_ref's;
* :mod:`fsdp_ref.debug`: the debug mode that names mismatched and stalled collectives;
* :mod:`fsdp_ref.clean_exit`: the exit handler that lets gloo's threads finish first;
* :mod:`fsdp_ref.sanitizer`: a race detector that runs the GPU stream path on CPU and
  checks every tensor access (not imported by the package: ``from fsdp_ref.sanitizer
  import detect``).

Apart from the library: :mod:`fsdp_ref.examples` (a small GPT, the training demo, a
Mixture-of-Experts model with expert parallelism) and
:mod:`fsdp_ref.tools` (the memory simulator, the recorded timeline figure).
"""

from . import compat
from .api import (
    AllGather,
    Comm,
    CPUOffloadPolicy,
    DataParallelMeshDims,
    MixedPrecisionPolicy,
    OffloadPolicy,
    ReduceScatter,
)
from .debug import CollectiveMismatchError, CollectiveTimeoutError, set_debug
from .fully_shard import fully_shard
from .loading import StateDictLoadError
from .module import FSDPModule, UnshardHandle, register_fsdp_forward_method, share_comm_ctx
from .placement import ShardPlacementResult
from .replicate import ReplicateModule, replicate
from .staged_load import load_checkpoint_staged

__all__ = [
    "AllGather",
    "CPUOffloadPolicy",
    "CollectiveMismatchError",
    "CollectiveTimeoutError",
    "Comm",
    "DataParallelMeshDims",
    "FSDPModule",
    "MixedPrecisionPolicy",
    "OffloadPolicy",
    "ReduceScatter",
    "ReplicateModule",
    "ShardPlacementResult",
    "StateDictLoadError",
    "UnshardHandle",
    "fully_shard",
    "install",
    "installed",
    "load_checkpoint_staged",
    "register_fsdp_forward_method",
    "replicate",
    "set_debug",
    "share_comm_ctx",
    "uninstall",
]


def install() -> None:
    """Point torch's FSDP2 names at fsdp_ref, for code imported after this call.

    After ``fsdp_ref.install()``, ``from torch.distributed.fsdp import fully_shard`` (and the
    same names from ``torch.distributed._composable.fsdp``, and
    ``torch.distributed._composable.replicate_with_fsdp.replicate``) give fsdp_ref's
    functions and policy classes. A module that imported torch's names *before* the call
    keeps torch's objects, so call it first, before importing the training framework.
    Torch's ``FSDPModule`` and ``ReplicateModule`` stay torch's: fsdp_ref's modules are
    instances of them already. Calling it twice changes nothing. The torch side of the
    switch is :func:`fsdp_ref.compat.install`.
    """
    compat.install(_ours())


def uninstall() -> None:
    """Put back every torch name :func:`install` replaced (a no-op when not installed)."""
    compat.uninstall()


def installed():
    """``with fsdp_ref.installed(): ...``: torch's names point at fsdp_ref inside the block
    only (tests; a script that imports a framework in the block). Leaves an
    :func:`install` made before the block in place."""
    return compat.installed(_ours())


def _ours() -> dict:
    return {name: globals()[name] for name in compat.REDIRECTED if name in globals()}
