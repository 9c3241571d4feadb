"""Draw one training step from the stream-protocol recorder as an SVG timeline.

``python -m fsdp_ref.tools.timeline docs/assets/timeline.svg`` trains a small GPT (one gloo
rank, in process), records its second step with :func:`fsdp_ref.recorder.record`, and
writes the figure with matplotlib. The recorder has no clock, so the x axis is the
*order* in which the host issued each step of the protocol. The step is cut into strips
that fit a page column (forward first, backward on a fresh strip), one row per stream,
one colour per group:

* boxes are work: ``CI`` copy-in, ``AG`` / ``RS`` / ``AR`` the collectives, ``CO``
  copy-out into the unsharded parameters, ``F`` / ``B`` a module's forward / backward,
  ``P`` a prefetch decision, ``G`` gradients ready, ``x`` a free (of the unsharded
  parameters on ``compute``, of a collective buffer elsewhere; red outline);
* dots are recorded events and triangles the waits on them, joined by a line: the
  cross-stream ordering a GPU would enforce; diamonds are whole-stream waits.

:func:`figure_style` and :func:`svg_text` are the project's one recipe for SVG figures
(the design pages' figures and the benchmark chart use them too): matplotlib's own
defaults, a font that ships with matplotlib, text kept as ``<text>`` (searchable, and
measurable by the site's browser test), a fixed ``svg.hashsalt`` and no date, so the
output depends only on the data and the matplotlib version.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import math
import textwrap
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import torch

from ..recorder import TraceEvent
from ..streams import CommStreams, Stream

__all__ = ["STREAMS", "figure_style", "main", "record_step", "render_svg", "svg_text"]


def _stream_names() -> tuple[str, ...]:
    ctx = CommStreams()
    return (ctx.current().name,
            *(value.name for value in vars(ctx).values() if isinstance(value, Stream)))


STREAMS: tuple[str, ...] = _stream_names()
"""Every stream of the protocol: compute, then :class:`~fsdp_ref.streams.CommStreams`'s
side streams in the order it creates them. These are the names the recorder logs and
the rows of every timeline figure (this one and the design pages' model)."""

#: Matplotlib settings shared by every figure of the project (see :func:`figure_style`).
RC: dict[str, Any] = {
    "svg.fonttype": "none",          # text stays <text>, not glyph paths
    "svg.hashsalt": "fsdp-ref",      # clip-path and marker ids do not change per run
    "font.family": "DejaVu Sans",    # ships with matplotlib: the same metrics everywhere
    "font.size": 8.0,
    "axes.titlesize": 8.0,
    "axes.labelsize": 8.0,
    "xtick.labelsize": 7.5,
    "ytick.labelsize": 7.5,
    "legend.fontsize": 7.5,
    "figure.titlesize": 9.0,
    "figure.titleweight": "bold",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "path.simplify": False,
}

#: Width of every figure, in inches: 672 px at the browser's 96 px/inch, inside the
#: site's 688 px article column, so 7 pt text shows at 9.3 px.
FIGURE_WIDTH_IN = 7.0

_WORK = {"copy_in": "CI", "copy_out": "CO", "forward": "F", "backward": "B", "prefetch": "P",
         "grad_ready": "G", "free": "x"}
_COLLECTIVE = {"all_gather": "AG", "reduce_scatter": "RS", "all_reduce": "AR"}
_WORK_W, _SYNC_W, _GAP = 1.0, 0.45, 0.12   # issue-order units of a box, a marker, a gap
_STRIP_UNITS = 30.0                         # at most this many units per strip


@contextlib.contextmanager
def figure_style() -> Iterator[None]:
    """Matplotlib's defaults plus :data:`RC`, whatever the user's ``matplotlibrc`` says.

    Draw *and* save inside the context: matplotlib reads the settings at both times.
    """
    import matplotlib
    import matplotlib.style

    with matplotlib.style.context("default"), matplotlib.rc_context(RC):
        yield


def svg_text(fig: Any, title: str) -> str:
    """The SVG document of a matplotlib figure, byte-identical for identical input.

    Args:
        fig: a :class:`matplotlib.figure.Figure` drawn under :func:`figure_style`.
        title: the accessible ``<title>`` of the document.

    Returns:
        SVG text without a date or the producing matplotlib version.
    """
    out = io.StringIO()
    with figure_style():
        fig.savefig(out, format="svg", metadata={"Title": title, "Date": None, "Creator": None})
    return out.getvalue()


def record_step(n_layers: int = 4, steps_before: int = 1) -> list[TraceEvent]:
    """Train a small GPT under ``fully_shard`` and record one steady-state step.

    Records the accelerator's code path (side streams, events, the GPU's buffer
    lifetimes) on the race detector's virtual streams, which also checks that the
    recorded step is race-free. Uses the default process group when one exists, else a
    fake two-rank group in this process (destroyed afterwards): one rank alone issues no
    collective at all.

    Args:
        n_layers: transformer blocks, each its own ``fully_shard`` group.
        steps_before: unrecorded steps first, so lazy initialization is not drawn.

    Returns:
        The events of forward, backward and the optimizer step, in issue order.
    """
    import torch.distributed as dist
    import torch.nn.functional as F

    from .. import fully_shard
    from ..examples.gpt import GPT, GPTConfig
    from ..recorder import record
    from ..sanitizer import detect

    owned = not dist.is_initialized()
    if owned:  # two ranks, so that collectives are issued (one rank issues none)
        from torch.testing._internal.distributed.fake_pg import FakeStore

        dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=2)
    try:
        with detect():  # the GPU path, checked race-free
            torch.manual_seed(0)
            cfg = GPTConfig(vocab_size=32, seq_len=8, dim=16, n_layers=n_layers, n_heads=2)
            model = GPT(cfg)
            for block in model.blocks:
                fully_shard(block)
            fully_shard(model)
            optim = torch.optim.SGD(model.parameters(), lr=0.1)
            tokens = torch.randint(0, cfg.vocab_size, (2, cfg.seq_len + 1))

            def step() -> None:
                logits = model(tokens[:, :-1])
                F.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten()).backward()
                optim.step()
                optim.zero_grad()

            for _ in range(steps_before):
                step()
            with record() as events:
                step()
                return list(events)
    finally:
        if owned:
            dist.destroy_process_group()


