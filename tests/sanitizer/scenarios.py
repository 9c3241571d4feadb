"""Scenarios run under the race detector, on every rank, by the harness.

* :func:`under_detector` runs any existing scenario (the parity ones) inside ``detect()``.
* :func:`protocol` runs one of the small training runs in :data:`SCENARIOS`, each built
  to exercise a part of the stream protocol, optionally with one *mutation* applied: a
  wait removed (by its site name) or a deferred free moved earlier. The mutation tests
  expect the detector to report a race then, and nothing without the mutation.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import torch
import torch.nn as nn

from tests.dist_harness import _resolve
from tests.fsdp.common import apply_fsdp, build_model, get_impl, global_batch, loss_fn, rank_slice

# ---- running under the detector ------------------------------------------------------------


def _races(detector) -> dict[str, Any]:
    races = detector.races
    return {"races": [r.summary() for r in races], "reports": [str(r) for r in races[:3]]}


def under_detector(
    rank: int, world_size: int, target: str, gpu_path: bool = True, **kwargs: Any
) -> dict[str, Any]:
    """Run the scenario ``target`` inside ``detect()``; its result and the races found."""
    from fsdp_ref.sanitizer import detect

    with detect(gpu_path=gpu_path, raise_on_race=False) as detector:
        result = _resolve(target)(rank, world_size, **kwargs)
    return {"result": result, **_races(detector)}


def protocol(
    rank: int, world_size: int, scenario: str, gpu_path: bool = True, mutation: str | None = None
) -> dict[str, Any]:
    """Run ``SCENARIOS[scenario]`` under the detector, with ``mutation`` applied.

    Returns the races and ``mutated``: how many times the mutation took effect (a
    mutation that never ran proves nothing).
    """
    from fsdp_ref.sanitizer import detect

    with _mutated(mutation) as hits, detect(gpu_path=gpu_path, raise_on_race=False) as det:
        SCENARIOS[scenario](rank, world_size, det)
    return {"mutated": len(hits), **_races(det)}


# ---- the scenarios -------------------------------------------------------------------------


def _model(world_size: int, mesh=None, **fsdp_kwargs: Any) -> nn.Module:
    fsdp = get_impl("fsdp_ref")
    model = build_model("stack", n_blocks=3)
    if mesh is None:
        mesh = _mesh(world_size)
    if fsdp_kwargs:
        for block in model.blocks:
            fsdp.fully_shard(block, mesh=mesh, **fsdp_kwargs)
        fsdp.fully_shard(model, mesh=mesh, **fsdp_kwargs)
    else:
        apply_fsdp(model, fsdp, mesh)
    return model


def _mesh(world_size: int, hsdp: bool = False):
    from torch.distributed.device_mesh import init_device_mesh

    if hsdp:
        return init_device_mesh("cpu", (2, world_size // 2), mesh_dim_names=("rep", "shard"))
    return init_device_mesh("cpu", (world_size,))


def _loss(model, step: int, rank: int, world_size: int) -> torch.Tensor:
    x, y = global_batch("stack", step, 2 * world_size)
    return loss_fn("stack", model(rank_slice(x, rank, world_size)), rank_slice(y, rank, world_size))


def _train(model, rank, world_size, steps, after_step: Callable[[int], None] | None = None):
    optim = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(steps):
        _loss(model, step, rank, world_size).backward()
        optim.step()
        optim.zero_grad()
        if after_step is not None:
            after_step(step)


def default(rank, world_size, detector) -> None:
    """Three blocks and the root, default settings, three steps of SGD."""
    _train(_model(world_size), rank, world_size, 3)


def post_optim(rank, world_size, detector) -> None:
    """The next forward's all-gathers wait for a post-optimizer event, not compute."""
    model = _model(world_size)
    _train(model, rank, world_size, 3,
           lambda _: model.set_post_optim_event(detector.current_stream().record_event()))


def user_unshard(rank, world_size, detector) -> None:
    """After each optimizer step the user unshards the root and the first block
    (``async_op=True``), waits for one handle and lets forward wait for the other."""
    model = _model(world_size)

    def unshard(_step: int) -> None:
        handle = model.unshard(async_op=True)
        model.blocks[0].unshard(async_op=True)
        handle.wait()

    _train(model, rank, world_size, 3, unshard)


