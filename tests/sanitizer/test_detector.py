"""The race detector on small programs written against fsdp_ref's stream wrappers.

Each test states an ordering fact of the GPU model and checks the detector both ways:
the racy program is reported, the same program with the right wait is not.
"""

from __future__ import annotations

import contextlib

import pytest
import torch
import torch.distributed as dist

from fsdp_ref import streams
from fsdp_ref.recorder import recorder
from fsdp_ref.sanitizer import RaceDetected, detect
from fsdp_ref.streams import CommStreams


@contextlib.contextmanager
def session(**kwargs):
    """A detector and a comm context on its virtual streams."""
    with detect(raise_on_race=False, **kwargs) as det:
        ctx = CommStreams()
        ctx.lazy_init(torch.device("cpu"))
        yield det, ctx


def summaries(det) -> list[str]:
    return [r.summary() for r in det.races]


@pytest.mark.parametrize("wait", [False, True])
def test_read_after_a_side_stream_write_needs_an_event_wait(wait):
    with session() as (det, ctx):
        x = torch.ones(8)
        ctx.all_gather.wait_stream(ctx.current(), "setup")
        with ctx.all_gather.use():
            y = x * 2
            done = ctx.all_gather.record_event()
        if wait:
            ctx.current().wait_event(done, "test")
        _ = y + 1
    assert len(det.races) == (0 if wait else 1)
    if not wait:
        race = det.races[0]
        assert (race.kind, race.current.stream, race.previous.stream) == (
            "unordered", "compute", "all_gather")
        assert (race.current.kind, race.previous.kind) == ("read", "write")


@pytest.mark.parametrize("wait", [False, True])
def test_write_after_read_on_another_stream(wait):
    """A side stream overwrites a buffer compute reads: the write must wait for the read."""
    with session() as (det, ctx):
        x = torch.ones(8)
        _ = x.sum()
        if wait:
            ctx.reduce_scatter.wait_stream(ctx.current(), "test")
        with ctx.reduce_scatter.use():
            x.mul_(3)
    assert [r.current.kind for r in det.races] == ([] if wait else ["write"])


def test_ordering_is_transitive_through_events():
    with session() as (det, ctx):
        x = torch.ones(8)
        ctx.all_gather_copy_in.wait_stream(ctx.current(), "a")
        with ctx.all_gather_copy_in.use():
            x.add_(1)
            e1 = ctx.all_gather_copy_in.record_event()
        ctx.all_gather.wait_event(e1, "b")
        with ctx.all_gather.use():
            e2 = ctx.all_gather.record_event()
        ctx.current().wait_event(e2, "c")
        _ = x * 2  # ordered after the copy-in's write through the all-gather stream
    assert det.races == []


def test_a_view_is_the_same_memory():
    with session() as (det, ctx):
        base = torch.zeros(4, 4)
        ctx.all_gather.wait_stream(ctx.current(), "setup")
        with ctx.all_gather.use():
            base[2:].fill_(1.0)
        _ = base[:1].sum()  # another view of the same storage, read on compute
    assert len(det.races) == 1


@pytest.mark.parametrize("wait", [False, True])
def test_use_after_free_is_reported_at_the_streams_next_allocation(wait):
    """Memory freed back to the copy-in stream's pool while compute still reads it."""
    with session() as (det, ctx):
        compute = ctx.current()
        with ctx.all_gather_copy_in.use():
            buf = torch.ones(1024)
            ready = ctx.all_gather_copy_in.record_event()
        compute.wait_event(ready, "read")
        _ = buf.sum()
        read_done = compute.record_event()
        del buf
        if wait:
            ctx.all_gather_copy_in.wait_event(read_done, "free")
        with ctx.all_gather_copy_in.use():
            _next = torch.zeros(1024)
    assert [r.kind for r in det.races] == ([] if wait else ["reuse"])
    if not wait:
        race = det.races[0]
        assert (race.current.kind, race.current.stream) == ("allocation", "all_gather_copy_in")
        assert (race.previous.kind, race.previous.stream) == ("read", "compute")


def test_memory_used_on_one_stream_only_is_never_a_reuse_race():
    with session() as (det, ctx):
        with ctx.all_gather_copy_in.use():
            buf = torch.ones(1024)
            _ = buf * 2
            del buf
            _next = torch.zeros(1024)
    assert det.races == []


@pytest.mark.parametrize("wait", [False, True])
def test_storage_resize_to_zero_frees(wait):
    """``untyped_storage().resize_(0)`` (how FSDP frees unsharded parameters) returns the
    memory to its stream's pool, like dropping the last reference."""
    with session() as (det, ctx):
        full = torch.ones(512)
        ctx.reduce_scatter.wait_stream(ctx.current(), "setup")
        with ctx.reduce_scatter.use():
            _ = full.sum()
            done = ctx.reduce_scatter.record_event()
        if wait:
            ctx.current().wait_event(done, "test")
        full.untyped_storage().resize_(0)
        _ = torch.empty(512)
    assert [r.kind for r in det.races] == ([] if wait else ["reuse"])


