"""Print the Markdown tables of ``benchmarks/results/compare*.json`` for the docs.

``python benchmarks/report.py`` (no process group needed).
"""

from __future__ import annotations

import json
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def markdown(results: list[dict]) -> str:
    """One row per (world size, contender); ratios against torch's ``fully_shard``."""
    rows = [
        "| ranks | contender | step ms, median (min–max) | × torch | all-gather B | "
        "reduce-scatter B | all-reduce B | peak MiB, worst rank (ranks) | × torch |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in sorted(results, key=lambda r: (r["world_size"], r.get("tp", 1))):
        base = r["impls"]["torch_fsdp"]
        tp = r.get("tp", 1)
        ranks = f"{r['world_size'] // tp} dp × {tp} tp" if tp > 1 else str(r["world_size"])
        for impl, v in r["impls"].items():
            t, c = v["step_ms"], v["comm"]
            rows.append(
                f"| {ranks} ({r['backend']}) | {impl} | {t['median']:.1f} "
                f"({t['min']:.1f}–{t['max']:.1f}) | {t['median'] / base['step_ms']['median']:.2f} | "
                f"{c['all_gather']['bytes']:,} | {c['reduce_scatter']['bytes']:,} | "
                f"{c['all_reduce']['bytes']:,} | {v['peak_bytes'] / 2**20:.2f} "
                f"({_rank_range(v)}) | "
                f"{v['peak_bytes'] / base['peak_bytes']:.2f} |"
            )
    return "\n".join(rows)


def _rank_range(impl: dict) -> str:
    """The ranks' peaks as ``min–max`` MiB (one value when they agree)."""
    per_rank = impl.get("peak_bytes_per_rank") or [impl["peak_bytes"]]
    low, high = min(per_rank) / 2**20, max(per_rank) / 2**20
    return f"{low:.2f}" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}–{high:.2f}"


if __name__ == "__main__":
    print(markdown([json.loads(p.read_text()) for p in sorted(RESULTS.glob("compare_ws*.json"))]))
    two_d = sorted(RESULTS.glob("compare2d_*.json"))
    if two_d:
        print("\nFSDP x tensor parallelism:\n")
        print(markdown([json.loads(p.read_text()) for p in two_d]))
