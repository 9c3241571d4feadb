"""Pieces shared by the reliability scenarios: a sharded ``Stack``, one training step on
this rank's slice of a deterministic batch, and a bit-exact snapshot of the shards."""

from __future__ import annotations

import torch.nn.functional as F

from tests.fsdp.common import apply_fsdp, build_model, get_impl, global_batch, make_mesh, rank_slice


def sharded_stack(impl: str, world_size: int, mesh=None, seed: int = 0, **fsdp_kwargs):
    """``Stack`` (3 blocks) sharded block by block, then the root, by ``impl``."""
    model = build_model("stack", seed=seed)
    mesh = mesh if mesh is not None else make_mesh(world_size)
    return apply_fsdp(model, get_impl(impl), mesh, **fsdp_kwargs)


def forward_backward(model, rank: int, world_size: int, step: int) -> None:
    """Forward and backward of step ``step`` on this rank's quarter-batch slice."""
    x, y = global_batch("stack", step, 4 * world_size)
    out = model(rank_slice(x, rank, world_size))
    F.mse_loss(out, rank_slice(y, rank, world_size)).backward()


def shard_bytes(model) -> dict[str, bytes]:
    """The bytes of this rank's local shard of every state-dict entry (picklable, and
    compared bit for bit)."""
    return {k: v.to_local().numpy().tobytes() for k, v in model.state_dict().items()}
