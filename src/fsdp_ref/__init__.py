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

Modules, one concept each:

* :mod:`fsdp_ref.fully_shard`: the entry point: validation and grouping;
* :mod:`fsdp_ref.replicate`: ``replicate``, data parallelism on the same machinery;
* :mod:`fsdp_ref.placement`: what ``shard_placement_fn`` may return;
* :mod:`fsdp_ref.compat`: torch's names and ``isinstance`` checks seeing fsdp_ref;
* :mod:`fsdp_ref.param`: one parameter's sharded and unsharded faces;
* :mod:`fsdp_ref.param_group`: one group's unshard / reshard / reduce transitions;
* :mod:`fsdp_ref.state`: hooks, the root, and the end-of-backward callback;
* :mod:`fsdp_ref.collectives` and :mod:`fsdp_ref.layout`: pure buffer math and the
  all-gather / reduce-scatter / all-reduce calls;
* :mod:`fsdp_ref.streams`: streams, events, where device streams come from, and the
  recorder that logs their ordering;
* :mod:`fsdp_ref.mesh`: reading a ``DeviceMesh`` (FSDP, HSDP, ``dp_mesh_dims``);
* :mod:`fsdp_ref.spmd`: the DTensor placements of tensor-parallel parameters, sharded
  and unsharded (FSDP on top of TP);
* :mod:`fsdp_ref.module`: the ``FSDPModule`` methods;
* :mod:`fsdp_ref.api`: the policy dataclasses;
* :mod:`fsdp_ref.loading` and :mod:`fsdp_ref.staged_load`: all-or-nothing
  ``load_state_dict`` and DCP checkpoint loads;
* :mod:`fsdp_ref.debug`: the debug mode that names mismatched and stalled collectives;
* :mod:`fsdp_ref.clean_exit`: the exit handler that lets gloo's threads finish first;
* :mod:`fsdp_ref.sanitizer`: a race detector that runs the GPU stream path on CPU and
  checks every tensor access (not imported by the package: ``from fsdp_ref.sanitizer
  import detect``).

Apart from the library: :mod:`fsdp_ref.examples` (a small GPT, the training demo) and
:mod:`fsdp_ref.tools` (the memory simulator, the recorded timeline figure).
"""

from .api import (
    AllGather,
    Comm,
    CPUOffloadPolicy,
    DataParallelMeshDims,
    MixedPrecisionPolicy,
    OffloadPolicy,
    ReduceScatter,
)
from .compat import install, installed, uninstall
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
