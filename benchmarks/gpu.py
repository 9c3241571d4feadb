"""The GPU benchmark of issue 33: fsdp_ref's ``fully_shard`` against torch's on one GPU.

    python benchmarks/gpu.py [--out DIR] [--rounds 2] [--cases gpt_fake8 tower_fake8 ...]
    python benchmarks/gpu.py --device cpu --smoke --in-process --out DIR   # make test

Cases (``benchmarks/gpu_worker.py``): the 0.94B GPT of ``fsdp_ref.examples.gpt`` (16
blocks, d=2048, sequence 2048, batch 4; bf16 compute, fp32 reduction, AdamW) on a fake
process group of 8 ranks (``gpt_fake8``) and on a real one-rank NCCL group
(``gpt_one_rank``); a host-bound tower of 48 small blocks (d=256; ``tower_fake8``); the
0.94B GPT with one sequence of 16 tokens for the memory model (``model_check``). Every
run is a process of its own (fresh allocator statistics): per case, ``--rounds`` rounds
of one timed run of each implementation, their order alternating from round to round,
then one recorded run of each (the allocator's history with Python stacks, the
allocations alive at the step's peak grouped by site and by kind). The summary gives,
per case, step time (median of every timed step; and fsdp_ref ÷ torch), peak allocated
and peak reserved (the worst of the timed runs), the kinds of memory alive at each
implementation's peak side by side, and the memory model's rows: the model's peak
(``fsdp_ref.tools.simulate``) against the measured peak of ``model_check``, and against
``gpt_fake8``'s peak minus the bytes its forward saved for backward. Results go to
``DIR/gpu_bench.json`` (rewritten after every run, so a run cut short keeps what it
measured) and ``DIR/gpu_bench.md``.

``tests/cuda/gpu_check.sh`` runs it on a lent GPU. **Its GPU figures are pending a lent
GPU**: it has not run on one yet; the table of issue 33 (an H200 with torch 2.11, measured
before this script existed) is the last GPU measurement, on ``docs/design/performance.md``.
``tests/bench/test_gpu_bench.py`` runs the smoke path on CPU (toy shapes, fsdp_ref on its
GPU code path through virtual streams, every run in the test's process) so that the
script cannot rot.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpu_worker  # noqa: E402
from gpu_worker import CASES, IMPLS, SMOKE_CASES  # noqa: E402

WORKER = Path(__file__).resolve().parent / "gpu_worker.py"
MIB = 2**20


def schedule(cases: list[str], rounds: int, smoke: bool) -> list[tuple[str, str, str]]:
    """``(case, impl, mode)`` in the order they run: the timed rounds of each case,
    fsdp_ref first in even rounds and torch first in odd ones, then one recorded run of
    each implementation."""
    table = SMOKE_CASES if smoke else CASES
    plan = []
    for case in cases:
        if table[case].timed:
            for r in range(rounds):
                order = IMPLS if r % 2 == 0 else IMPLS[::-1]
                plan += [(case, impl, "time") for impl in order]
        plan += [(case, impl, "record") for impl in IMPLS]
    return plan


def launch(argv: list[str], in_process: bool, timeout_s: float) -> dict:
    """One worker run; its JSON result, or ``{"error": ...}`` when it failed."""
    if in_process:
        buf = io.StringIO()
        try:
            with contextlib.redirect_stdout(buf):
                gpu_worker.main(argv)
        except Exception as exc:  # a failed run is a result, not the end of the benchmark
            return {"error": f"{type(exc).__name__}: {exc}"}
        return json.loads(buf.getvalue().strip().splitlines()[-1])
    try:
        proc = subprocess.run([sys.executable, str(WORKER), *argv], capture_output=True,
                              text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout_s:.0f} s"}
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        return {"error": f"exit {proc.returncode}: {proc.stderr[-3000:]}"}
    return json.loads(lines[-1])


def _runs(runs: list[dict], case: str, impl: str, mode: str) -> list[dict]:
    return [r for r in runs if r.get("case") == case and r.get("impl") == impl
            and r.get("mode") == mode and "error" not in r]


def case_summary(runs: list[dict], case: str) -> dict:
    """Step time, peaks and the kinds of memory at the peak of both implementations."""
    out: dict = {}
    for impl in IMPLS:
        timed = _runs(runs, case, impl, "time")
        rec = _runs(runs, case, impl, "record")
        steps = [t for r in timed for t in r["step_ms"]]
        out[impl] = {
            "step_ms_median": statistics.median(steps) if steps else None,
            "max_allocated": max((r["max_allocated"] for r in timed if "max_allocated" in r),
                                 default=None),
            "max_reserved": max((r["max_reserved"] for r in timed if "max_reserved" in r),
                                default=None),
            "trace_peak": rec[0]["trace_peak"] if rec else None,
            "activation_bytes": rec[0]["activation_bytes"] if rec else None,
            "categories": rec[0]["categories"] if rec else {},
        }
    ref, tor = out["fsdp_ref"], out["torch"]
    for key, ratio in (("step_ms_median", "step_x_torch"), ("max_reserved", "reserved_x_torch")):
        if ref[key] and tor[key]:
            out[ratio] = ref[key] / tor[key]
    if ref["max_allocated"] is not None and tor["max_allocated"] is not None:
        out["allocated_minus_torch"] = ref["max_allocated"] - tor["max_allocated"]
    kinds = dict.fromkeys([*ref["categories"], *tor["categories"]])
    out["kinds_at_peak"] = {k: (ref["categories"].get(k, 0), tor["categories"].get(k, 0))
                            for k in kinds}
    return out


def model_rows(summary: dict, smoke: bool, device: str) -> list[dict]:
    """The memory model against the measurements (issue 33 item 3): ``model_check``'s
    peak, and ``gpt_fake8``'s peak less its saved activations."""
    from fsdp_ref.tools.simulate import simulate

    table = SMOKE_CASES if smoke else CASES
    rows = []
    for case, less_activations in (("model_check", False), ("gpt_fake8", True)):
        if case not in summary:
            continue
        c = table[case]
        model = simulate(c.cfg, c.world, device="cpu" if device == "cpu" else "cuda")
        for impl in IMPLS:
            s = summary[case][impl]
            if s["trace_peak"] is None:
                continue
            measured = s["trace_peak"] - (s["activation_bytes"] if less_activations else 0)
            rows.append({"case": case, "impl": impl, "less_activations": less_activations,
                         "measured": measured, "model": model.total_bytes,
                         "model_peak_point": model.peak_point,
                         "measured_x_model": measured / model.total_bytes})
    return rows


