"""Figures of the design pages, drawn with matplotlib from the stream model.

:mod:`docs_site.stream_model` schedules the ops of one FSDP2 iteration on its
streams; the ``render_*`` functions here draw the resulting spans
(``broken_barh`` lanes, one row per stream or per parameter group) under
:func:`fsdp_ref.tools.timeline.figure_style`, the same settings as the recorded
timeline, and name the streams with the same vocabulary
(:data:`fsdp_ref.tools.timeline.STREAMS`, the attribute names of
:class:`fsdp_ref.streams.CommContext`). Their output is deterministic SVG,
sized for the site's article column.

Typical use (what the MkDocs hook does)::

    from docs_site import figures
    for name, svg in figures.all_figures().items():
        print(name, len(svg))
"""

from __future__ import annotations

from typing import Any

from docs_site.byte_layout import render_byte_layout
from docs_site.moe_figure import render_moe_mesh
from docs_site.stream_model import (
    Span,
    fsdp2_iteration,
    group_name,
    schedule,
    split_phases,
    unsharded_layers,
)
from fsdp_ref.tools.timeline import FIGURE_WIDTH_IN, STREAMS, figure_style, svg_text

__all__ = [
    "COLORS",
    "KIND_LABELS",
    "WAIT_ROWS",
    "SHORT_LABELS",
    "render_timeline",
    "render_stream_diagram",
    "render_lifecycle",
    "all_figures",
]

#: Fill colour per op kind.
COLORS: dict[str, str] = {
    "forward": "#4f7cc2",
    "backward": "#7a5bb8",
    "copy_in": "#9fb6d9",
    "copy_out": "#8fd1b8",
    "all_gather": "#2f9e77",
    "rs_copy_in": "#f2c08f",
    "reduce_scatter": "#d9822b",
    "all_reduce": "#c4493f",
    "optimizer": "#6b7280",
}

#: Legend text per op kind.
KIND_LABELS: dict[str, str] = {
    "forward": "forward compute",
    "backward": "backward compute",
    "copy_in": "copy-in of Shard(0) shards",
    "copy_out": "copy-out → unsharded params",
    "all_gather": "all-gather → Replicate()",
    "rs_copy_in": "grad copy-in (chunk_cat)",
    "reduce_scatter": "reduce-scatter Partial() → Shard(0)",
    "all_reduce": "all-reduce across replicas",
    "optimizer": "optimizer step on shards",
}


#: The row (``#``) of the table of waits in ``docs/design/streams.md`` that each event
#: wait of the model illustrates, by (kind of the op that recorded the event, kind of the
#: op whose stream waits). Row 1 (the first copy-in waits for the previous optimizer
#: step) happens before the modelled iteration starts.
WAIT_ROWS: dict[tuple[str, str], int] = {
    ("copy_in", "all_gather"): 5,        # all_gather_after_copy_in
    ("all_gather", "copy_out"): 6,       # compute_after_all_gather
    ("copy_out", "copy_in"): 8,          # free_all_gather_output
    ("rs_copy_in", "reduce_scatter"): 9,  # reduce_scatter_after_grads
    ("reduce_scatter", "all_reduce"): 12,  # all_reduce_after_reduce_scatter
    ("reduce_scatter", "rs_copy_in"): 14,  # compute_after_reduction
    ("reduce_scatter", "optimizer"): 14,
    ("all_reduce", "optimizer"): 14,
}

#: Short bar labels of the per-group figures, by kind.
SHORT_LABELS: dict[str, str] = {
    "forward": "fwd", "backward": "bwd", "copy_in": "CI", "copy_out": "CO",
    "all_gather": "AG", "rs_copy_in": "RC", "reduce_scatter": "RS", "all_reduce": "AR",
}


# ---------------------------------------------------------------------------
# Rendering (matplotlib, one lane per stream)
# ---------------------------------------------------------------------------

_BAR_H = 0.64        # bar height, in lanes
_LABEL_PT = 7.0      # bar labels; 9.3 px at the figure's natural width


