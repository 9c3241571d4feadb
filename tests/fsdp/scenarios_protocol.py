"""Scenarios that observe the communication protocol: collective counts per step.

Collective counts are taken by wrapping ``torch.distributed``'s collectives, so the same
scenario runs against upstream ``fully_shard`` (which proves the expected numbers) and
``fsdp_ref``.
"""

from __future__ import annotations

import contextlib
from collections import Counter

import torch
import torch.distributed as dist

from tests.collective_spy import KINDS, spy_on
from tests.fsdp.common import apply_fsdp, build_model, get_impl, global_batch, loss_fn, make_mesh

_WRAPPED = ("all_gather_single", "reduce_scatter_single", "all_reduce")


@contextlib.contextmanager
def count_collectives():
    """Count calls of the c10d collectives FSDP uses (by name) while the block runs."""
    counts: Counter = Counter()
    with spy_on(_WRAPPED, lambda name, args, kwargs: counts.update([name])):
        yield counts


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


def older_torch_collectives(rank, world_size):
    """As on torch 2.11, which has no ``all_gather_single`` / ``reduce_scatter_single``:
    training still matches the reference, through ``all_gather_into_tensor`` and
    ``reduce_scatter_tensor``. Returns the reference check and the calls of the old names."""
    import warnings

    from tests.fsdp.scenarios_parity import vs_reference

    new = {name: getattr(dist, name) for name in ("all_gather_single", "reduce_scatter_single")}
    old = {name: getattr(dist, name) for name in ("all_gather_into_tensor", "reduce_scatter_tensor")}
    calls: Counter = Counter()

    def counted(name):
        def call(*args, **kwargs):
            calls[name] += 1
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)  # deprecated in 2.13 only
                return old[name](*args, **kwargs)

        return call

    for name in new:
        delattr(dist, name)
    for name in old:
        setattr(dist, name, counted(name))
    try:
        report = vs_reference(rank, world_size, impl="fsdp_ref", steps=2)
    finally:
        for name, fn in {**new, **old}.items():
            setattr(dist, name, fn)
    return {"report": report, "calls": dict(calls)}


def prefetch_order(rank, world_size, impl, explicit: bool):
    """What prefetching changes, observed from outside either implementation, in the first
    iteration (before any implicit forward prefetch has an order to follow).

    With ``explicit``, every block prefetches the two blocks after it in forward and the
    two before it in backward (further than any implicit prefetch reaches), and the root
    the first two blocks in forward and the last one in backward. Returns how many
    all-gathers were issued when each block's forward started, and the sequence of
    collectives in backward (``"AG"`` / ``"RS"``)."""
    lib = get_impl(impl)
    model = build_model("stack", n_blocks=4)
    apply_fsdp(model, lib, make_mesh(world_size))
    blocks = list(model.blocks)
    if explicit:
        for i, block in enumerate(blocks):
            block.set_modules_to_forward_prefetch(blocks[i + 1 : i + 3])
            block.set_modules_to_backward_prefetch(blocks[max(0, i - 2) : i][::-1])
        model.set_modules_to_forward_prefetch(blocks[:2])
        model.set_modules_to_backward_prefetch(blocks[-1:])
    issued: list[str] = []
    at_forward = []
    for block in blocks:
        block.register_forward_pre_hook(lambda *_: at_forward.append(issued.count("AG")))
    issue_kinds = {name: kind for name, kind in KINDS.items() if kind != "AR"}
    with spy_on(issue_kinds, lambda name, args, kwargs: issued.append(issue_kinds[name])):
        loss = _step(model, "stack", 0, rank, world_size)
        n_forward = len(issued)
        loss.backward()
    return {"at_forward": at_forward, "backward": issued[n_forward:]}
