"""``make bench``: fsdp_ref's ``fully_shard`` against torch's ``fully_shard`` and DDP.

Run under torchrun (gloo on CPU, NCCL when a GPU is present)::

    torchrun --standalone --nproc_per_node 2 benchmarks/compare.py
    torchrun --standalone --nproc_per_node 4 benchmarks/compare.py

The three contenders train the same GPT (``fsdp_ref.examples.gpt``, same seed, same data, AdamW)
in one process group. Two phases:

1. **memory and bytes**, one contender at a time on a fresh model: peak live tensor bytes
   on each rank during a steady-state step (see ``measure.py`` for how, on CPU), and the
   bytes each collective moved in that step;
2. **time**, all three models alive at once: after warm-up, ``--rounds`` rounds of
   ``--steps`` steps of each model, in an order that rotates every round so that no
   contender always runs first (cache, allocator, neighbour noise). A step is forward,
   backward, ``optim.step()`` and ``zero_grad()``, timed with ``perf_counter`` between two
   barriers, so it is the slowest rank's step.

Rank 0 prints a table with ratios against torch's ``fully_shard`` and writes
``benchmarks/results/compare_ws{N}.json`` and ``benchmarks/results/compare.svg`` (every
world size found in the results folder).

On a GPU, ``--bf16`` (both ``fully_shard`` s in bf16 with fp32 reduction; DDP sits out)
on a GPT of about 110M parameters is the reference measurement (results go to
``benchmarks/results/compare_cuda_bf16_ws{N}.json``)::

    torchrun --standalone --nproc_per_node 1 benchmarks/compare.py --bf16 \
        --dim 768 --layers 12 --vocab 32000 --seq-len 512 --batch-per-rank 8 --rounds 8

``--tp T`` measures 2-D parallelism instead: a ``(N/T, T)`` mesh ``("dp", "tp")``, every
block's MLP tensor parallel (``fc`` column-wise, ``out`` row-wise) on ``tp``, then
``fully_shard`` on ``dp``; DDP sits this one out. Results go to
``benchmarks/results/compare2d_ws{N}_tp{T}.json`` (not plotted)::

    torchrun --standalone --nproc_per_node 4 benchmarks/compare.py --tp 2
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import CommCounter, PeakMemory, ddp_counting_hook  # noqa: E402
from plot import render_comparison  # noqa: E402

from fsdp_ref.examples.demo import init_from_torchrun  # noqa: E402
from fsdp_ref.examples.gpt import GPT, GPTConfig  # noqa: E402

IMPLS = ("fsdp_ref", "torch_fsdp", "ddp")
IMPLS_2D = ("fsdp_ref", "torch_fsdp")
BASELINE = "torch_fsdp"
RESULTS = Path(__file__).resolve().parent / "results"


def build(impl: str, cfg: GPTConfig, device: torch.device, counter: CommCounter | None = None,
          world_mesh=None, bf16: bool = False):
    """The GPT of ``cfg`` (seed 0) wrapped by ``impl``, and its AdamW.

    ``world_mesh``: a ``("dp", "tp")`` mesh: tensor-parallel MLPs on ``tp``, FSDP on ``dp``.
    ``bf16``: both ``fully_shard`` s gather and compute in bf16 and reduce in fp32.
    """
    torch.manual_seed(0)
    model = GPT(cfg).to(device)
    shard_kw = {}
    if world_mesh is not None:
        from torch.distributed.tensor.parallel import (
            ColwiseParallel,
            RowwiseParallel,
            parallelize_module,
        )

        plan = {"fc": ColwiseParallel(), "out": RowwiseParallel()}
        for block in model.blocks:
            parallelize_module(block, world_mesh["tp"], plan)
        shard_kw = {"mesh": world_mesh["dp"]}
    if impl == "ddp":
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
        if counter is not None:
            model.register_comm_hook(None, ddp_counting_hook(counter))
    else:
        if impl == "fsdp_ref":
            from fsdp_ref import MixedPrecisionPolicy, fully_shard
        else:
            from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
        if bf16:
            shard_kw["mp_policy"] = MixedPrecisionPolicy(
                param_dtype=torch.bfloat16, reduce_dtype=torch.float32
            )
        for block in model.blocks:
            fully_shard(block, **shard_kw)
        fully_shard(model, **shard_kw)
    return model, torch.optim.AdamW(model.parameters(), lr=1e-3)


def batch(step: int, rank: int, world: int, per_rank: int, cfg: GPTConfig, device):
    """This rank's slice of the global batch of ``step`` (the same for every contender)."""
    gen = torch.Generator().manual_seed(1000 + step)
    tokens = torch.randint(0, cfg.vocab_size, (per_rank * world, cfg.seq_len + 1), generator=gen)
    mine = tokens[rank * per_rank : (rank + 1) * per_rank].to(device)
    return mine[:, :-1], mine[:, 1:]