def _lanes(spans: list[Span]) -> list[str]:
    """The streams the spans use, in the order of :data:`fsdp_ref.tools.timeline.STREAMS`."""
    used = {s.op.stream for s in spans}
    unknown = sorted(used - set(STREAMS))
    if unknown:
        raise ValueError(f"ops on unknown streams {unknown}; known: {list(STREAMS)}")
    return [name for name in STREAMS if name in used]


def _lane_axes(ax: Any, names: list[str], header: float = 0.0) -> None:
    """One row per name, top to bottom, shaded every other row; ``header`` lanes on top."""
    for row in range(0, len(names), 2):
        ax.axhspan(row - 0.5, row + 0.5, color="#f3f4f6", linewidth=0, zorder=0)
    ax.set_ylim(len(names) - 0.5, -0.5 - header)
    ax.set_yticks(range(len(names)), names)
    ax.tick_params(axis="y", length=0)
    ax.spines["left"].set_visible(False)


def _draw_bars(ax: Any, spans: list[Span], row_of: dict[str, int], key: Any) -> None:
    """``broken_barh`` per (kind, row): one colour per kind of work."""
    ranges: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for span in spans:
        ranges.setdefault((span.op.kind, row_of[key(span)]), []).append(
            (span.start, span.end - span.start))
    for (kind, row), xranges in ranges.items():
        ax.broken_barh(xranges, (row - _BAR_H / 2, _BAR_H), facecolors=COLORS[kind], zorder=2)


def _fits(fig: Any, ax: Any) -> Any:
    """A test ``(text, x_from, x_to, size) -> bool``: does the text fit between the two
    x values of ``ax`` once the figure is laid out?"""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextPath

    fig.draw_without_rendering()
    x0, x1 = ax.get_xlim()
    pt_per_unit = ax.get_window_extent().width * 72 / fig.dpi / (x1 - x0)
    bold = FontProperties(weight="bold")

    def fits(text: str, start: float, end: float, size: float) -> bool:
        width_pt = TextPath((0, 0), text, size=size, prop=bold).get_extents().width
        return bool(text) and width_pt + 3 <= (end - start) * pt_per_unit

    return fits


def _label_bars(fig: Any, ax: Any, spans: list[Span], row_of: dict[str, int], key: Any,
                text: Any = lambda op: op.name) -> None:
    """Write each bar's label inside it where it fits (measured after layout)."""
    fits = _fits(fig, ax)
    for span in spans:
        label = text(span.op)
        if fits(label, span.start, span.end, _LABEL_PT):
            ax.text((span.start + span.end) / 2, row_of[key(span)], label, ha="center",
                    va="center", fontsize=_LABEL_PT, fontweight="bold", color="white", zorder=3)


def _legend(fig: Any, spans: list[Span], note: str = "") -> None:
    from matplotlib.patches import Patch

    kinds = [k for k in COLORS if any(s.op.kind == k for s in spans)]
    fig.legend(handles=[Patch(color=COLORS[k], label=KIND_LABELS[k]) for k in kinds],
               loc="outside lower center", ncols=3, frameon=False, title=note or None,
               title_fontsize=7.5)


def _phases(spans: list[Span]) -> dict[str, tuple[float, float]]:
    """Forward / backward / optimizer extent on the compute stream (forward from 0)."""
    phases: dict[str, tuple[float, float]] = {}
    for s in spans:
        if s.op.stream == "compute" and s.op.kind in ("forward", "backward", "optimizer"):
            start = phases.get(s.op.kind, (s.start, s.end))[0]
            phases[s.op.kind] = (start, s.end)
    if "forward" in phases:
        phases["forward"] = (0.0, phases["forward"][1])
    return phases