@pytest.mark.parametrize("synchronize", [False, True])
def test_host_memory_is_read_by_the_host_after_a_synchronize(synchronize):
    """CPU offload: a device-to-host copy on a side stream, then an optimizer-like op on
    host memory runs on the host, which must first synchronize with the copy."""
    with session() as (det, ctx):
        grad = torch.ones(16)
        host_param = torch.zeros(16)
        recorder.name_buffer(host_param, "sharded w", host=True)
        ctx.reduce_scatter.wait_stream(ctx.current(), "setup")
        with ctx.reduce_scatter.use():
            host_grad = grad.to(torch.float32, copy=True)
            recorder.name_buffer(host_grad, "grad of w", host=True)
            done = ctx.reduce_scatter.record_event()
        ctx.current().wait_event(done, "not enough: compute is not the host")
        if synchronize:
            done.synchronize("test")
        host_param.add_(host_grad)
    assert [(r.current.stream, r.tensor.split(" (")[0]) for r in det.races] == (
        [] if synchronize else [("host", "grad of w")]
    )


@pytest.mark.parametrize("wait", [False, True])
def test_item_reads_on_the_current_stream_then_the_host_waits_for_it(wait):
    with session() as (det, ctx):
        x = torch.ones(1)
        host = torch.zeros(1)
        recorder.name_buffer(host, "host buffer", host=True)
        ctx.all_gather.wait_stream(ctx.current(), "setup")
        with ctx.all_gather.use():
            x.mul_(2)
            done = ctx.all_gather.record_event()
        if wait:
            ctx.current().wait_event(done, "test")
        value = x.item()  # reads x on compute; then the host waits for compute
        host.add_(value)
        with ctx.all_gather.use():
            _ = host * 2  # issued after the host op finished: ordered
    assert [(r.current.operator, r.current.stream) for r in det.races] == (
        [] if wait else [("aten::_local_scalar_dense", "compute")]
    )


def test_dtensor_ops_are_checked_on_their_local_tensors(gloo_world):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Shard, distribute_tensor

    mesh = init_device_mesh("cpu", (1,))
    with session() as (det, ctx):
        dt = distribute_tensor(torch.ones(4, 4), mesh, [Shard(0)])
        ctx.all_gather.wait_stream(ctx.current(), "setup")
        with ctx.all_gather.use():
            dt._local_tensor.add_(1)
        _ = dt * 2  # DTensor's own dispatch; the multiply of its local tensor is seen
    assert len(det.races) == 1
    assert det.races[0].current.operator.startswith("aten::mul")


@pytest.mark.parametrize("wait", [False, True])
def test_async_collective_output_needs_work_wait(gloo_world, wait):
    with session() as (det, ctx):
        t = torch.ones(4)
        work = dist.all_reduce(t, async_op=True)
        if wait:
            streams.wait_work(work, ctx.current(), "test")
        else:
            work._work.wait()  # the host waits, but no stream is told: the CPU model's race
        _ = t + 1
    assert len(det.races) == (0 if wait else 1)


def test_report_names_both_accesses_the_buffer_the_step_and_the_code():
    with session() as (det, ctx):
        x = torch.ones(8)
        ctx.all_gather.wait_stream(ctx.current(), "setup")
        with ctx.all_gather.use():
            recorder.log("collective", "all_gather", "all_gather", "blocks.3")
            out = x * 2
            recorder.name_buffer(out, "all-gather buffer", "blocks.3")
        recorder.log("copy_out", "compute", "unsharded_params", "blocks.3")
        _ = out + 1
    (race,) = det.races
    text = str(race)
    for expected in ("all-gather buffer of group blocks.3", "aten::add.Tensor",
                     "aten::mul.Tensor", "stream compute", "stream all_gather",
                     "copy_out unsharded_params (blocks.3)",
                     "collective all_gather (blocks.3)", "test_detector.py"):
        assert expected in text, f"{expected!r} missing from\n{text}"


def test_leaving_the_block_raises_with_every_race():
    with pytest.raises(RaceDetected) as info, detect() as _det:
        ctx = CommStreams()
        ctx.lazy_init(torch.device("cpu"))
        y = torch.ones(4)
        ctx.all_gather.wait_stream(ctx.current(), "setup")
        with ctx.all_gather.use():
            y.mul_(2)
        y.sum()
    assert len(info.value.races) == 1 and "1 race(s) detected" in str(info.value)


def test_an_exception_in_the_block_wins_and_everything_is_restored():
    resize, all_reduce = torch.UntypedStorage.resize_, dist.all_reduce
    with pytest.raises(ValueError), detect():
        ctx = CommStreams()
        ctx.lazy_init(torch.device("cpu"))
        assert ctx.has_streams
        raise ValueError("boom")
    assert streams.device_streams(torch.device("cpu")) is None
    assert torch.UntypedStorage.resize_ is resize and dist.all_reduce is all_reduce
    assert recorder.listener is None
    ctx.lazy_init(torch.device("cpu"))  # the next init sees the backend changed
    assert not ctx.has_streams


def test_detectors_do_not_nest():
    with detect(), pytest.raises(RuntimeError, match="already active"), detect():
        pass


def test_the_cpu_path_keeps_fsdp_without_streams():
    with detect(gpu_path=False, raise_on_race=False):
        ctx = CommStreams()
        ctx.lazy_init(torch.device("cpu"))
        assert not ctx.has_streams


def test_a_foreign_event_gets_a_clear_error():
    with session() as (_det, ctx):
        event = streams.Event(torch.Event())
        with pytest.raises(TypeError, match="detector.current_stream"):
            ctx.all_gather_copy_in.wait_event(event, "copy_in_after_optim_event")