def markdown(result: dict) -> str:
    """The summary tables."""
    lines = ["| case | step ms fsdp_ref / torch | × torch | peak allocated MiB fsdp_ref / "
             "torch (diff) | peak reserved × torch |", "|---|---:|---:|---:|---:|"]

    def mib(n):
        return "–" if n is None else f"{n / MIB:,.0f}"

    for case, s in result["summary"].items():
        ref, tor = s["fsdp_ref"], s["torch"]
        if ref["step_ms_median"] is None:
            continue
        diff, reserved = s.get("allocated_minus_torch"), s.get("reserved_x_torch")
        lines.append(
            f"| {case} | {ref['step_ms_median']:.1f} / {tor['step_ms_median']:.1f} | "
            f"{s.get('step_x_torch', float('nan')):.2f} | {mib(ref['max_allocated'])} / "
            f"{mib(tor['max_allocated'])} ({'–' if diff is None else f'{diff / MIB:+,.0f}'}) "
            f"| {'–' if reserved is None else f'{reserved:.2f}'} |")
    for case, s in result["summary"].items():
        lines += ["", f"At {case}'s recorded peak, bytes by kind (fsdp_ref / torch):", "",
                  "| kind | fsdp_ref | torch | diff |", "|---|---:|---:|---:|"]
        lines += [f"| {k} | {a:,} | {b:,} | {a - b:+,} |"
                  for k, (a, b) in s["kinds_at_peak"].items()]
    lines += ["", "| memory model | impl | measured | model | × model | model's peak point |",
              "|---|---|---:|---:|---:|---|"]
    lines += [f"| {r['case']}{' less activations' if r['less_activations'] else ''} | "
              f"{r['impl']} | {r['measured']:,} | {r['model']:,} | "
              f"{r['measured_x_model']:.3f} | {r['model_peak_point']} |"
              for r in result["model"]]
    return "\n".join(lines) + "\n"


def environment(device: str) -> dict:
    """torch's version, and on CUDA the GPU and driver as ``nvidia-smi`` reports them
    (asked outside this process: the driver process never initializes CUDA)."""
    import torch

    env = {"torch": torch.__version__, "cuda": torch.version.cuda, "device": device}
    if device != "cpu":
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            env["nvidia_smi"] = subprocess.run(
                ["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                 "--format=csv,noheader"], capture_output=True, text=True, timeout=30
            ).stdout.strip()
    return env


def main(argv: list[str] | None = None) -> dict:
    """Run the schedule, write ``gpu_bench.json`` after every run and the summary."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    p.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--device", default="cuda")
    p.add_argument("--smoke", action="store_true", help="toy shapes (with --device cpu)")
    p.add_argument("--in-process", action="store_true",
                   help="run every worker in this process (the smoke test; not for timing)")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--worker-timeout", type=float, default=600.0)
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "gpu_bench.json"
    result = {"environment": environment(args.device), "argv": argv if argv is not None
              else sys.argv[1:], "runs": [], "summary": {}, "model": []}
    for case, impl, mode in schedule(args.cases, args.rounds, args.smoke):
        worker_argv = ["--case", case, "--impl", impl, "--mode", mode, "--device", args.device,
                       "--warmup", str(args.warmup), "--steps", str(args.steps)]
        run = launch(worker_argv + (["--smoke"] if args.smoke else []), args.in_process,
                     args.worker_timeout)
        result["runs"].append({"case": case, "impl": impl, "mode": mode, **run})
        print(f"{case} {impl} {mode}: " + (run["error"][-300:] if "error" in run else "ok"),
              flush=True)
        path.write_text(json.dumps(result, indent=1))
    result["summary"] = {c: case_summary(result["runs"], c) for c in args.cases}
    result["model"] = model_rows(result["summary"], args.smoke, args.device)
    path.write_text(json.dumps(result, indent=1))
    table = markdown(result)
    (args.out / "gpu_bench.md").write_text(table)
    print(table)
    return result


if __name__ == "__main__":
    main()