def render_timeline(spans: list[Span], title: str = "One FSDP2 training iteration") -> str:
    """Render an iteration as a per-stream timeline with a memory strip.

    Args:
        spans: Scheduled spans (see :func:`schedule`).
        title: Title drawn above the figure, also its accessible title.

    Returns:
        A standalone SVG document.
    """
    lanes = _lanes(spans)
    row_of = {name: i for i, name in enumerate(lanes)}
    t_end = max(s.end for s in spans)
    points = unsharded_layers(spans)
    peak = max(c for _, c in points)
    with figure_style():
        from matplotlib.figure import Figure

        fig = Figure(figsize=(FIGURE_WIDTH_IN, 0.3 * len(lanes) + 2.6), layout="constrained")
        ax, mem = fig.subplots(2, 1, sharex=True, height_ratios=[len(lanes) + 0.8, 1.6])
        _lane_axes(ax, lanes, header=0.8)
        phases = _phases(spans)
        for kind, (a, b) in phases.items():
            for axis in (ax, mem):
                axis.axvspan(a, b, color=COLORS[kind], alpha=0.07, linewidth=0, zorder=0)
        _draw_bars(ax, spans, row_of, key=lambda s: s.op.stream)
        ax.set_xlim(0, t_end)
        ax.tick_params(axis="x", length=0, labelbottom=False)
        ax.spines["bottom"].set_visible(False)
        times = [t for t, _ in points] + [t_end]
        counts = [c for _, c in points] + [points[-1][1]]
        mem.fill_between(times, counts, step="post", color="#2f9e77", alpha=0.25, linewidth=0)
        mem.step(times, counts, where="post", color="#2f9e77", linewidth=1)
        mem.set_ylim(0, peak + 0.5)
        mem.set_yticks(range(0, peak + 1, max(1, peak // 2)))
        mem.set_ylabel(f"unsharded\nlayers (peak {peak})", rotation=0, ha="right", va="center")
        mem.set_xlabel("time (illustrative units)")
        _legend(fig, spans)
        fig.suptitle(title)
        _label_bars(fig, ax, spans, row_of, key=lambda s: s.op.stream)
        fits = _fits(fig, ax)
        for kind, (a, b) in phases.items():
            if fits(kind, a, b, 8.0):
                ax.text((a + b) / 2, -0.85, kind, ha="center", va="center", color="#4b5563")
    return svg_text(fig, title)


def _arrow_ends(src: Span, dst: Span, row_of: dict[str, int]) -> tuple[tuple[float, float], ...]:
    """From the end of ``src``'s bar to the start of ``dst``'s, on the facing bar edges."""
    y1, y2 = row_of[src.op.stream], row_of[dst.op.stream]
    down = 1 if y2 > y1 else -1
    return (src.end, y1 + down * _BAR_H / 2), (dst.start, y2 - down * _BAR_H / 2)


def render_stream_diagram(spans: list[Span], title: str = "Streams and events",
                          wait_rows: dict[tuple[str, str], int] | None = None) -> str:
    """Render spans per stream with an arrow for every event wait that mattered.

    An arrow goes from the end of the op that recorded the event to the start
    of the op whose stream waited on it; only waits that actually delayed the
    op (``Span.waited_on``) are drawn, to keep the picture readable.

    Args:
        spans: Scheduled spans (see :func:`schedule`).
        title: Title drawn above the figure, also its accessible title.
        wait_rows: Optional number per (kind of the recording op, kind of the
            waiting op), drawn on the arrow (the rows of a table on the page).

    Returns:
        A standalone SVG document.
    """
    lanes = _lanes(spans)
    row_of = {name: i for i, name in enumerate(lanes)}
    by_name = {s.op.name: s for s in spans}
    with figure_style():
        from matplotlib.figure import Figure

        fig = Figure(figsize=(FIGURE_WIDTH_IN, 0.45 * len(lanes) + 1.7), layout="constrained")
        ax = fig.subplots()
        _lane_axes(ax, lanes)
        _draw_bars(ax, spans, row_of, key=lambda s: s.op.stream)
        ax.set_xlim(0, max(s.end for s in spans))
        ax.set_xlabel("time (illustrative units)")
        for span in spans:
            for dep in span.waited_on:
                src = by_name[dep]
                if src.op.stream == span.op.stream:
                    continue  # stream order alone
                start, end = _arrow_ends(src, span, row_of)
                ax.annotate("", xy=end, xytext=start, zorder=4, arrowprops={
                    "arrowstyle": "-|>", "color": "#111827", "linewidth": 0.8,
                    "shrinkA": 0, "shrinkB": 0, "mutation_scale": 7})
                number = (wait_rows or {}).get((src.op.kind, span.op.kind))
                if number is not None:
                    ax.text((start[0] + end[0]) / 2, (start[1] + end[1]) / 2, str(number),
                            ha="center", va="center", fontsize=7, zorder=5, bbox={
                                "boxstyle": "circle,pad=0.2", "facecolor": "white",
                                "edgecolor": "#111827", "linewidth": 0.6})
        _legend(fig, spans, "Arrow: record_event() after the source op, wait_event() on the "
                            "target op's stream before it runs.\nStream order alone "
                            "serialises the ops of one lane.")
        fig.suptitle(title)
        _label_bars(fig, ax, spans, row_of, key=lambda s: s.op.stream)
    return svg_text(fig, title)


def render_lifecycle(spans: list[Span], title: str) -> str:
    """One row per parameter group: what happens to each group, and when.

    Bars are coloured by kind of work and labelled with :data:`SHORT_LABELS`; a red
    tick marks where a group frees its unsharded parameters (after forward, when it
    reshards; after its post-backward otherwise), and the root's forward is marked
    ``kept`` (the root does not reshard after forward).

    Args:
        spans: Spans of one phase (see :func:`split_phases`).
        title: Title drawn above the figure, also its accessible title.

    Returns:
        A standalone SVG document.
    """
    layers = sorted({s.op.layer for s in spans if s.op.layer is not None})
    rows = [group_name(layer) for layer in layers]
    row_of = {name: i for i, name in enumerate(rows)}
    t0, t1 = min(s.start for s in spans), max(s.end for s in spans)
    with figure_style():
        from matplotlib.figure import Figure

        fig = Figure(figsize=(FIGURE_WIDTH_IN, 0.32 * len(rows) + 1.55), layout="constrained")
        ax = fig.subplots()
        _lane_axes(ax, rows)
        key = lambda s: group_name(s.op.layer)  # noqa: E731
        _draw_bars(ax, spans, row_of, key=key)
        ax.set_xlim(t0, t1 + 0.08 * (t1 - t0))
        ax.set_xlabel("time (illustrative units)")
        for span in spans:
            op = span.op
            frees = (op.kind == "forward" and op.layer != 0) or op.kind == "rs_copy_in"
            if frees:
                y = row_of[key(span)]
                ax.plot([span.end, span.end], [y - 0.42, y + 0.42], color="#c00000",
                        linewidth=1.5, zorder=4)
            elif op.kind == "forward":
                ax.text(span.end + 0.05, row_of[key(span)], "kept", va="center",
                        fontsize=7, color="#4b5563")
        _legend(fig, spans, "red tick: the group frees its unsharded parameters (reshard)")
        fig.suptitle(title)
        _label_bars(fig, ax, spans, row_of, key=key, text=lambda op: SHORT_LABELS[op.kind])
    return svg_text(fig, title)


def all_figures() -> dict[str, str]:
    """Every figure of the site, keyed by its path under ``docs/``.

    Returns:
        Mapping such as ``{"figures/timeline.svg": "<svg ...>"}``.
    """
    iteration = schedule(fsdp2_iteration())
    zoom = schedule(fsdp2_iteration(num_layers=2, hsdp=True))
    forward, backward = split_phases(schedule(fsdp2_iteration(num_layers=3)))
    return {
        "figures/timeline.svg": render_timeline(iteration),
        "figures/streams.svg": render_stream_diagram(
            zoom, "Streams and events: 2 layers + root, HSDP (2-D mesh)"
        ),
        "figures/stream-waits.svg": render_stream_diagram(
            zoom, "Who waits on whom: 2 layers + root, HSDP (2-D mesh)", WAIT_ROWS
        ),
        "figures/lifecycle-forward.svg": render_lifecycle(
            forward, "Forward, per parameter group: blocks B0-B2 and the root R"
        ),
        "figures/lifecycle-backward.svg": render_lifecycle(
            backward, "Backward, per parameter group: in reverse, reduce-scatters trail"
        ),
        "figures/mixed-dtype-bytes.svg": render_byte_layout(),
        "figures/moe-mesh.svg": render_moe_mesh(),
    }


if __name__ == "__main__":  # pragma: no cover - manual preview helper
    import pathlib
    import sys

    out_dir = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "site-figures")
    for rel, svg in all_figures().items():
        path = out_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(svg, encoding="utf-8")
        print(path)
