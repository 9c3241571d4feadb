"""One run of the GPU benchmark (``benchmarks/gpu.py``): one implementation, one case, one
process, one JSON line on stdout.

``python benchmarks/gpu_worker.py --case gpt_fake8 --impl fsdp_ref --mode time``

A fresh process per run, so that the caching allocator's statistics (peak allocated and
reserved) are this run's alone. The model is built on the device, every block is a
``fully_shard`` group and the root one more (bf16 compute, fp32 reduction), the optimizer
is AdamW (torch's default implementation: ``foreach`` on CUDA). ``--mode time``: warm-up
steps, then timed steps (forward, backward, ``optim.step()``, ``zero_grad``), each between
two device synchronizations; the peak statistics over the timed steps. ``--mode record``:
the allocator's history is recorded from the process start (Python stacks; the CPU
profiler's allocator log on CPU), one step is marked after the warm-up, and the
allocations alive at its peak are grouped by site (``benchmarks/peak_sites.py``); the
bytes the step's forward saved for backward (activations, parameters left out) are
counted by a saved-tensor hook.

On ``--device cpu`` fsdp_ref takes its GPU code path on the race detector's virtual
streams (GPU buffer lifetimes; kernels in program order on the host), so the smoke run of
``make test`` exercises the same code; torch's ``fully_shard`` has one path for both.
Written for torch 2.11 (the GPU machines) to 2.13 (here).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare import _sync, train_step  # noqa: E402  (the step of the CPU benchmark)
from peak_sites import cpu_events, cuda_events, group, live_at_peak, mark_begin, mark_end  # noqa: E402

from fsdp_ref.examples.gpt import GPT, GPTConfig  # noqa: E402
from fsdp_ref.tools.simulate import GPT_PRESETS, fake_process_group  # noqa: E402

IMPLS = ("fsdp_ref", "torch")


@dataclass(frozen=True)
class Case:
    """One benchmark configuration.

    Attributes:
        cfg: the GPT's shape.
        batch: sequences per step.
        seq: tokens per sequence.
        world: ranks of the fake process group, or 1 for a real one-rank group.
        timed: whether step time is measured (the model check only records memory).
    """

    cfg: GPTConfig
    batch: int
    seq: int
    world: int
    timed: bool = True


_BIG = GPT_PRESETS["gpt-0.94b"]
_TOWER = GPTConfig(vocab_size=8192, seq_len=256, dim=256, n_layers=48, n_heads=4)
CASES = {
    "gpt_fake8": Case(_BIG, 4, 2048, 8),
    "gpt_one_rank": Case(_BIG, 4, 2048, 1),
    "tower_fake8": Case(_TOWER, 4, 256, 8),
    "model_check": Case(_BIG, 1, 16, 8, timed=False),
}
"""The GPU cases: the 0.94B GPT at fake world 8 and on a real one-rank group (NCCL), the
host-bound tower of 48 small blocks, and the 0.94B GPT with one sequence of 16 tokens
(activations negligible) for the memory model."""

_TINY = GPTConfig(vocab_size=64, seq_len=8, dim=16, n_layers=3, n_heads=2)
SMOKE_CASES = {
    "gpt_fake8": Case(_TINY, 2, 8, 8),
    "gpt_one_rank": Case(_TINY, 2, 8, 1),
    "tower_fake8": Case(GPTConfig(vocab_size=32, seq_len=8, dim=8, n_layers=6, n_heads=2),
                        2, 8, 8),
    "model_check": Case(_TINY, 1, 4, 8, timed=False),
}
"""The same cases at toy sizes, for ``--device cpu --smoke``."""


def build(impl: str, case: Case, device: torch.device):
    """The GPT on ``device`` (seed 0), every block and the root sharded by ``impl``, and
    its AdamW."""
    if impl == "fsdp_ref":
        from fsdp_ref import MixedPrecisionPolicy, fully_shard
    else:
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    torch.manual_seed(0)
    with device:
        model = GPT(case.cfg)
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for block in model.blocks:
        fully_shard(block, mp_policy=mp)
    fully_shard(model, mp_policy=mp)
    return model, torch.optim.AdamW(model.parameters(), lr=1e-4)


@contextlib.contextmanager
def _process_group(case: Case, device: torch.device):
    if case.world > 1:
        with fake_process_group(case.world):
            yield
        return
    backend = "nccl" if device.type == "cuda" else "gloo"
    dist.init_process_group(backend, store=dist.HashStore(), rank=0, world_size=1)
    try:
        yield
    finally:
        dist.destroy_process_group()


def _gpu_path(impl: str, device: torch.device):
    """fsdp_ref on CPU: its GPU code path on virtual streams."""
    if impl != "fsdp_ref" or device.type != "cpu":
        return contextlib.nullcontext()
    from fsdp_ref.sanitizer.engine import Engine
    from fsdp_ref.sanitizer.virtual import VirtualDevice
    from fsdp_ref.streams import override_device_streams
    return override_device_streams(VirtualDevice(Engine()))


class SavedBytes:
    """A saved-tensor hook pair that counts the bytes of the distinct storages autograd
    saves, parameters (and views of them) left out: the activations."""

    def __init__(self) -> None:
        self.storages: dict[int, int] = {}

    def pack(self, t: torch.Tensor) -> torch.Tensor:
        base = t if t._base is None else t._base
        if not (base.is_leaf and base.requires_grad):
            storage = t.untyped_storage()
            self.storages[storage.data_ptr()] = storage.nbytes()
        return t

    @property
    def total(self) -> int:
        """Bytes counted so far."""
        return sum(self.storages.values())


def run(args: argparse.Namespace) -> dict:
    """One run (see the module docstring); the result as a dict."""
    case = (SMOKE_CASES if args.smoke else CASES)[args.case]
    device = torch.device(args.device)
    record = args.mode == "record"
    out = {"case": args.case, "impl": args.impl, "mode": args.mode, "device": device.type,
           "torch": torch.__version__, "case_config": {**asdict(case)}}
    if device.type == "cuda":
        torch.cuda.set_device(0)
        device = torch.device("cuda", 0)
        out["device_name"] = torch.cuda.get_device_name(0)
        if record:  # from the start: every block's allocation is in the trace
            torch.cuda.memory._record_memory_history(
                enabled="all", context="alloc", stacks="python", max_entries=2_000_000)
    prof, threads = None, torch.get_num_threads()
    if device.type == "cpu":
        torch.set_num_threads(1)  # (a toy run: intra-op threads only add noise)
    if device.type == "cpu" and record:
        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                      profile_memory=True, with_stack=True)
        prof.__enter__()
    try:
        with _process_group(case, device), _gpu_path(args.impl, device):
            model, optim = build(args.impl, case, device)
            gen = torch.Generator().manual_seed(0)
            data = torch.randint(0, case.cfg.vocab_size, (case.batch, case.seq + 1),
                                 generator=gen).to(device)
            tokens, targets = data[:, :-1], data[:, 1:]
            for _ in range(args.warmup):
                train_step(model, optim, tokens, targets)
            _sync(device)
            if device.type == "cuda":
                torch.cuda.reset_peak_memory_stats()
            if record:
                saved = SavedBytes()
                begin = mark_begin(device)
                with torch.autograd.graph.saved_tensors_hooks(saved.pack, lambda t: t):
                    loss = F.cross_entropy(model(tokens).flatten(0, 1), targets.flatten())
                loss.backward()
                optim.step()
                optim.zero_grad(set_to_none=True)
                end = mark_end(device)
                _sync(device)
                del begin, end
                out["activation_bytes"] = saved.total
            else:
                times = []
                for _ in range(args.steps):
                    _sync(device)
                    t0 = time.perf_counter()
                    loss = train_step(model, optim, tokens, targets)
                    _sync(device)
                    times.append(time.perf_counter() - t0)
                out["step_ms"] = [t * 1e3 for t in times]
            out["loss"] = float(loss.detach())
            if device.type == "cuda":
                out["max_allocated"] = torch.cuda.max_memory_allocated()
                out["max_reserved"] = torch.cuda.max_memory_reserved()
            del model, optim
    finally:
        torch.set_num_threads(threads)
        if prof is not None:
            prof.__exit__(None, None, None)
    if record:
        if device.type == "cuda":
            events = cuda_events(torch.cuda.memory._snapshot(), 0)
            torch.cuda.memory._record_memory_history(enabled=None)
        else:
            events = cpu_events(prof)
        out["trace_peak"], blocks = live_at_peak(events)
        out.update(group(blocks))
    return out


def parser() -> argparse.ArgumentParser:
    """The worker's arguments (``benchmarks/gpu.py`` passes them on)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--case", required=True, choices=sorted(CASES))
    p.add_argument("--impl", required=True, choices=IMPLS)
    p.add_argument("--mode", choices=("time", "record"), default="time")
    p.add_argument("--device", default="cuda")
    p.add_argument("--smoke", action="store_true", help="the toy shapes of SMOKE_CASES")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--steps", type=int, default=8)
    return p


def main(argv: list[str] | None = None) -> dict:
    """Run once and print the result as one JSON line."""
    result = run(parser().parse_args(argv))
    print(json.dumps(result), flush=True)
    return result


if __name__ == "__main__":
    main()
