"""``make bench-overhead``: host overhead per ``fully_shard`` group per step, by phase.

The model of issue 12: ``N`` residual blocks ``x + fc2(relu(fc1(norm(x))))`` of width 32
(LayerNorm and two Linear layers) and a final LayerNorm; every block is its own
``fully_shard`` group, the root holds the final norm. One process plays rank 0 of a fake
process group of 8 ranks (``backend="fake"``: collectives return at once and move no data,
so no communication is timed; the all-gathered parameters hold whatever the buffers held),
one intra-op thread, SGD, a batch of ``--batch`` rows.

Three contenders per size: fsdp_ref's ``fully_shard``, torch's ``fully_shard`` and the
plain model. All models (three per size, sizes 16, 48 and 96 blocks by default) live in
one process; after warm-up, every round runs ``--steps`` steps of each model in an order
that rotates each round. A step is forward, loss, backward, ``optim.step()`` and
``zero_grad()``; a round's value is the median of its steps.

Overhead per group per step = (step time - the plain model's step time in the same
round) / N, reported as median and min-max over rounds; fsdp_ref's overhead over torch's
is also taken per round (same load on the machine) before the median. It is split by phase with
:class:`phases.PhaseClock` (see ``phases.py``): wrappers around the module hooks, the
tensor hooks and autograd Functions those hooks register, and the autograd engine's
queued callback, which every FSDP2-style implementation has to go through, so both
implementations are measured the same way and neither is edited. The optimizer phase is
``optim.step()`` + ``zero_grad()`` minus the plain model's. What no wrapper sees (module
call slow path with hooks, the engine calling Python nodes, DTensor compute outside the
hooks) is the ``other`` remainder.

Times are this thread's CPU time (``time.thread_time``; the work is single-threaded and
host-bound, and on a shared machine CPU time leaves out the time other processes got),
wall time is reported next to it. Reading that clock is a system call, so the totals come
from bare models and the phases from a twin of each FSDP model with the clock attached,
run right after it in the same round.

    python benchmarks/overhead.py                       # all sizes; JSON + plot
    python benchmarks/overhead.py --groups 48 --rounds 3
    python benchmarks/overhead.py --markdown            # the docs' tables from the JSON

Writes ``benchmarks/results/overhead.json`` and the figure ``docs/assets/overhead.svg``.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from overhead_model import (  # noqa: E402
    CONTENDERS,
    FSDP_CONTENDERS,
    RESULTS,
    WORLD_SIZE,
    build,
    step,
)
from phases import HOOK_PHASES, PHASES, PhaseClock  # noqa: E402

from fsdp_ref.tools.simulate import fake_process_group  # noqa: E402

__all__ = ["FSDP_CONTENDERS", "WORLD_SIZE", "build", "main", "markdown", "measure", "step",
           "summarize"]

FIGURE = Path(__file__).resolve().parents[1] / "docs" / "assets" / "overhead.svg"


def measure(sizes, width: int, batch: int, rounds: int, steps: int, warmup: int,
            contenders=CONTENDERS) -> dict:
    """Interleaved rounds over every (size, contender); per round, the median of its
    steps' total and per-phase seconds: ``{size: {contender: [round dicts]}}``."""
    clock = PhaseClock()
    with clock.installed():
        return _interleaved(clock, sizes, width, batch, rounds, steps, warmup, contenders)


def _interleaved(clock, sizes, width, batch, rounds, steps, warmup, contenders) -> dict:
    # Per (size, contender): a bare model for the step totals and, under FSDP, a twin
    # with the phase clock attached for the phases (its reads cost a system call each).
    bare = {(n, c): build(c, n, width) for n in sizes for c in contenders}
    timed = {key: build(key[1], key[0], width, clock) for key in bare if key[1] != "plain"}
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(batch, width, generator=gen)
    target = torch.randn(batch, width, generator=gen)
    for run in (*bare.values(), *timed.values()):
        for _ in range(warmup):
            step(*run, x, target, clock)
    keys = list(bare)
    out: dict = {n: {c: [] for c in contenders} for n in sizes}
    for r in range(rounds):
        for key in keys[r % len(keys):] + keys[: r % len(keys)]:
            clock.enabled = False  # adopted Function.backward wrappers are class-wide
            totals = [step(*bare[key], x, target, clock) for _ in range(steps)]
            value = {k: statistics.median(s[k] for s in totals)
                     for k in ("step", "wall", "optimizer")}
            clock.enabled = True
            phases = [step(*timed[key], x, target, clock) for _ in range(steps)
                      ] if key in timed else totals
            value.update({k: statistics.median(s[k] for s in phases) for k in HOOK_PHASES})
            out[key[0]][key[1]].append(value)
    return out