def int_reshard(rank, world_size, detector) -> None:
    """``reshard_after_forward=2`` on 4 ranks: the backward all-gather reads post-forward
    shards kept over groups of two ranks."""
    _train(_model(world_size, reshard_after_forward=2), rank, world_size, 2)


def hsdp(rank, world_size, detector) -> None:
    """HSDP on a (2, 2) mesh: reduce-scatter, then all-reduce across replicas."""
    _train(_model(world_size, mesh=_mesh(world_size, hsdp=True)), rank, world_size, 2)


def hsdp_accum(rank, world_size, detector) -> None:
    """HSDP, two microbatches: ``set_requires_all_reduce(False)`` on the first (partial
    sums kept), ``True`` on the second."""
    model = _model(world_size, mesh=_mesh(world_size, hsdp=True))
    optim = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(2):
        for micro in range(2):
            model.set_requires_all_reduce(micro == 1)
            _loss(model, 2 * step + micro, rank, world_size).backward()
        optim.step()
        optim.zero_grad()


def hook_stream(rank, world_size, detector) -> None:
    """Plain FSDP with an all-reduce hook that scales each reduced gradient shard in
    place, on a stream of the user's own (``set_all_reduce_hook(hook, stream=...)``)."""
    model = _model(world_size)
    stream = detector.device.new_stream("user_hook")
    for module in (*model.blocks, model):
        module.set_all_reduce_hook(lambda shard: shard.mul_(1.0), stream=stream)
    _train(model, rank, world_size, 2)


def offload(rank, world_size, detector) -> None:
    """``CPUOffloadPolicy``: shards and gradients in host memory, the optimizer on the host."""
    from fsdp_ref import CPUOffloadPolicy

    model = _model(world_size, offload_policy=CPUOffloadPolicy(pin_memory=False))
    _train(model, rank, world_size, 3)


def offload_accum(rank, world_size, detector) -> None:
    """CPU offload, two backwards per optimizer step: the second reduction accumulates
    into the host gradient left by the first."""
    from fsdp_ref import CPUOffloadPolicy

    model = _model(world_size, offload_policy=CPUOffloadPolicy(pin_memory=False))
    optim = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(2):
        for micro in range(2):
            _loss(model, 2 * step + micro, rank, world_size).backward()
        optim.step()
        optim.zero_grad()


def reset_forward(rank, world_size, detector) -> None:
    """An exception in a block's forward while the next block's all-gather is in flight
    (implicit prefetch, from the second step on); ``reset_iter_state()``, train on."""
    model = _model(world_size)
    optim = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        if step == 1:
            model.blocks[1].fail_next = True
            with contextlib.suppress(RuntimeError):
                _loss(model, step, rank, world_size)
            model.reset_iter_state()
        _loss(model, step, rank, world_size).backward()
        optim.step()
        optim.zero_grad()


class _RaiseInBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("injected failure in backward")


def reset_backward(rank, world_size, detector) -> None:
    """An exception in backward after later blocks launched their reduce-scatters;
    ``reset_iter_state()``, train on."""
    model = _model(world_size)
    fail = {"now": False}
    model.blocks[0].register_forward_hook(
        lambda _m, _i, out: _RaiseInBackward.apply(out) if fail["now"] else out
    )
    optim = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        if step == 1:
            fail["now"] = True
            with contextlib.suppress(RuntimeError):
                _loss(model, step, rank, world_size).backward()
            fail["now"] = False
            model.reset_iter_state()
            optim.zero_grad()
        _loss(model, step, rank, world_size).backward()
        optim.step()
        optim.zero_grad()


SCENARIOS: dict[str, Callable[[int, int, Any], None]] = {
    fn.__name__: fn
    for fn in (default, post_optim, user_unshard, int_reshard, hsdp, hsdp_accum, hook_stream,
               offload, offload_accum, reset_forward, reset_backward)
}

# ---- mutations -----------------------------------------------------------------------------


@contextlib.contextmanager
def _mutated(mutation: str | None) -> Iterator[list[str]]:
    """Apply ``mutation`` (a wait's site name, or ``free:<buffer>``) while the block runs;
    yields the list of times it took effect."""
    hits: list[str] = []
    if mutation is None:
        yield hits
        return
    if mutation.startswith("free:"):
        patches = EARLY_FREES[mutation.removeprefix("free:")](hits)
    else:
        patches = _without_wait(mutation, hits)
    with contextlib.ExitStack() as stack:
        for owner, name, replacement in patches:
            stack.enter_context(_patched(owner, name, replacement))
        yield hits