def _label(ev: TraceEvent) -> str:
    if ev.kind == "collective":
        return _COLLECTIVE.get(ev.detail, ev.detail[:2].upper())
    return _WORK.get(ev.kind, "")


def _strips(events: Sequence[TraceEvent]) -> list[tuple[str, list[int]]]:
    """Event indices per strip: each phase cut into strips of equal length (by midpoint)."""
    first_bwd = next((i for i, ev in enumerate(events) if ev.kind == "backward"), len(events))
    phases = [("forward", range(0, first_bwd)),
              ("backward, final callback and optimizer step", range(first_bwd, len(events)))]
    strips: list[tuple[str, list[int]]] = []
    for name, indices in phases:
        widths = [(_WORK_W if _label(events[i]) else _SYNC_W) + _GAP for i in indices]
        if not widths:
            continue
        count = math.ceil(sum(widths) / _STRIP_UNITS)
        per_strip = sum(widths) / count
        buckets: list[list[int]] = [[] for _ in range(count)]
        used = 0.0
        for i, w in zip(indices, widths):
            buckets[min(count - 1, int((used + w / 2) / per_strip))].append(i)
            used += w
        strips += [(name, bucket) for bucket in buckets]
    return strips


def _draw_strip(ax: Any, events: Sequence[TraceEvent], indices: list[int],
                rows: list[str], color: dict[str, Any]) -> None:
    """One strip: a row per stream, boxes for work, markers for synchronization."""
    for r in range(0, len(rows), 2):
        ax.axhspan(r - 0.5, r + 0.5, color="#f3f4f6", zorder=0, linewidth=0)
    x = 0.0
    recorded: dict[int, tuple[float, int]] = {}
    links: list[tuple[tuple[float, int], tuple[float, int]]] = []
    for i in indices:
        ev = events[i]
        row = rows.index(ev.stream)
        label = _label(ev)
        width = _WORK_W if label else _SYNC_W
        cx = x + width / 2
        if label:
            free = ev.kind == "free"
            ax.broken_barh([(x, width)], (row - 0.34, 0.68), facecolors=color[ev.group],
                           edgecolors="#c00000" if free else "none",
                           linewidth=1.2 if free else 0, zorder=2)
            ax.text(cx, row, label, ha="center", va="center", fontsize=7, color="white",
                    fontweight="bold", zorder=3)
        elif ev.kind == "record_event":
            recorded[ev.event_id] = (cx, row)
            ax.plot(cx, row, "o", markersize=3.5, color=color[ev.group], zorder=3)
        elif ev.kind == "wait_event":
            if ev.event_id in recorded:
                links.append((recorded[ev.event_id], (cx, row)))
            ax.plot(cx, row, "v", markersize=4, color=color[ev.group], zorder=3)
        else:
            ax.plot(cx, row, "D", markersize=3.5, color="#666666", zorder=3)
        x += width + _GAP
    for (x0, y0), (x1, y1) in links:
        ax.plot([x0, x1], [y0, y1], color="#9ca3af", linewidth=0.7, zorder=1)