def _stats(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def summarize(rounds_by_size: dict, contenders=CONTENDERS) -> dict:
    """Milliseconds: step times, and per group per step the overhead over the plain model
    of the same round, in total and by phase (plus the ``other`` remainder)."""
    result = {}
    for n, by_contender in rounds_by_size.items():
        plain = by_contender["plain"]
        entry = {"step_ms": {c: _stats([r["step"] * 1e3 for r in by_contender[c]])
                             for c in contenders},
                 "wall_step_ms": {c: _stats([r["wall"] * 1e3 for r in by_contender[c]])
                                  for c in contenders},
                 "overhead_per_group_ms": {}}
        rounds: dict[str, list[dict]] = {}
        for c in contenders:
            if c == "plain":
                continue
            per_round = []
            for mine, base in zip(by_contender[c], plain):
                row = {phase: mine[phase] for phase in HOOK_PHASES}
                row["optimizer"] = mine["optimizer"] - base["optimizer"]
                row["total"] = mine["step"] - base["step"]
                row["other"] = row["total"] - sum(row[p] for p in PHASES)
                per_round.append({k: v * 1e3 / n for k, v in row.items()})
            entry["overhead_per_group_ms"][c] = {
                k: _stats([row[k] for row in per_round]) for k in per_round[0]
            }
            rounds[c] = per_round
        if "torch_fsdp" in rounds:
            # Paired per round (same load on the machine): the target ratio.
            entry["overhead_vs_torch"] = {
                c: _stats([a["total"] / b["total"] for a, b in zip(rows, rounds["torch_fsdp"])])
                for c, rows in rounds.items()
            }
        result[str(n)] = entry
    return result


def table(summary: dict) -> str:
    """A printed table: per size and contender, ms per group per step by phase."""
    cols = ("total", *PHASES, "other")
    lines = [f"{'groups':>6} {'contender':<11} {'step ms':>8} "
             + " ".join(f"{c[:9]:>9}" for c in cols)]
    for n, entry in summary.items():
        for c, phases in entry["overhead_per_group_ms"].items():
            lines.append(f"{n:>6} {c:<11} {entry['step_ms'][c]['median']:8.1f} "
                         + " ".join(f"{phases[k]['median']:9.3f}" for k in cols))
        lines.append(f"{n:>6} {'plain':<11} {entry['step_ms']['plain']['median']:8.1f}")
        ratio = entry["overhead_vs_torch"]["fsdp_ref"]
        lines.append(f"{'':>6} fsdp_ref overhead / torch's, paired per round: "
                     f"{ratio['median']:.2f} ({ratio['min']:.2f}-{ratio['max']:.2f})")
    return "\n".join(lines)


def markdown(result: dict) -> str:
    """The docs' tables: per size the step times and overhead per group (median, min-max),
    then per phase the medians for every size."""
    def cell(v: dict, digits: int = 2) -> str:
        return f"{v['median']:.{digits}f} ({v['min']:.{digits}f}–{v['max']:.{digits}f})"

    sizes = result["sizes"]
    rows = ["| groups | plain step ms | fsdp_ref step ms | torch step ms | fsdp_ref ms/group "
            "| torch ms/group | fsdp_ref ÷ torch, paired |", "|---:|---:|---:|---:|---:|---:|---:|"]
    for n, e in sizes.items():
        ov, steps = e["overhead_per_group_ms"], e["step_ms"]
        rows.append(f"| {n} | {steps['plain']['median']:.1f} | {steps['fsdp_ref']['median']:.1f} | "
                    f"{steps['torch_fsdp']['median']:.1f} | {cell(ov['fsdp_ref']['total'])} | "
                    f"{cell(ov['torch_fsdp']['total'])} | {cell(e['overhead_vs_torch']['fsdp_ref'])} |")
    head = " | ".join(f"{n}: fsdp_ref | {n}: torch" for n in sizes)
    rows += ["", f"| ms per group per step | {head} |", "|---|" + "---:|" * (2 * len(sizes))]
    for k in ("pre_forward", "post_forward", "pre_backward", "post_backward", "final_callback",
              "optimizer", "other", "total"):
        vals = " | ".join(f"{e['overhead_per_group_ms'][c][k]['median']:.3f}"
                          for e in sizes.values() for c in FSDP_CONTENDERS)
        rows.append(f"| {k.replace('_', ' ')} | {vals} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> dict:
    """Measure, print the table, write the JSON (and the plot unless ``--no-plot``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, nargs="+", default=[16, 48, 96])
    parser.add_argument("--width", type=int, default=32)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--steps", type=int, default=5, help="steps per model per round")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--figure", type=Path, default=FIGURE)
    parser.add_argument("--no-plot", action="store_true", help="JSON only (no matplotlib)")
    parser.add_argument("--markdown", action="store_true",
                        help="print the docs' tables from the JSON in --out; measure nothing")
    args = parser.parse_args(argv)
    if args.markdown:
        result = json.loads((args.out / "overhead.json").read_text())
        print(markdown(result))
        return result
    torch.set_num_threads(1)
    torch.set_flush_denormal(True)
    with fake_process_group(WORLD_SIZE):
        rounds = measure(args.groups, args.width, args.batch, args.rounds, args.steps,
                         args.warmup)
    result = {
        "command": "python benchmarks/overhead.py "
                   + " ".join(argv if argv is not None else sys.argv[1:]),
        "world_size": WORLD_SIZE,
        "backend": "fake",
        "torch": torch.__version__,
        "machine": platform.processor() or platform.machine(),
        "threads": torch.get_num_threads(),
        "config": {"width": args.width, "batch": args.batch, "rounds": args.rounds,
                   "steps": args.steps, "warmup": args.warmup},
        "sizes": summarize(rounds),
    }
    print(table(result["sizes"]))
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "overhead.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {path}")
    if not args.no_plot:
        from overhead_plot import plot_phases

        plot_phases(result, args.figure)
        print(f"wrote {args.figure}")
    return result


if __name__ == "__main__":
    main()
