"""A real multi-rank fsdp_ref workload, run by every rank of the test harness's pool with a
profiler that records each call from one function of the project to another.

:func:`traced_fsdp` trains small models the ways a user does -- FSDP with explicit
prefetching, HSDP, an int ``reshard_after_forward``, mixed precision, CPU offload,
gradient accumulation without synchronization, a reset after an exception in forward,
explicit unshard and reshard, state dicts saved and loaded -- with :func:`sys.setprofile`
installed, and returns the calls it saw (:func:`record`).  Nothing here knows the call
graph: the pages are compared with what ran (``test_trace_recall.py``).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from pathlib import Path

#: One observed call: (callee file, callee's first line, callee name, caller file, line of
#: the call in the caller).  Files are absolute paths as the code objects name them.
Observed = tuple[str, int, str, str, int]


def record(work: Callable[[], None], folder: str) -> set[Observed]:
    """Run ``work()`` with a profiler (this thread and threads it starts) and return every
    Python call whose callee and immediate caller are both code of files under ``folder``."""
    prefix = str(Path(folder).resolve()) + "/"
    seen: set[Observed] = set()

    def profile(frame, event, arg):  # noqa: ARG001 - the profiler's signature
        if event != "call":
            return
        code, back = frame.f_code, frame.f_back
        if back is None or not code.co_filename.startswith(prefix):
            return
        if back.f_code.co_filename.startswith(prefix):
            seen.add((code.co_filename, code.co_firstlineno, code.co_name,
                      back.f_code.co_filename, back.f_lineno))

    threading.setprofile(profile)
    sys.setprofile(profile)
    try:
        work()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return seen


def _model(dim: int = 8, blocks: int = 3):
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = nn.Linear(dim, dim)
            self.fail_next = False

        def forward(self, x):
            if self.fail_next:
                self.fail_next = False
                raise RuntimeError("injected failure")
            return torch.relu(self.lin(x))

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.blocks = nn.ModuleList(Block() for _ in range(blocks))
            self.head = nn.Linear(dim, 1)

        def forward(self, x):
            for block in self.blocks:
                x = block(x)
            return self.head(x)

    torch.manual_seed(0)
    return Net()


def _train(net, steps: int = 2, micro: int = 1, fail: bool = False) -> None:
    import torch

    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for step in range(steps):
        if fail and step == 0:
            net.blocks[1].fail_next = True
            try:
                net(torch.randn(4, 8))
            except RuntimeError:
                net.reset_iter_state()
        for i in range(micro):
            last = i == micro - 1
            if micro > 1:
                net.set_requires_gradient_sync(last)
                net.set_is_last_backward(last)
            net(torch.randn(4, 8)).sum().backward()
        opt.step()
        opt.zero_grad()


def _shard(net, mesh, **kw) -> None:
    from fsdp_ref import fully_shard

    for block in net.blocks:
        fully_shard(block, mesh=mesh, **kw)
    fully_shard(net, mesh=mesh, **kw)


def _workload(world_size: int) -> None:
    import torch
    from torch.distributed.device_mesh import init_device_mesh

    from fsdp_ref import CPUOffloadPolicy, MixedPrecisionPolicy

    mesh = init_device_mesh("cpu", (world_size,))
    net = _model()  # FSDP, explicit prefetching, a reset after an exception
    _shard(net, mesh)
    blocks = list(net.blocks)
    for i, block in enumerate(blocks[:-1]):
        block.set_modules_to_forward_prefetch([blocks[i + 1]])
        blocks[i + 1].set_modules_to_backward_prefetch([block])
    _train(net, fail=True)
    handle = net.unshard(async_op=True)  # explicit unshard and reshard, state dicts
    handle.wait()
    net.reshard()
    state = net.state_dict()
    net.load_state_dict(state)

    hsdp = init_device_mesh("cpu", (world_size, 1), mesh_dim_names=("replicate", "shard"))
    net = _model()
    _shard(net, hsdp)
    _train(net, steps=1)

    for kw in ({"reshard_after_forward": 1},
               {"mp_policy": MixedPrecisionPolicy(param_dtype=torch.bfloat16,
                                                  reduce_dtype=torch.float32)},
               {"offload_policy": CPUOffloadPolicy(pin_memory=False)}):
        net = _model()
        _shard(net, mesh, **kw)
        _train(net, steps=1)
    net = _model()  # gradient accumulation without synchronization
    _shard(net, mesh)
    _train(net, steps=1, micro=2)


def traced_fsdp(rank: int, world_size: int, folder: str) -> list[Observed]:
    """The calls between functions under ``folder`` (fsdp_ref's sources) during the workload,
    sorted; run by the harness on every rank."""
    return sorted(record(lambda: _workload(world_size), folder))
