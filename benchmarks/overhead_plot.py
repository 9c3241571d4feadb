"""Figures for the host-overhead benchmark (matplotlib, deterministic SVG output).

Drawn with the project's figure settings (:func:`fsdp_ref.tools.timeline.figure_style`:
text as ``<text>``, fixed font, no date) at the docs column's width, so that every label
reads at 9 px or more where the page shows it.

* :func:`plot_phases`: from ``overhead.py``'s result, one panel per model size (stacked);
  per phase, a bar per FSDP implementation: median ms per group per step over the plain
  model, with the min-max over rounds as error bars.
* :func:`plot_profile`: from ``overhead_profile.py``'s result, per phase a horizontal bar
  per implementation, ms per step, split by the area its samples' innermost frame is in.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from overhead_model import AREA_NAMES  # noqa: E402

from fsdp_ref.tools.timeline import FIGURE_WIDTH_IN, figure_style, svg_text  # noqa: E402

__all__ = ["plot_phases", "plot_profile"]

COLORS = {"fsdp_ref": "#1f77b4", "torch_fsdp": "#ff7f0e"}
LABELS = {"fsdp_ref": "fsdp_ref fully_shard", "torch_fsdp": "torch fully_shard"}
BARS = ("total", "pre_forward", "post_forward", "pre_backward", "post_backward",
        "final_callback", "optimizer", "other")


def _save(fig, path: Path, title: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(svg_text(fig, title))
    plt.close(fig)


def plot_phases(result: dict, path: Path) -> None:
    """Per-phase overhead bars with min-max error ranges, one panel per size."""
    with figure_style():
        _plot_phases(result, path)


def _plot_phases(result: dict, path: Path) -> None:
    sizes = result["sizes"]
    fig, axes = plt.subplots(len(sizes), 1, figsize=(FIGURE_WIDTH_IN, 2.7 * len(sizes)),
                             sharex=True, squeeze=False, layout="constrained")
    width = 0.4
    for ax, (n, entry) in zip(axes[:, 0], sizes.items()):
        for j, (contender, phases) in enumerate(entry["overhead_per_group_ms"].items()):
            med = [phases[b]["median"] for b in BARS]
            low = [max(0.0, m - phases[b]["min"]) for m, b in zip(med, BARS)]
            high = [max(0.0, phases[b]["max"] - m) for m, b in zip(med, BARS)]
            xs = [i + (j - 0.5) * width for i in range(len(BARS))]
            ax.bar(xs, med, width, yerr=[low, high], capsize=2, color=COLORS[contender],
                   label=LABELS[contender])
        plain = entry["step_ms"]["plain"]["median"]
        ax.set_title(f"{n} groups (plain model: {plain:.1f} ms/step)")
        ax.set_xticks(range(len(BARS)), [b.replace("_", " ") for b in BARS],
                      rotation=30, ha="right")
        ax.axhline(0, color="#888", linewidth=0.6)
        ax.grid(axis="y", color="#ddd")
        ax.set_axisbelow(True)
        ax.set_ylabel("ms / group / step")
    axes[0][0].legend(loc="upper right")
    title = "Host overhead over the plain model, by phase (median, min-max over rounds)"
    fig.suptitle(title)
    _save(fig, path, title)


# One distinct colour per profile area (overhead_model.AREA_NAMES order), grey for rest.
_AREA_COLORS = ("#9e9e9e", "#1f77b4", "#2ca02c", "#17becf", "#e377c2", "#8c564b", "#bcbd22",
                "#ff7f0e", "#d62728", "#9467bd", "#393b79", "#aec7e8", "#f7b6d2", "#c7c7c7",
                "#7f7f7f")


def plot_profile(result: dict, path: Path, min_share: float = 0.03) -> None:
    """Per phase and implementation, ms per step stacked by area (sampled profile)."""
    with figure_style():
        _plot_profile(result, path, min_share)


def _plot_profile(result: dict, path: Path, min_share: float) -> None:
    contenders = list(result["contenders"])
    phases = [p for p in (*BARS[1:-1], "compute")
              if any(p in result["contenders"][c]["phases"] for c in contenders)]
    shown = {a for c in contenders for p in result["contenders"][c]["phases"].values()
             for a, share in p["areas"].items() if share >= min_share}
    areas = [a for a in AREA_NAMES if a in shown]
    colors = {a: _AREA_COLORS[i % len(_AREA_COLORS)] for i, a in enumerate(AREA_NAMES)}
    colors["rest"] = "#e0e0e0"
    fig, ax = plt.subplots(figsize=(FIGURE_WIDTH_IN, 0.32 * len(phases) * len(contenders) + 2.6),
                           layout="constrained")
    labels, ticks, y = [], [], 0.0
    for phase in phases:
        for c in contenders:
            p = result["contenders"][c]["phases"].get(phase)
            left = 0.0
            if p is not None:
                shares = {a: p["areas"].get(a, 0.0) for a in areas}
                shares["rest"] = max(0.0, 1.0 - sum(shares.values()))
                for area, share in shares.items():
                    ms = share * p["ms_per_step"]
                    ax.barh(y, ms, left=left, height=0.8, color=colors[area],
                            edgecolor="white", linewidth=0.4)
                    left += ms
            ticks.append(y)
            labels.append(f"{phase}  {LABELS[c].split()[0]}")
            y += 1
        y += 0.6
    for area in [*areas, "rest"]:
        ax.barh(0, 0, color=colors[area], label=area)
    ax.set_yticks(ticks, labels)
    ax.invert_yaxis()
    ax.set_xlabel("ms per step (share of samples x median step time)")
    ax.grid(axis="x", color="#ddd")
    ax.set_axisbelow(True)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncols=3,
              title="innermost Python frame in")
    title = f"Where one step's host time goes ({result['groups']} groups; py-spy samples)"
    ax.set_title(title)
    _save(fig, path, title)
