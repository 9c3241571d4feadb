"""Issue 23 item 2: ``replicate`` on the FSDP machinery, and its composition with
``fully_shard``.

torch 2.13's ``torch.distributed._composable.replicate_with_fsdp.replicate`` keeps whole
parameters (``Replicate()`` DTensors) on every rank and all-reduces each group's
gradients after its backward. The scenarios train the same model replicated by torch, by
fsdp_ref, by ``DistributedDataParallel`` (``lib.replicate`` of the ``"ddp"``
implementation) and unsharded (``"plain"``), with and without mixed precision, and the
two compositions torch allows: ``fully_shard`` on the blocks under a replicated root, and
``replicate`` on the blocks under a sharded root.
"""

from __future__ import annotations

import torch
from torch.distributed.tensor import DTensor

from tests.conformance.harness import fit
from tests.fsdp.models import Stack


def _mesh(lib):
    return lib.mesh()


def _policy(lib, mp: bool) -> dict:
    if not mp:
        return {}
    return {"mp_policy": lib.MixedPrecisionPolicy(param_dtype=torch.bfloat16,
                                                  reduce_dtype=torch.float32)}


def _placements(model) -> dict[str, str]:
    return {name: str(p.placements) if isinstance(p, DTensor) else type(p).__name__
            for name, p in model.named_parameters()}


def replicated(lib, per_block: bool = True, mp: bool = False, steps: int = 3):
    """``replicate`` each block (one group each) then the root, or the root alone; SGD.
    Returns the losses, full parameters, placements and whether the module is an
    instance of the implementation's ``ReplicateModule`` and ``FSDPModule``."""
    mesh = _mesh(lib)
    model = Stack(dim=16, hidden=32, n_blocks=2, out=8)
    if per_block:
        for block in model.blocks:
            lib.replicate(block, mesh=mesh, **_policy(lib, mp))
    model = lib.replicate(model, mesh=mesh, **_policy(lib, mp))
    placements = _placements(model)
    kinds = (isinstance(model, lib.ReplicateModule), isinstance(model, lib.FSDPModule))
    return {**fit(lib, model, din=16, dout=8, steps=steps), "placements": placements,
            "kinds": kinds}


def composed(lib, root: str = "replicate", mp: bool = False, steps: int = 3):
    """The blocks given to one API and the root to the other: ``root="replicate"``
    (blocks sharded, the rest replicated) or ``root="fully_shard"`` (blocks replicated,
    the rest sharded). Returns losses, parameters, placements and class names."""
    mesh = _mesh(lib)
    model = Stack(dim=16, hidden=32, n_blocks=2, out=8)
    inner = lib.fully_shard if root == "replicate" else lib.replicate
    outer = lib.replicate if root == "replicate" else lib.fully_shard
    for block in model.blocks:
        inner(block, mesh=mesh, **_policy(lib, mp))
    outer(model, mesh=mesh, **_policy(lib, mp))
    classes = [type(m).__name__ for m in (model, *model.blocks)]
    placements = _placements(model)
    return {**fit(lib, model, din=16, dout=8, steps=steps), "placements": placements,
            "classes": classes}
