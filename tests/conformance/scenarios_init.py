"""Issue 23 item 5: meta-device initialisation after ``fully_shard``.

* A model built on the ``meta`` device is sharded, materialised with ``to_empty``,
  initialised, and then one parameter per block is *replaced*: a new ``nn.Parameter``
  computed from another weight (as DoRA computes its magnitude vector). torch adopts the
  replacement at its lazy init, so the new parameter is the one sharded and trained.
  A replacement that is not laid out like the sharded parameter (a plain tensor) is
  refused on every rank, and ranks that disagree on what is still on the meta device
  all raise instead of waiting for each other.
* Rank 0 alone holds a full state dict and DCP's ``set_model_state_dict(...,
  StateDictOptions(full_state_dict=True, broadcast_from_rank0=True))`` broadcasts it into a
  meta-initialised model whose parameters and buffers have every shape, 0-dim and
  1-element included (the 0-dim parameter is in ``ignored_params``: neither library shards
  scalars). A state dict with one wrong shape must change nothing, on any rank.
"""

from __future__ import annotations

import torch
import torch.nn as nn
from torch.distributed.tensor import DTensor, distribute_tensor

from tests.conformance.harness import fit, full
from tests.conformance.models import ScaledBlock, Shapes


def _fill(model: nn.Module) -> None:
    """Set every parameter and buffer from a generator seeded by its position: the same
    full values for every implementation, whatever the sharding."""
    tensors = [*model.parameters(), *model.buffers()]
    with torch.no_grad():
        for i, t in enumerate(tensors):
            values = torch.randn(t.shape, generator=torch.Generator().manual_seed(10 + i))
            if isinstance(t, DTensor):
                values = distribute_tensor(values, t.device_mesh, t.placements)
            t.copy_(values)


def meta_replaced_param(lib, steps: int = 2):
    """Build on meta, shard both blocks and the root, ``to_empty``, initialise, then give
    each block a new ``scale`` parameter: the row norms of its ``proj.weight``."""
    mesh = lib.mesh()
    with torch.device("meta"):
        model = nn.Sequential(ScaledBlock(8), ScaledBlock(8), nn.Linear(8, 4))
    blocks = list(model)[:2]
    for block in blocks:
        lib.fully_shard(block, mesh=mesh)
    lib.fully_shard(model, mesh=mesh)
    model.to_empty(device="cpu")
    _fill(model)
    for block in blocks:
        with torch.no_grad():
            block.scale = nn.Parameter(block.proj.weight.norm(dim=1))
    out = fit(lib, model, din=8, dout=4, steps=steps)
    out["scale_is_trained"] = [any(p is block.scale for p in model.parameters())
                               for block in blocks]
    return out


def adopted_then_parent_sharded(lib, steps: int = 2):
    """Shard the blocks, give each a new ``scale`` (a DTensor computed from its weight),
    let ``unshard()`` adopt it, and only then shard the root: the root must leave the
    adopted parameters to their blocks (fsdp_ref only: the truth is the plain model)."""
    model = nn.Sequential(ScaledBlock(8), ScaledBlock(8), nn.Linear(8, 4))
    _fill(model)
    blocks = list(model)[:2]
    for block in blocks:
        lib.fully_shard(block, mesh=lib.mesh())
        with torch.no_grad():
            block.scale = nn.Parameter(block.proj.weight.norm(dim=1))
        if lib.distributed:
            block.unshard()
            block.reshard()
    lib.fully_shard(model, mesh=lib.mesh())
    return fit(lib, model, din=8, dout=4, steps=steps)


def replaced_by_plain_tensor(lib):
    """A block's ``scale`` replaced by a plain (unsharded) parameter before the first
    forward: what the forward raises."""
    model = nn.Sequential(ScaledBlock(8), nn.Linear(8, 4))
    lib.fully_shard(model[0], mesh=lib.mesh())
    lib.fully_shard(model, mesh=lib.mesh())
    model[0].scale = nn.Parameter(torch.ones(8))
    model(torch.randn(2, 8))


def meta_on_some_ranks(lib):
    """Built on meta; only rank 0 materialises it before the first forward."""
    with torch.device("meta"):
        model = nn.Sequential(ScaledBlock(8), nn.Linear(8, 4))
    lib.fully_shard(model[0], mesh=lib.mesh())
    lib.fully_shard(model, mesh=lib.mesh())
    if lib.rank == 0:
        model.to_empty(device="cpu")
    model(torch.randn(2, 8))


def _state(model: nn.Module) -> dict[str, torch.Tensor]:
    tensors = {**dict(model.named_parameters()), **dict(model.named_buffers())}
    return {name: full(t).detach().clone() for name, t in tensors.items()}


def broadcast_load(lib, bad: bool = False):
    """Meta-initialise a sharded :class:`~tests.conformance.models.Shapes`, zero it, and
    broadcast rank 0's full state dict into it with DCP. Returns every parameter's and
    buffer's full value afterwards. ``bad``: the last buffer has the wrong shape; then the
    ``RuntimeError`` raised (its class name and message) and the values after it."""
    from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict

    mesh = lib.mesh()
    with torch.device("meta"):
        model = Shapes()
    lib.fully_shard(model, mesh=mesh, ignored_params={model.scalar})
    model.to_empty(device="cpu")
    with torch.no_grad():
        for t in [*model.parameters(), *model.buffers()]:
            t.zero_()
    source = Shapes()
    _fill(source)
    sd = {k: v.detach().clone() for k, v in source.state_dict().items()}
    if bad:
        sd["table"] = torch.zeros(3)
    options = StateDictOptions(full_state_dict=True, broadcast_from_rank0=True)
    try:
        set_model_state_dict(model, sd if lib.rank == 0 else {}, options=options)
    except RuntimeError as e:
        if not bad:
            raise
        return {"raised": type(e).__name__, "msg": str(e), "state": _state(model)}
    return _state(model)
