"""Where one training step's host time goes, per phase and per function (py-spy).

``python benchmarks/overhead_profile.py`` runs each FSDP contender of ``overhead.py``
(48 groups by default) in a child process under ``py-spy record`` (a sampling profiler
that reads the interpreter's stacks from outside, so the profiled code runs unmodified
and undisturbed apart from the sampling pauses). The child builds the model with the
:class:`phases.PhaseClock` wrappers attached, warms up, then runs steps for ``--seconds``
inside ``profiled_steps``; only samples under that frame are kept.

Each sample is assigned to the phase whose wrapper frame (``phase_pre_forward`` ...) is
on its stack, to ``optimizer`` under ``optimizer_step``, else to ``compute`` (forward and
backward outside FSDP's callbacks: the model's own ops, ``nn.Module.__call__``, the
autograd engine). Within a phase, each function's *inclusive* share (samples with the
function anywhere below the phase frame; the benchmark's own wrapper frames are left
out of this list) and *self* share (samples with it as the
innermost Python frame; time in a C++ torch op counts for the Python function that
called it) are reported, and self time is also summed by *area*: the FSDP code itself,
DTensor, autograd, pytree, ``nn.Module``, TorchDynamo's disable wrapper, ...

Milliseconds are shares of the samples times the median step time that ``overhead.py``
measured for that contender without the profiler (``benchmarks/results/overhead.json``).
Writes ``benchmarks/results/overhead_profile.json`` and the per-phase bar chart
``docs/assets/overhead_profile.svg``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from overhead_model import (  # noqa: E402
    AREA_NAMES,
    AREAS,
    FSDP_CONTENDERS,
    RESULTS,
    WORLD_SIZE,
    build,
    step,
)
from phases import PHASES, PhaseClock  # noqa: E402

from fsdp_ref.tools.simulate import fake_process_group  # noqa: E402

__all__ = ["AREAS", "AREA_NAMES", "analyse", "area_of", "parse_raw", "profiled_steps"]

ROOT = Path(__file__).resolve().parents[1]
MARKER = "profiled_steps"
COMPUTE = "compute"

_FRAME = re.compile(r"^(?P<fn>.*) \((?P<file>.*?)(?::(?P<line>\d+))?\)$")


def profiled_steps(model, optim, x, target, clock: PhaseClock, seconds: float) -> int:
    """Train for ``seconds``; the profile keeps only samples under this frame."""
    start, steps = time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        step(model, optim, x, target, clock)
        steps += 1
    return steps


def _worker(contender: str, groups: int, width: int, batch: int, seconds: float) -> None:
    torch.set_num_threads(1)
    torch.set_flush_denormal(True)
    with fake_process_group(WORLD_SIZE):
        clock = PhaseClock(now=time.perf_counter)  # only its frames matter here: cheap reads
        with clock.installed():
            model, optim = build(contender, groups, width, clock)
            gen = torch.Generator().manual_seed(0)
            x = torch.randn(batch, width, generator=gen)
            target = torch.randn(batch, width, generator=gen)
            for _ in range(5):
                step(model, optim, x, target, clock)
            steps = profiled_steps(model, optim, x, target, clock, seconds)
    print(json.dumps({"steps": steps}))


def parse_raw(text: str) -> list[tuple[list[tuple[str, str]], int]]:
    """py-spy's ``--format raw`` (collapsed stacks, outermost frame first) as
    ``[([(function, file), ...], samples), ...]``; line numbers are dropped."""
    stacks = []
    for line in text.splitlines():
        frames, _, count = line.rpartition(" ")
        if not frames:
            continue
        parsed = []
        for frame in frames.split(";"):
            m = _FRAME.match(frame)
            parsed.append((m["fn"], m["file"]) if m else (frame, ""))
        stacks.append((parsed, int(count)))
    return stacks


def area_of(file: str) -> str:
    """The area a frame's file belongs to (see :data:`AREAS`); ``other torch`` or
    ``other`` when no fragment matches."""
    path = file.replace("\\", "/")
    for area, fragment in AREAS:
        if fragment in path:
            return area
    return "other torch" if "torch/" in path else "other"


def _short(file: str) -> str:
    path = file.replace("\\", "/")
    for anchor in ("site-packages/", "src/", str(ROOT) + "/"):
        if anchor in path:
            return path.split(anchor, 1)[1]
    return path


def _phase_of(frames: list[tuple[str, str]]) -> tuple[str, int]:
    """The phase of a stack and the index of its phase frame (outermost wins)."""
    for i, (fn, _) in enumerate(frames):
        if fn.startswith("phase_") and fn[6:] in PHASES:
            return fn[6:], i
        if fn == "optimizer_step":
            return "optimizer", i
    return COMPUTE, -1


def analyse(stacks, step_ms: float, top: int = 25) -> dict:
    """Per phase: share of the step, ms per step, self time by area, and the top
    functions by inclusive and self share of the phase."""
    kept = [(f[_marker_index(f):], n) for f, n in stacks if _marker_index(f) >= 0]
    total = sum(n for _, n in kept)
    if not total:
        raise RuntimeError(f"no samples under {MARKER}: did the profiler see the child?")
    phase_samples: Counter = Counter()
    areas: dict[str, Counter] = defaultdict(Counter)
    inclusive: dict[str, Counter] = defaultdict(Counter)
    self_time: dict[str, Counter] = defaultdict(Counter)
    for frames, n in kept:
        phase, at = _phase_of(frames)
        phase_samples[phase] += n
        below = frames[at + 1:] if at >= 0 else frames[1:]
        leaf_fn, leaf_file = frames[-1]
        areas[phase][area_of(leaf_file)] += n
        self_time[phase][f"{leaf_fn} ({_short(leaf_file)})"] += n
        for key in {f"{fn} ({_short(file)})" for fn, file in below if file != "phases.py"}:
            inclusive[phase][key] += n
    result = {"samples": total, "step_ms": step_ms, "phases": {}}
    for phase in (*PHASES, COMPUTE):
        n = phase_samples[phase]
        if not n:
            continue
        result["phases"][phase] = {
            "share_of_step": n / total,
            "ms_per_step": step_ms * n / total,
            "areas": {a: c / n for a, c in areas[phase].most_common()},
            "inclusive": {k: c / n for k, c in inclusive[phase].most_common(top)},
            "self": {k: c / n for k, c in self_time[phase].most_common(top)},
        }
    return result


def _marker_index(frames) -> int:
    for i, (fn, _) in enumerate(frames):
        if fn == MARKER:
            return i
    return -1


def record(contender: str, args, workdir: Path) -> tuple[list, int]:
    """Run the worker for ``contender`` under py-spy; its stacks and step count."""
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    raw = workdir / f"{contender}.txt"
    cmd = [py_spy, "record", "--rate", str(args.rate), "--format", "raw", "--output", str(raw),
           "--", sys.executable, __file__, "--worker", contender, "--groups", str(args.groups),
           "--width", str(args.width), "--batch", str(args.batch),
           "--seconds", str(args.seconds)]
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    # py-spy prints its own lines too; the worker's is the JSON one.
    steps = next(json.loads(line)["steps"] for line in done.stdout.splitlines()
                 if line.startswith('{"steps"'))
    return parse_raw(raw.read_text()), steps


def main(argv: list[str] | None = None) -> dict | None:
    """Profile both FSDP contenders; print per-phase summaries; write JSON and figure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=48)
    parser.add_argument("--width", type=int, default=32)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--rate", type=int, default=250, help="py-spy samples per second")
    parser.add_argument("--worker", choices=FSDP_CONTENDERS, help=argparse.SUPPRESS)
    parser.add_argument("--timings", type=Path, default=RESULTS / "overhead.json")
    parser.add_argument("--out", type=Path, default=RESULTS / "overhead_profile.json")
    parser.add_argument("--figure", type=Path, default=ROOT / "docs/assets/overhead_profile.svg")
    parser.add_argument("--no-plot", action="store_true")
    args = parser.parse_args(argv)
    if args.worker:
        _worker(args.worker, args.groups, args.width, args.batch, args.seconds)
        return None
    timings = json.loads(args.timings.read_text())["sizes"].get(str(args.groups))
    if timings is None:
        parser.error(f"{args.timings} has no {args.groups}-group result; run overhead.py first")
    result = {"command": "python benchmarks/overhead_profile.py "
                         + " ".join(argv if argv is not None else sys.argv[1:]),
              "groups": args.groups, "rate_hz": args.rate, "contenders": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for contender in FSDP_CONTENDERS:
            stacks, steps = record(contender, args, Path(tmp))
            step_ms = timings["step_ms"][contender]["median"]
            result["contenders"][contender] = {"steps": steps, **analyse(stacks, step_ms)}
    print(report(result))
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")
    if not args.no_plot:
        from overhead_plot import plot_profile

        plot_profile(result, args.figure)
        print(f"wrote {args.figure}")
    return result


def report(result: dict, functions: int = 8) -> str:
    """Readable summary: per contender and phase, ms per step, areas, top functions."""
    lines = []
    for contender, r in result["contenders"].items():
        lines.append(f"== {contender}: {r['samples']} samples over {r['steps']} steps, "
                     f"step {r['step_ms']:.1f} ms")
        for phase, p in r["phases"].items():
            lines.append(f"  {phase:<15} {p['share_of_step']:6.1%}  {p['ms_per_step']:6.2f} ms")
            lines.append("      areas: " + ", ".join(
                f"{a} {s:.0%}" for a, s in p["areas"].items() if s >= 0.02))
            for key, share in list(p["inclusive"].items())[:functions]:
                lines.append(f"      {share:6.1%} incl  {key}")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
