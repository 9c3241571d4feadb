"""The bar chart of ``compare.py`` results, drawn with matplotlib (deterministic SVG).

Two panels: median step time with a min–max error range, and peak memory per rank; one
group of bars per world size, one bar per contender. ``python benchmarks/plot.py OUT.svg``
redraws it from ``benchmarks/results/compare_ws*.json`` without running anything.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from fsdp_ref.tools.timeline import FIGURE_WIDTH_IN, figure_style, svg_text

__all__ = ["render_comparison"]

COLORS = {"fsdp_ref": "#1f77b4", "torch_fsdp": "#ff7f0e", "ddp": "#7f7f7f"}
LABELS = {"fsdp_ref": "fsdp_ref fully_shard", "torch_fsdp": "torch fully_shard", "ddp": "torch DDP"}
TITLE = "Step time and peak memory per rank against torch's fully_shard"
RESULTS = Path(__file__).resolve().parent / "results"


def render_comparison(results: list[dict]) -> str:
    """SVG text comparing the contenders at every world size in ``results``.

    Args:
        results: the JSON documents ``compare.py`` writes, one per world size.

    Returns:
        A standalone SVG document.
    """
    from matplotlib.figure import Figure

    results = sorted(results, key=lambda r: r["world_size"])
    impls = [i for i in COLORS if all(i in r["impls"] for r in results)]
    groups = [f"{r['world_size']} ranks ({r['backend']})" for r in results]
    width = 0.8 / len(impls)
    with figure_style():
        fig = Figure(figsize=(FIGURE_WIDTH_IN, 3.2), layout="constrained")
        time_ax, mem_ax = fig.subplots(1, 2)
        for j, impl in enumerate(impls):
            xs = [g + (j - (len(impls) - 1) / 2) * width for g in range(len(results))]
            step = [r["impls"][impl]["step_ms"] for r in results]
            median = [s["median"] for s in step]
            spread = [[m - s["min"] for m, s in zip(median, step)],
                      [s["max"] - m for m, s in zip(median, step)]]
            bars = time_ax.bar(xs, median, width * 0.9, yerr=spread, capsize=2.5,
                               color=COLORS[impl], label=LABELS[impl],
                               error_kw={"linewidth": 0.8})
            for x, m in zip(xs, median):  # at the foot of the bar, clear of the range
                time_ax.annotate(f"{m:.0f}", (x, 0), xytext=(0, 2), textcoords="offset points",
                                 ha="center", va="bottom", fontsize=7, color="white")
            peak = [r["impls"][impl]["peak_bytes"] / 2**20 for r in results]
            bars = mem_ax.bar(xs, peak, width * 0.9, color=COLORS[impl])
            mem_ax.bar_label(bars, fmt="%.1f", fontsize=7, padding=1)
        for ax, name, unit in ((time_ax, "step time (median, min–max)", "ms"),
                               (mem_ax, "peak memory per rank", "MiB")):
            ax.set_title(name, fontweight="bold")
            ax.set_ylabel(unit)
            ax.set_xticks(range(len(groups)), groups)
            ax.tick_params(axis="x", length=0)
            ax.grid(axis="y", color="#dddddd", linewidth=0.6)
            ax.set_axisbelow(True)
        mem_ax.margins(y=0.12)
        fig.legend(loc="outside lower center", ncols=len(impls), frameon=False)
    return svg_text(fig, TITLE)


def committed_results() -> list[dict]:
    """The 1-D results under ``benchmarks/results`` (``compare_ws*.json``)."""
    return [json.loads(p.read_text()) for p in sorted(RESULTS.glob("compare_ws*.json"))]


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else RESULTS / "compare.svg")
    out.write_text(render_comparison(committed_results()))
    print(f"wrote {out}")