def render_svg(events: Sequence[TraceEvent], title: str = "") -> str:
    """The SVG text of the timeline of ``events``.

    Args:
        events: a recorded step (see :func:`record_step`).
        title: a heading drawn above the figure (also its accessible title).

    Returns:
        A standalone SVG document, :data:`FIGURE_WIDTH_IN` wide.

    Raises:
        ValueError: if an event names a stream that is not in :data:`STREAMS`.
    """
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    unknown = sorted({ev.stream for ev in events} - set(STREAMS))
    if unknown:
        raise ValueError(f"events on unknown streams {unknown}; known: {list(STREAMS)}")
    rows = [s for s in STREAMS if any(ev.stream == s for ev in events)]
    groups = list(dict.fromkeys(ev.group for ev in events if ev.group))
    strips = _strips(events)
    with figure_style():
        import matplotlib

        palette = matplotlib.colormaps["tab10"].colors
        color: dict[str, Any] = {g: palette[i % len(palette)] for i, g in enumerate(groups)}
        color[""] = "#999999"
        strip_h = 0.22 * len(rows) + 0.32
        fig = Figure(figsize=(FIGURE_WIDTH_IN, strip_h * len(strips) + 1.5), layout="constrained")
        axes = fig.subplots(len(strips), 1, squeeze=False)[:, 0]
        for ax, (phase, indices) in zip(axes, strips):
            _draw_strip(ax, events, indices, rows, color)
            ax.set_xlim(-_GAP, _STRIP_UNITS + _WORK_W)
            ax.set_ylim(len(rows) - 0.5, -0.5)
            ax.set_yticks(range(len(rows)), rows)
            ax.set_xticks([])
            ax.tick_params(axis="y", length=0)
            for side in ("left", "bottom"):
                ax.spines[side].set_visible(False)
            ax.set_title(f"{phase}: steps {indices[0] + 1}–{indices[-1] + 1} of {len(events)}",
                         loc="left")
        handles = [Patch(color=color[g], label=g) for g in groups] + [
            Patch(facecolor="white", edgecolor="#c00000", label="free"),
            Line2D([], [], marker="o", linestyle="", color="#555555", label="event recorded"),
            Line2D([], [], marker="v", linestyle="", color="#555555", label="wait on the event"),
            Line2D([], [], marker="D", linestyle="", color="#666666", label="wait on a stream"),
        ]
        fig.legend(handles=handles, loc="outside lower center", ncols=5, frameon=False,
                   title="CI copy-in, AG all-gather, CO copy-out, F forward, B backward, "
                         "P prefetch, G grads ready,\nRS reduce-scatter, AR all-reduce, x free. "
                         "x axis: issue order, not time.", title_fontsize=7.5)
        if title:
            fig.suptitle("\n".join(textwrap.wrap(title, 90)))
    return svg_text(fig, title or "Timeline of one training step")


def main(argv: list[str] | None = None) -> None:
    """CLI: record a step and write the SVG (default ``docs/assets/timeline.svg``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, default=Path("docs/assets/timeline.svg"))
    parser.add_argument("--layers", type=int, default=4)
    args = parser.parse_args(argv)
    events = record_step(args.layers)
    title = (f"One training step of a {args.layers}-block GPT under fsdp_ref.fully_shard "
             "(default settings), per stream, in issue order")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(render_svg(events, title))
    print(f"wrote {args.out} ({len(events)} events)")


if __name__ == "__main__":
    main()