def train_step(model, optim, tokens, targets) -> torch.Tensor:
    """Forward, backward, optimizer step, zero_grad; returns the detached loss."""
    logits = model(tokens)
    loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten())
    loss.backward()
    optim.step()
    optim.zero_grad(set_to_none=True)
    return loss.detach()


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def measure_memory_and_bytes(impl, cfg, device, args, rank, world, world_mesh=None) -> dict:
    """Phase 1: a fresh model, two warm-up steps, then three tracked steps (bytes: the
    first of them; peak: the highest of the three)."""
    counter = CommCounter()
    mem = PeakMemory(device)
    # Earlier models die in reference cycles; collect them now, not inside this window
    # (their frees would be subtracted from this contender's live bytes).
    gc.collect()
    gc.disable()
    mem.start()
    model, optim = build(impl, cfg, device, counter, world_mesh, args.bf16)
    with counter:
        for step in range(2):
            train_step(model, optim, *batch(step, rank, world, args.batch_per_rank, cfg, device))
        counter.reset()
        _sync(device)
        with mem.window("step"):
            loss = train_step(model, optim, *batch(2, rank, world, args.batch_per_rank, cfg, device))
            _sync(device)
        comm = counter.snapshot()
        # Two more tracked steps: gloo releases collective buffers from its own threads,
        # so a single step's peak varies by a buffer or two; report the worst of three.
        for step in (3, 4):
            with mem.window(f"step{step}"):
                train_step(model, optim, *batch(step, rank, world, args.batch_per_rank, cfg, device))
                _sync(device)
    windows = mem.stop()
    gc.enable()
    del model, optim
    gc.collect()
    return {"comm": comm, "peak_bytes": max(w["peak"] for w in windows.values()),
            "start_bytes": windows["step"]["start"],
            "end_bytes": windows["step"]["end"], "loss_step2": float(loss),
            "cpu_accounting": mem.cpu_accounting}


def measure_time(cfg, device, args, rank, world, impls=IMPLS, world_mesh=None
                 ) -> dict[str, list[float]]:
    """Phase 2: all models alive, interleaved rounds; per-step seconds."""
    runs = {impl: build(impl, cfg, device, None, world_mesh, args.bf16) for impl in impls}
    times: dict[str, list[float]] = {impl: [] for impl in impls}
    step = 0
    for impl in impls:  # warm-up: lazy init, optimizer state, allocator caches
        for _ in range(args.warmup):
            train_step(*runs[impl], *batch(step, rank, world, args.batch_per_rank, cfg, device))
    for r in range(args.rounds):
        order = impls[r % len(impls):] + impls[: r % len(impls)]
        for impl in order:
            for _ in range(args.steps):
                data = batch(step, rank, world, args.batch_per_rank, cfg, device)
                _sync(device)
                dist.barrier()
                t0 = time.perf_counter()
                train_step(*runs[impl], *data)
                _sync(device)
                dist.barrier()
                times[impl].append(time.perf_counter() - t0)
            step += 1
    return times


def summarize(samples: list[float]) -> dict:
    """Median, min and max (in milliseconds) of step times in seconds."""
    ms = [s * 1e3 for s in samples]
    return {"median": statistics.median(ms), "min": min(ms), "max": max(ms), "n": len(ms)}


