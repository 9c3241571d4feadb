"""Debug-mode scenarios (run on every rank): ranks that diverge or stall.

Each returns, per rank, the exception a step raised (:func:`exc_info`) and how long the
step took, so the tests can check that every rank got a named error within the watchdog
timeout. Debug mode is switched on and off inside the scenario (every rank does it at the
same point), so the pool's other tests run without it.
"""

from __future__ import annotations

import time
import types
from typing import Any

import torch

from tests.fsdp.common import exc_info, run_with
from tests.reliability.common import forward_backward, shard_bytes, sharded_stack


def _step(model, opt, rank: int, world_size: int, step: int) -> None:
    forward_backward(model, rank, world_size, step)
    opt.step()
    opt.zero_grad()


def _timed(fn) -> dict[str, Any]:
    start = time.monotonic()
    _, err = run_with(fn)
    return {"err": exc_info(err), "elapsed": time.monotonic() - start}


def _debug(enabled: bool, watchdog_s: float | None = None) -> None:
    from fsdp_ref import set_debug

    set_debug(enabled, watchdog_s)


def one_rank_raises(rank, world_size, watchdog_s, then):
    """The last rank's block 1 raises in forward at step 1. ``then="stop"``: that rank
    does nothing more (as if it exited). ``then="continue"``: it catches the exception,
    calls ``reset_iter_state()`` and goes on to the next step, out of step with the rest."""
    _debug(True, watchdog_s)
    try:
        model = sharded_stack("fsdp_ref", world_size)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        _step(model, opt, rank, world_size, 0)
        failing = rank == world_size - 1
        if failing:
            model.blocks[1].fail_next = True
        result = _timed(lambda: _step(model, opt, rank, world_size, 1))
        if failing and then == "continue":
            model.reset_iter_state()
            result["next"] = _timed(lambda: _step(model, opt, rank, world_size, 2))
        return result
    finally:
        _debug(False)


def _reversed_forward(self, x):
    h = self.in_proj(x)
    for block in reversed(self.blocks):
        h = block(h)
    return self.out_proj(h)


def different_models(rank, world_size, impl, debug, watchdog_s=10.0):
    """The last rank's model runs its (identically shaped) blocks in reverse order."""
    _debug(debug, watchdog_s)
    try:
        model = sharded_stack(impl, world_size)
        if rank == world_size - 1:
            model.forward = types.MethodType(_reversed_forward, model)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        return _timed(lambda: _step(model, opt, rank, world_size, 0))
    finally:
        _debug(False)


def different_reshard(rank, world_size, watchdog_s=10.0):
    """The last rank keeps its blocks unsharded after forward, the others reshard: the
    backward runs all-gathers on some ranks only."""
    _debug(True, watchdog_s)
    try:
        keep = rank == world_size - 1
        model = sharded_stack("fsdp_ref", world_size, reshard_after_forward=not keep)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        return _timed(lambda: _step(model, opt, rank, world_size, 0))
    finally:
        _debug(False)


def stalled_peer(rank, world_size, watchdog_s, stall_s):
    """At step 1 the last rank sleeps ``stall_s`` before its forward."""
    _debug(True, watchdog_s)
    try:
        model = sharded_stack("fsdp_ref", world_size)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        _step(model, opt, rank, world_size, 0)

        def step():
            if rank == world_size - 1:
                time.sleep(stall_s)
            _step(model, opt, rank, world_size, 1)

        return _timed(step)
    finally:
        _debug(False)


def clean_training(rank, world_size, debug, hsdp=False, steps=3):
    """A correct program: debug mode must raise nothing and change no number. Returns
    the bytes of this rank's local shards after ``steps`` steps (HSDP: a (2, world/2)
    mesh)."""
    from torch.distributed.device_mesh import init_device_mesh

    _debug(debug, 30.0)
    try:
        mesh = (init_device_mesh("cpu", (2, world_size // 2), mesh_dim_names=("rep", "shard"))
                if hsdp else None)
        model = sharded_stack("fsdp_ref", world_size, mesh=mesh)
        opt = torch.optim.AdamW(model.parameters(), lr=0.01)
        for step in range(steps):
            _step(model, opt, rank, world_size, step)
        return shard_bytes(model)
    finally:
        _debug(False)


def explicit_phase(rank, world_size):
    """``before_collective`` called directly with a phase that differs across ranks (the
    core may pass its groups' training state)."""
    import torch.distributed as dist

    from fsdp_ref.debug import before_collective

    _debug(True, 10.0)
    try:
        phase = "pre_backward" if rank == 0 else "forward"
        t = torch.zeros(4)
        return _timed(lambda: before_collective("all_gather", dist.group.WORLD, "blocks.0", t,
                                                phase=phase))
    finally:
        _debug(False)
