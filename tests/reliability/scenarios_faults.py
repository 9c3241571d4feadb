"""Fault scenarios for the reliability page's table (run on every rank, both impls).

``backward_exception``: every rank raises in the middle of a backward (after the later
blocks' reduce-scatters were launched, before the earlier blocks' backward), calls
``reset_iter_state()`` and ``zero_grad()``, redoes the step and trains on. The result is
compared bit for bit with an uninterrupted run of the same steps.
"""

from __future__ import annotations

from typing import Any

import torch

from tests.fsdp.common import exc_info
from tests.reliability.common import forward_backward, shard_bytes, sharded_stack


def _train(impl: str, rank: int, world_size: int, steps: int, fail_at: int | None):
    model = sharded_stack(impl, world_size)
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)
    caught: list[Any] = []
    for step in range(steps):
        if step == fail_at:
            handle = model.blocks[1].register_forward_hook(_raise_in_backward)
            try:
                forward_backward(model, rank, world_size, step)
            except RuntimeError as e:
                caught.append(exc_info(e))
            handle.remove()
            model.reset_iter_state()
            opt.zero_grad(set_to_none=True)
        forward_backward(model, rank, world_size, step)
        opt.step()
        opt.zero_grad(set_to_none=True)
    return shard_bytes(model), caught


def _raise_in_backward(module, args, output):
    def fail(grad):
        raise RuntimeError("injected failure in backward")

    output.register_hook(fail)


def backward_exception(rank, world_size, impl, steps=4, fail_at=1):
    """Returns the keys whose shard differs from the clean run's, and what was caught."""
    clean, _ = _train(impl, rank, world_size, steps, None)
    recovered, caught = _train(impl, rank, world_size, steps, fail_at)
    return {
        "differ": sorted(k for k in clean if clean[k] != recovered[k]),
        "n_keys": len(clean),
        "caught": caught,
    }
