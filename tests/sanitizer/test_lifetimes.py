"""How many all-gather outputs and unsharded groups one GPU rank holds, at every point of
an iteration, on the GPU code path (issue 33 item 2).

torch's GPU path cannot run here, so its counts are written down from torch 2.13's source
(``_fully_shard/_fsdp_param_group.py`` and ``_fsdp_state.py``), each with its reason, and
fsdp_ref's GPU path is driven on CPU through the race detector's virtual streams
(:func:`fsdp_ref.sanitizer.detect`, which also checks that no wait is missing). A probe in
every block and in the root's head snapshots, while that module *computes* in forward
and in backward, the all-gather outputs whose storage is alive (the buffers fsdp_ref names
"all-gather buffer", tracked by weak reference) and the groups whose unsharded parameters
hold storage. A fake process group of ``WORLD`` ranks makes the buffers their real sizes
without peers.

torch 2.13 for blocks resharded after forward, the root not (its default), no explicit
prefetch, world size > 1:

* forward, block ``i`` computing: **1 output** (``wait_for_unshard`` in ``FORWARD`` keeps
  block ``i``'s result in ``comm_ctx.all_gather_state``, freed at the next group's wait,
  so that copy-out overlaps the next all-gather); **2 unsharded groups** (the root's,
  never resharded in forward; block ``i``'s: block ``i - 1`` resharded in its
  ``post_forward``). fsdp_ref prefetches block ``i + 1`` during block ``i`` instead
  (the order of the previous iteration): still one output, block ``i``'s freed at that
  prefetch's copy-in.
* forward, the root's head computing (after the last block): **1 output** (the last
  block's, still in ``all_gather_state``), **1 unsharded group** (the root).
* the loss, after the root's forward: **0 outputs** (the root's ``_post_forward`` frees
  ``all_gather_state``); **1 unsharded group** (the root).
* backward, the root's head computing: **1 output** (the root's ``pre_backward``
  prefetches the last block: ``_backward_prefetch`` from ``post_forward_order``); **1
  unsharded group** (the prefetched block is copied out only at its own pre-backward).
* backward, block ``i`` computing: **1 output** for ``i > 0`` (block ``i - 1`` prefetched),
  **0** for the first block; block ``i``'s own output was freed right after its copy-out
  (``wait_for_unshard`` outside ``FORWARD`` waits and frees at once); **2 unsharded
  groups** (the root until its post-backward, block ``i``).
* after backward: **0 outputs, 0 unsharded groups** (``reshard_after_backward``).

With one rank torch gathers nothing (``unshard`` returns before ``foreach_all_gather`` when
the group's world size is 1, and ``wait_for_unshard`` copies the shards straight into the
unsharded parameters): **0 outputs** everywhere.
"""

from __future__ import annotations

import weakref

import pytest
import torch
import torch.nn as nn

from fsdp_ref import fully_shard
from fsdp_ref.recorder import recorder
from fsdp_ref.sanitizer import detect
from fsdp_ref.tools.simulate import fake_process_group

BLOCKS, DIM = 4, 32


class _Snapshot(torch.autograd.Function):
    """Identity; calls ``probe("backward")`` when its gradient is computed."""

    @staticmethod
    def forward(ctx, x, probe):
        ctx.probe = probe
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        ctx.probe("backward")
        return grad, None


class Probe(nn.Module):
    """Snapshots the holdings when its module computes: at its forward, and (through an
    autograd node after its module's output) at the start of that module's backward."""

    def __init__(self, name: str, tracker: Tracker) -> None:
        super().__init__()
        self.name, self.tracker = name, tracker

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.tracker.snapshot("forward", self.name)
        return _Snapshot.apply(x, lambda phase: self.tracker.snapshot(phase, self.name))


class Block(nn.Module):
    def __init__(self, tracker: Tracker, name: str) -> None:
        super().__init__()
        self.lin = nn.Linear(DIM, DIM)
        self.probe = Probe(name, tracker)

    def forward(self, x):
        return self.probe(torch.relu(self.lin(x)))


class Model(nn.Module):
    def __init__(self, tracker: Tracker) -> None:
        super().__init__()
        self.embed = nn.Linear(DIM, DIM)
        self.blocks = nn.ModuleList(Block(tracker, f"block{i}") for i in range(BLOCKS))
        self.head = nn.Linear(DIM, DIM)
        self.head_probe = Probe("head", tracker)

    def forward(self, x):
        x = self.embed(x)
        for block in self.blocks:
            x = block(x)
        return self.head_probe(self.head(x))


