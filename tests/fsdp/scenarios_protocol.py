"""Scenarios that observe the communication protocol: collective counts and stream order.

Collective counts are taken by wrapping ``torch.distributed``'s collectives, so the same
scenario runs against upstream ``fully_shard`` (which proves the expected numbers) and
``fsdp_ref``. Stream/event order is read from ``fsdp_ref.streams.record()``.
"""

from __future__ import annotations

import contextlib
from collections import Counter

import torch
import torch.distributed as dist

from tests.fsdp.common import apply_fsdp, build_model, get_impl, global_batch, loss_fn, make_mesh

_WRAPPED = ("all_gather_single", "reduce_scatter_single", "all_reduce")


@contextlib.contextmanager
def count_collectives():
    """Count calls of the c10d collectives FSDP uses (by name) while the block runs."""
    counts: Counter = Counter()
    originals = {name: getattr(dist, name) for name in _WRAPPED}

    def wrap(name):
        def counted(*args, **kwargs):
            counts[name] += 1
            return originals[name](*args, **kwargs)

        return counted

    for name in _WRAPPED:
        setattr(dist, name, wrap(name))
    try:
        yield counts
    finally:
        for name, fn in originals.items():
            setattr(dist, name, fn)


def _step(model, kind, step, rank, world_size):
    x, y = global_batch(kind, step, 2 * world_size)
    x, y = x[2 * rank : 2 * rank + 2], y[2 * rank : 2 * rank + 2]
    return loss_fn(kind, model(x), y)


def collective_counts(rank, world_size, impl, reshard_after_forward=None, n_blocks=3):
    """All-gathers and reduce-scatters of one training step, split forward/backward."""
    lib = get_impl(impl)
    model = build_model("stack", n_blocks=n_blocks)
    apply_fsdp(model, lib, make_mesh(world_size), reshard_after_forward=reshard_after_forward)
    optim = torch.optim.SGD(model.parameters(), lr=0.1)
    # Warm-up step: lazy init is not part of the steady state.
    _step(model, "stack", 0, rank, world_size).backward()
    optim.step()
    optim.zero_grad()
    with count_collectives() as fwd:
        loss = _step(model, "stack", 1, rank, world_size)
    with count_collectives() as bwd:
        loss.backward()
    optim.step()
    return {"forward": dict(fwd), "backward": dict(bwd)}


def protocol_trace(rank, world_size, reshard_after_forward=None, prefetch=False, steps=2):
    """The recorder's events for ``steps`` training steps of a 3-block stack (fsdp_ref).

    An ``optim_step`` marker is logged on the compute stream after each optimizer step.
    Returns plain tuples so the parent can check the invariants.
    """
    import fsdp_ref
    from fsdp_ref.streams import record, recorder

    model = build_model("stack", n_blocks=3)
    apply_fsdp(
        model,
        get_impl("fsdp_ref"),
        make_mesh(world_size),
        reshard_after_forward=reshard_after_forward,
    )
    if prefetch:
        blocks = list(model.blocks)
        for i, block in enumerate(blocks[:-1]):
            block.set_modules_to_forward_prefetch([blocks[i + 1]])
        for i, block in enumerate(blocks[1:], start=1):
            block.set_modules_to_backward_prefetch([blocks[i - 1]])
    optim = torch.optim.SGD(model.parameters(), lr=0.1)
    with record() as events:
        for step in range(steps):
            _step(model, "stack", step, rank, world_size).backward()
            optim.step()
            recorder.log("optim_step", "compute")
            optim.zero_grad()
        trace = [(e.kind, e.stream, e.detail, e.group, e.event_id) for e in events]
    unsharded_left = [
        p.fqn
        for m in model.modules()
        if isinstance(m, fsdp_ref.FSDPModule)
        for p in m._get_fsdp_state().group.fsdp_params
        if p.is_unsharded_allocated
    ]
    return {"trace": trace, "unsharded_left": unsharded_left}