@contextlib.contextmanager
def _patched(owner: Any, name: str, value: Any) -> Iterator[None]:
    original = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, original)


def _without_wait(site: str, hits: list[str]) -> list[tuple[Any, str, Any]]:
    """Drop the wait whose site name is ``site``; everything else waits as before.

    A dropped ``wait_work`` still blocks the host on the real ``Work`` (gloo's data must
    arrive for the run to go on), but the detector is not told: only the ordering is gone.
    """
    import sys

    from fsdp_ref import streams

    Stream, Event = streams.Stream, streams.Event
    wait_event, wait_stream, synchronize, wait_work = (
        Stream.wait_event, Stream.wait_stream, Event.synchronize, streams.wait_work
    )

    def skip(name: str) -> bool:
        if name == site:
            hits.append(name)
            return True
        return False

    def wait_event_(self, event, name, group=""):
        if not skip(name):
            wait_event(self, event, name, group)

    def wait_stream_(self, other, name):
        if not skip(name):
            wait_stream(self, other, name)

    def synchronize_(self, name, group=""):
        if not skip(name):
            synchronize(self, name, group)

    def wait_work_(work, stream, name, group=""):
        if skip(name):
            getattr(work, "_work", work).wait()
        else:
            wait_work(work, stream, name, group)

    importers = [m for name, m in sys.modules.items()
                 if name.startswith("fsdp_ref") and getattr(m, "wait_work", None) is wait_work]
    return [(Stream, "wait_event", wait_event_), (Stream, "wait_stream", wait_stream_),
            (Event, "synchronize", synchronize_)] + [
        (module, "wait_work", wait_work_) for module in importers
    ]


def _free_all_gather_output_early(hits):
    """The all-gather output is dropped right after its copy-out, with no wait."""
    from fsdp_ref.all_gather import DeferredOutput

    def hold(self, out, copied, group, streams):
        hits.append("all_gather_output")
        self.release(streams)  # the previous one, as before; this one is dropped

    return [(DeferredOutput, "hold", hold)]


def _free_reduce_scatter_input_early(hits):
    """The reduce-scatter input is dropped right after the collective is issued."""
    from fsdp_ref.param_group import FSDPParamGroup

    post_backward = FSDPParamGroup.post_backward

    def early(self):
        post_backward(self)
        pending = self.comm_ctx.reductions.pending
        if pending and pending[-1].reducer is self.reducer and pending[-1].rs_input is not None:
            hits.append("reduce_scatter_input")
            pending[-1].rs_input = None

    return [(FSDPParamGroup, "post_backward", early)]


def _free_post_forward_shard_early(hits):
    """The post-forward shards are dropped right after the copy-in that reads them (and
    the parameter the module shows meanwhile, a view of them, is unregistered)."""
    from fsdp_ref.param_group import FSDPParamGroup

    unshard = FSDPParamGroup.unshard

    def early(self, async_op=False):
        unshard(self, async_op)
        for p in self.fsdp_params:
            if p.post_forward_shard is not None:
                hits.append("post_forward_shard")
                p.post_forward_shard = None
                p._register(p.sharded_param)

    return [(FSDPParamGroup, "unshard", early)]


EARLY_FREES = {
    "all_gather_output": _free_all_gather_output_early,
    "reduce_scatter_input": _free_reduce_scatter_input_early,
    "post_forward_shard": _free_post_forward_shard_early,
}


def unshard_async_setting(rank: int, world_size: int, enable: bool) -> dict[str, Any]:
    """Two steps on the GPU path with ``_set_unshard_async_op(enable)`` on every module:
    the races, and how many all-gathers were waited on through their ``Work``."""
    from fsdp_ref import FSDPModule
    from fsdp_ref.recorder import record
    from fsdp_ref.sanitizer import detect

    with detect(raise_on_race=False) as det:
        model = _model(world_size)
        for module in model.modules():
            if isinstance(module, FSDPModule):
                module._set_unshard_async_op(enable)
        with record() as events:
            _train(model, rank, world_size, 2)
            waits = sum(e.kind == "wait_work" and e.detail == "all_gather_work" for e in events)
    return {"work_waits": waits, **_races(det)}