class Tracker:
    """A recorder listener beside the detector: remembers every all-gather output fsdp_ref
    names, and snapshots what is alive."""

    def __init__(self) -> None:
        self.outputs: list[weakref.ref] = []
        self.model: nn.Module | None = None
        self.log: list[tuple[str, str, int, int]] = []
        self.forward_next = None

    def attach(self, inner) -> None:
        self.inner = inner

    def on_trace(self, event) -> None:
        self.inner.on_trace(event)

    def on_buffer(self, tensor, what, group, host) -> None:
        self.inner.on_buffer(tensor, what, group, host)
        if what == "all-gather buffer":
            self.outputs.append(weakref.ref(tensor))

    def alive_outputs(self) -> int:
        return sum(1 for ref in self.outputs
                   if (t := ref()) is not None and t.untyped_storage().size() > 0)

    def unsharded_groups(self) -> int:
        count = 0
        for module in self.model.modules():
            if not hasattr(module, "_get_fsdp_state") or module is not module:
                continue
            for group in module._get_fsdp_state().groups:
                if any(p.unsharded_param is not None
                       and p.unsharded_param.untyped_storage().size() > 0
                       for p in group.fsdp_params):
                    count += 1
        return count

    def snapshot(self, phase: str, where: str) -> None:
        self.log.append((phase, where, self.alive_outputs(), self.unsharded_groups()))


def torch_counts(world: int) -> list[tuple[str, str, int, int]]:
    """torch 2.13's holdings on its GPU path (the module docstring gives each reason)."""
    gathers = world > 1
    rows = [("forward", f"block{i}", int(gathers), 2) for i in range(BLOCKS)]
    rows.append(("forward", "head", int(gathers), 1))  # (still the last block's result)
    rows.append(("loss", "", 0, 1))
    rows.append(("backward", "head", int(gathers), 1))
    rows += [("backward", f"block{i}", int(gathers and i > 0), 2)
             for i in reversed(range(BLOCKS))]
    rows.append(("after backward", "", 0, 0))
    return rows


def _iteration(world: int, steps: int = 3) -> list[tuple[str, str, int, int]]:
    tracker = Tracker()
    with fake_process_group(world):
        torch.manual_seed(0)
        model = Model(tracker)
        tracker.model = model
        for block in model.blocks:
            fully_shard(block)
        fully_shard(model)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        with detect(gpu_path=True) as detector:
            tracker.attach(detector)
            recorder.listener = tracker
            try:
                for _ in range(steps):
                    tracker.log.clear()
                    loss = model(torch.randn(4, DIM)).square().sum()
                    tracker.snapshot("loss", "")
                    loss.backward()
                    tracker.snapshot("after backward", "")
                    opt.step()
                    opt.zero_grad()
            finally:
                recorder.listener = detector
    return tracker.log


@pytest.mark.parametrize("world", [8, 1])
def test_gpu_path_holds_what_torch_holds(world):
    """At every point of a steady-state iteration (the third: the prefetch order is
    known), the GPU path holds as many all-gather outputs and unsharded groups as torch
    2.13's, and the race detector finds no missing wait."""
    assert _iteration(world) == torch_counts(world)


class _PendingWork:
    """A collective's ``Work`` that stays incomplete until someone waits for it (gloo's
    can still be running when the host looks; the fake group's never is)."""

    def __init__(self, work) -> None:
        self.work, self.waited = work, False

    def wait(self, *args):
        self.waited = True
        return self.work.wait(*args) if self.work is not None else True

    def is_completed(self) -> bool:
        return self.waited


def test_cpu_path_completes_a_backward_prefetch_before_the_backward(monkeypatch):
    """Issue 33 item 5: on the CPU path a backward prefetch's all-gather is completed
    before the block's backward computes (``Gatherer.complete``): gloo stages it through a
    buffer the size of the output on its own thread, which must not sit on the backward's
    peak. It is a wait for memory, not for ordering, so the race detector cannot see it;
    here every all-gather's ``Work`` stays pending until waited for, and each block's
    backward checks that none issued for backward is."""
    import fsdp_ref.collectives as collectives

    issued: list[_PendingWork] = []
    real = collectives._all_gather_single

    def pending_all_gather(out, inp, **kwargs):
        work = _PendingWork(real(out, inp, **kwargs))
        issued.append(work)
        return work

    monkeypatch.setattr(collectives, "_all_gather_single", pending_all_gather)
    tracker = Tracker()
    seen: list[tuple[str, int]] = []
    tracker.snapshot = lambda phase, where: phase == "backward" and seen.append(
        (where, sum(not w.waited for w in issued)))
    with fake_process_group(2):
        torch.manual_seed(0)
        model = Model(tracker)
        for block in model.blocks:
            fully_shard(block)
        fully_shard(model)
        for _ in range(2):  # the second backward prefetches in the first's order
            seen.clear()
            model(torch.randn(4, DIM)).square().sum().backward()
    assert [w for w, _ in seen] == ["head", *(f"block{i}" for i in reversed(range(BLOCKS)))]
    assert all(pending == 0 for _, pending in seen), seen