def table(result: dict) -> str:
    """The printed comparison table, ratios against torch's ``fully_shard``."""
    base = result["impls"][BASELINE]
    tp = result.get("tp", 1)
    layout = f" (dp x tp={tp})" if tp > 1 else ""
    lines = [
        f"GPT {result['config']['num_params']:,} params, {result['world_size']} ranks{layout} "
        f"({result['backend']}), {result['rounds']} rounds x {result['steps']} steps",
        f"{'impl':<11} {'step ms (min-max)':>22} {'x torch':>8} {'all-gather B':>13} "
        f"{'red-scatter B':>14} {'all-reduce B':>13} {'peak MiB':>9} {'x torch':>8} "
        f"{'peak MiB per rank':>26}",
    ]
    for impl, r in result["impls"].items():
        t, c = r["step_ms"], r["comm"]
        lines.append(
            f"{impl:<11} {t['median']:8.2f} ({t['min']:5.1f}-{t['max']:5.1f}) "
            f"{t['median'] / base['step_ms']['median']:8.3f} "
            f"{c['all_gather']['bytes']:13,} {c['reduce_scatter']['bytes']:14,} "
            f"{c['all_reduce']['bytes']:13,} {r['peak_bytes'] / 2**20:9.2f} "
            f"{r['peak_bytes'] / base['peak_bytes']:8.3f} "
            f"{' '.join(f'{b / 2**20:.1f}' for b in r['peak_bytes_per_rank']):>26}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Run both phases; rank 0 prints the table and writes JSON and SVG."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=16)
    parser.add_argument("--steps", type=int, default=3, help="steps per contender per round")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--seq-len", type=int, default=64)
    parser.add_argument("--vocab", type=int, default=512)
    parser.add_argument("--batch-per-rank", type=int, default=4)
    parser.add_argument("--tp", type=int, default=1,
                        help="tensor-parallel degree (>1: a (dp, tp) mesh, FSDP x TP)")
    parser.add_argument("--bf16", action="store_true",
                        help="bf16 parameters and compute, fp32 reduction (FSDP only)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    rank, world, device = init_from_torchrun("benchmarks/compare.py")
    backend = dist.get_backend()
    impls, world_mesh, data_rank, data_world = IMPLS, None, rank, world
    if args.tp > 1:
        if world % args.tp:
            parser.error(f"--tp {args.tp} must divide the number of ranks {world}")
        from torch.distributed.device_mesh import init_device_mesh

        world_mesh = init_device_mesh(device.type, (world // args.tp, args.tp),
                                      mesh_dim_names=("dp", "tp"))
        # tp peers see the same batch: the data-parallel index picks the slice
        impls, data_rank, data_world = IMPLS_2D, world_mesh.get_local_rank("dp"), world // args.tp
    if args.bf16:
        impls = IMPLS_2D  # DDP has no mixed-precision policy to match
    cfg = GPTConfig(vocab_size=args.vocab, seq_len=args.seq_len, dim=args.dim,
                    n_layers=args.layers, n_heads=max(1, args.dim // 64))

    memory = {impl: measure_memory_and_bytes(impl, cfg, device, args, data_rank, data_world,
                                             world_mesh) for impl in impls}
    times = measure_time(cfg, device, args, data_rank, data_world, impls, world_mesh)
    peaks = [None] * world
    dist.all_gather_object(peaks, {impl: memory[impl]["peak_bytes"] for impl in impls})
    if os.environ.get("BENCH_MEMORY_DEBUG"):
        print(rank, {i: (memory[i]["start_bytes"], memory[i]["peak_bytes"], memory[i]["end_bytes"])
                     for i in impls}, flush=True)
    if rank == 0:
        result = {
            "command": f"torchrun --standalone --nproc_per_node {world} benchmarks/compare.py "
                       + " ".join(argv if argv is not None else sys.argv[1:]),
            "world_size": world,
            "tp": args.tp,
            "bf16": args.bf16,
            "backend": backend,
            "device": torch.cuda.get_device_name() if backend == "nccl" else platform.processor() or "cpu",
            "torch": torch.__version__,
            "cpu_memory_accounting": memory[impls[0]]["cpu_accounting"],
            "rounds": args.rounds,
            "steps": args.steps,
            "config": {**cfg.__dict__, "num_params": cfg.num_params(),
                       "batch_per_rank": args.batch_per_rank},
            "impls": {},
        }
        for impl in impls:
            result["impls"][impl] = {
                "step_ms": summarize(times[impl]),
                "comm": memory[impl]["comm"],
                "peak_bytes": max(p[impl] for p in peaks),
                "peak_bytes_per_rank": [p[impl] for p in peaks],
                "start_bytes": memory[impl]["start_bytes"],
                "end_bytes": memory[impl]["end_bytes"],
                "loss_step2": memory[impl]["loss_step2"],
            }
        base = result["impls"][BASELINE]
        result["ratios_vs_torch_fsdp"] = {
            impl: {
                "step_time": r["step_ms"]["median"] / base["step_ms"]["median"],
                "peak_memory": r["peak_bytes"] / base["peak_bytes"],
            }
            for impl, r in result["impls"].items()
        }
        print(table(result))
        args.out.mkdir(parents=True, exist_ok=True)
        special = "_cuda" * (backend == "nccl") + "_bf16" * args.bf16
        if args.tp > 1 or special:
            name = (f"compare2d{special}_ws{world}_tp{args.tp}" if args.tp > 1
                    else f"compare{special}_ws{world}")  # (the CPU plot globs compare_ws*)
            path = args.out / f"{name}.json"
            path.write_text(json.dumps(result, indent=2) + "\n")
            print(f"wrote {path}")
        else:
            (args.out / f"compare_ws{world}.json").write_text(json.dumps(result, indent=2) + "\n")
            all_results = [json.loads(p.read_text()) for p in sorted(args.out.glob("compare_ws*.json"))]
            (args.out / "compare.svg").write_text(render_comparison(all_results))
            print(f"wrote {args.out / f'compare_ws{world}.json'} and {args.out / 'compare.svg'}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
