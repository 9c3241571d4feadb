"""Figures of the design pages, generated as SVG from a small stream model.

The figures are not drawings: they are the output of a tiny discrete-event
scheduler that replays the order in which FSDP2 issues work on its streams.
Each :class:`Op` is placed on one stream; a stream runs its ops in issue
order (FIFO, like a CUDA stream) and an op additionally waits for the ops in
``deps`` to finish (like ``stream.wait_event(event)`` on an event recorded
after them). :func:`schedule` turns the ops into timed :class:`Span` objects
and the ``render_*`` functions draw them.

The default workload (:func:`fsdp2_iteration`) models one training iteration
of a model whose layers were each wrapped with ``fully_shard`` and whose root
keeps its parameters after forward (``reshard_after_forward=False`` at the
root). Durations are illustrative units, not measurements; the *shape* of
the schedule (which stream waits on which, what overlaps with what, how many
layers are unsharded at once) is the point.

The renderers only need a list of spans, so a recorded event log (for
example from ``fsdp_ref``'s stream recorder) can be drawn the same way by
building :class:`Span` objects from it.

Typical use (what the MkDocs hook does)::

    from docs_site import figures
    for name, svg in figures.all_figures().items():
        print(name, len(svg))
"""

from __future__ import annotations

from dataclasses import dataclass, field
from xml.sax.saxutils import escape

__all__ = [
    "Op",
    "Span",
    "STREAMS",
    "schedule",
    "fsdp2_iteration",
    "unsharded_layers",
    "render_timeline",
    "render_stream_diagram",
    "all_figures",
]

#: Streams of one FSDP2 process, in drawing order: (key, label shown on the figure).
STREAMS: tuple[tuple[str, str], ...] = (
    ("compute", "default (compute)"),
    ("ag_copy_in", "all-gather copy-in"),
    ("all_gather", "all-gather"),
    ("reduce_scatter", "reduce-scatter"),
    ("all_reduce", "all-reduce (HSDP)"),
)

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


@dataclass(frozen=True)
class Op:
    """One unit of work issued on a stream.

    Attributes:
        name: Unique name, also used as the label drawn on the figure.
        stream: Key of the stream (see :data:`STREAMS`) the op runs on.
        kind: Kind of work; selects the colour (see :data:`COLORS`).
        duration: Run time in arbitrary units.
        deps: Names of earlier ops this op waits for (event waits).
        layer: Layer the op belongs to, or ``None`` for whole-model ops.
    """

    name: str
    stream: str
    kind: str
    duration: float
    deps: tuple[str, ...] = ()
    layer: int | None = None


@dataclass(frozen=True)
class Span:
    """An op placed in time by :func:`schedule`.

    Attributes:
        op: The scheduled op.
        start: Start time.
        end: End time (``start + op.duration``).
        waited_on: Names of the deps that actually delayed the start (the
            arrows drawn on the stream diagram).
    """

    op: Op
    start: float
    end: float
    waited_on: tuple[str, ...] = field(default=())


def schedule(ops: list[Op]) -> list[Span]:
    """Place ops in time: FIFO per stream plus cross-stream event waits.

    Args:
        ops: Ops in CPU issue order. Every name in ``deps`` must refer to an
            op earlier in the list.

    Returns:
        One span per op, in the same order.

    Raises:
        ValueError: If an op depends on an unknown or later op, or names are
            not unique.
    """
    stream_free: dict[str, float] = {}
    ends: dict[str, float] = {}
    spans: list[Span] = []
    for op in ops:
        if op.name in ends:
            raise ValueError(f"duplicate op name {op.name!r}")
        missing = [d for d in op.deps if d not in ends]
        if missing:
            raise ValueError(f"{op.name!r} depends on unknown or later ops {missing}")
        ready = stream_free.get(op.stream, 0.0)
        start = max([ready] + [ends[d] for d in op.deps])
        waited = tuple(d for d in op.deps if ends[d] > ready and ends[d] == start)
        end = start + op.duration
        stream_free[op.stream] = end
        ends[op.name] = end
        spans.append(Span(op, start, end, waited))
    return spans


def fsdp2_iteration(
    num_layers: int = 4,
    forward: float = 1.0,
    backward: float = 2.0,
    copy_in: float = 0.15,
    copy_out: float = 0.15,
    all_gather: float = 0.8,
    reduce_scatter: float = 0.9,
    all_reduce: float = 0.6,
    optimizer: float = 0.8,
    hsdp: bool = False,
) -> list[Op]:
    """Ops of one FSDP2 iteration in the order FSDP2 issues them.

    Layer ``0`` is the root's own parameter group (e.g. embeddings); the root
    does not reshard after forward, so it is not all-gathered again in
    backward. Layers ``1..num_layers`` reshard after forward.

    Forward, per layer (``pre_forward``): copy-in of the ``Shard(0)`` shards
    into the flat all-gather input on the copy-in stream, the all-gather on
    the all-gather stream, then the compute stream waits for it, copies out
    into the unsharded (``Replicate()``) parameters and runs the forward.
    Because the CPU runs ahead of the GPU, layer ``i+1``'s all-gather runs
    while layer ``i`` computes (implicit forward prefetching); the copy-in of
    layer ``i+1`` waits for the copy-out of layer ``i-1``, which bounds how
    far ahead the all-gathers can run.

    Backward, per layer in reverse (``pre_backward``): copy-out of the
    layer's all-gather (already issued as a prefetch), then the all-gather of
    the previous layer is prefetched, then the backward compute. In
    ``post_backward`` the compute stream waits for the previous
    reduce-scatter (one reduce-scatter input buffer in flight by default),
    copies the unsharded ``Partial()`` gradients into the flat reduce-scatter
    input, and the reduce-scatter stream reduces them to ``Shard(0)``; with
    HSDP an all-reduce across replicas follows on its own stream. The
    optimizer step waits for the last reduction (``finalize_backward``).

    Args:
        num_layers: Number of ``fully_shard``-ed layers below the root.
        forward: Forward compute time of one layer.
        backward: Backward compute time of one layer.
        copy_in: Time to copy shards into the all-gather input buffer.
        copy_out: Time to copy the all-gather output into the parameters.
        all_gather: All-gather time of one layer.
        reduce_scatter: Reduce-scatter time of one layer.
        all_reduce: HSDP all-reduce time of one layer.
        optimizer: Optimizer step time (whole model, on shards).
        hsdp: Whether to add the replica all-reduce (2-D mesh).

    Returns:
        Ops in issue order, ready for :func:`schedule`.

    Raises:
        ValueError: If ``num_layers`` is smaller than 1.
    """
    if num_layers < 1:
        raise ValueError("num_layers must be >= 1")
    ops: list[Op] = []
    layers = list(range(num_layers + 1))

    def gather(layer: int, tag: str, *after: str) -> None:
        deps = tuple(after)
        ops.append(Op(f"CI{layer}{tag}", "ag_copy_in", "copy_in", copy_in, deps, layer))
        ops.append(Op(f"AG{layer}{tag}", "all_gather", "all_gather", all_gather,
                      (f"CI{layer}{tag}",), layer))

    def copy_out_op(layer: int, tag: str) -> None:
        ops.append(Op(f"CO{layer}{tag}", "compute", "copy_out", copy_out,
                      (f"AG{layer}{tag}",), layer))

    # Forward.
    for layer in layers:
        gather(layer, "", *([f"CO{layer - 2}"] if layer >= 2 else []))
        copy_out_op(layer, "")
        ops.append(Op(f"F{layer}", "compute", "forward", forward, (), layer))

    # Backward: reverse order; the root (layer 0) kept its unsharded parameters.
    last = layers[-1]
    # The all-gather streams wait for the reshard-after-forward event.
    gather(last, "b", f"F{last}")
    reductions: list[str] = []
    prev_rs: str | None = None
    for layer in reversed(layers):
        if layer >= 1:
            copy_out_op(layer, "b")
        if layer - 1 >= 1:
            gather(layer - 1, "b", f"F{layer - 1}", f"CO{layer}b")
        ops.append(Op(f"B{layer}", "compute", "backward", backward, (), layer))
        ops.append(Op(f"RC{layer}", "compute", "rs_copy_in", copy_in,
                      (prev_rs,) if prev_rs else (), layer))
        ops.append(Op(f"RS{layer}", "reduce_scatter", "reduce_scatter", reduce_scatter,
                      (f"RC{layer}",), layer))
        prev_rs = f"RS{layer}"
        reductions.append(prev_rs)
        if hsdp:
            ops.append(Op(f"AR{layer}", "all_reduce", "all_reduce", all_reduce,
                          (f"RS{layer}",), layer))
            reductions.append(f"AR{layer}")
    ops.append(Op("optim", "compute", "optimizer", optimizer, tuple(reductions[-2:]), None))
    return ops


def unsharded_layers(spans: list[Span]) -> list[tuple[float, int]]:
    """Step function of how many layers hold unsharded parameters.

    A layer's unsharded buffer is allocated when its copy-in starts and freed
    when the compute that used it ends (forward for resharding layers,
    backward otherwise). The root (layer 0) is freed only after its backward.

    Args:
        spans: Output of :func:`schedule` for :func:`fsdp2_iteration` ops.

    Returns:
        ``(time, count)`` points, sorted by time; the count holds until the
        next point.
    """
    deltas: list[tuple[float, int]] = []
    for span in spans:
        op = span.op
        if op.kind == "copy_in":
            deltas.append((span.start, +1))
        elif op.kind == "forward" and op.layer not in (None, 0):
            deltas.append((span.end, -1))
        elif op.kind == "backward":
            deltas.append((span.end, -1))
    deltas.sort(key=lambda d: (d[0], d[1]))
    points: list[tuple[float, int]] = [(0.0, 0)]
    count = 0
    for time, delta in deltas:
        count += delta
        if points and points[-1][0] == time:
            points[-1] = (time, count)
        else:
            points.append((time, count))
    return points


# ---------------------------------------------------------------------------
# SVG rendering (hand-written; no plotting library needed)
# ---------------------------------------------------------------------------

_FONT = "font-family:Inter,Roboto,Helvetica,Arial,sans-serif"
_LABEL_W = 150
_LANE_H = 34
_BAR_H = 24


def _svg_open(width: float, height: float, title: str) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0f} {height:.0f}" '
        f'width="{width:.0f}" height="{height:.0f}" role="img" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
        f'<rect x="0" y="0" width="{width:.0f}" height="{height:.0f}" rx="8" fill="#fcfcfd" stroke="#d0d4db"/>',
    ]


def _text(x: float, y: float, s: str, size: int = 12, anchor: str = "start",
          fill: str = "#1f2937", weight: str = "normal") -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
        f'fill="{fill}" font-weight="{weight}" style="{_FONT}">{escape(s)}</text>'
    )


def _lanes(spans: list[Span]) -> list[tuple[str, str]]:
    used = {s.op.stream for s in spans}
    return [(key, label) for key, label in STREAMS if key in used]


def _legend(kinds: list[str], x0: float, y: float, width: float) -> tuple[list[str], float]:
    """Draw legend entries, wrapping at ``width``; return the elements and the last row's y."""
    out: list[str] = []
    x = x0
    for kind in kinds:
        label = KIND_LABELS[kind]
        item_w = 24 + 6.2 * len(label)
        if x + item_w > width - 10 and x > x0:
            x, y = x0, y + 20
        out.append(f'<rect x="{x:.1f}" y="{y - 10:.1f}" width="12" height="12" rx="2" fill="{COLORS[kind]}"/>')
        out.append(_text(x + 17, y, label, 11))
        x += item_w
    return out, y


def _bars(spans: list[Span], lane_y: dict[str, float], x0: float, scale: float) -> list[str]:
    out: list[str] = []
    for span in spans:
        op = span.op
        x = x0 + span.start * scale
        w = max(1.0, (span.end - span.start) * scale)
        y = lane_y[op.stream] + (_LANE_H - _BAR_H) / 2
        out.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{_BAR_H}" rx="3" '
            f'fill="{COLORS[op.kind]}"><title>{escape(op.name)}: {span.start:g}–{span.end:g}</title></rect>'
        )
        if w >= 7 * len(op.name):
            out.append(_text(x + w / 2, y + _BAR_H / 2 + 4, op.name, 11, "middle", "#ffffff", "bold"))
    return out


def render_timeline(spans: list[Span], title: str = "One FSDP2 training iteration") -> str:
    """Render an iteration as a per-stream timeline with a memory strip.

    Args:
        spans: Scheduled spans (see :func:`schedule`).
        title: Accessible title of the figure.

    Returns:
        A standalone SVG document.
    """
    lanes = _lanes(spans)
    t_end = max(s.end for s in spans)
    width = 1000.0
    scale = (width - _LABEL_W - 30) / t_end
    top = 56.0
    lane_y = {key: top + i * _LANE_H for i, (key, _) in enumerate(lanes)}
    mem_top = top + len(lanes) * _LANE_H + 26
    mem_h = 60.0
    height = mem_top + mem_h + 70
    out = _svg_open(width, height, title)
    out.append(_text(16, 26, title, 15, weight="bold"))

    # Phase bands: forward / backward / optimizer, from the compute spans.
    phases: dict[str, list[float]] = {}
    for s in spans:
        if s.op.stream == "compute" and s.op.kind in ("forward", "backward", "optimizer"):
            phases.setdefault(s.op.kind, [s.start, s.end])
            phases[s.op.kind][1] = s.end
    if "forward" in phases:
        phases["forward"][0] = 0.0
    for kind, (a, b) in phases.items():
        xa, xb = _LABEL_W + a * scale, _LABEL_W + b * scale
        out.append(f'<rect x="{xa:.1f}" y="{top - 14:.1f}" width="{xb - xa:.1f}" '
                   f'height="{mem_top + mem_h - top + 14:.1f}" fill="{COLORS[kind]}" opacity="0.06"/>')
        out.append(_text((xa + xb) / 2, top - 4, kind, 11, "middle", "#4b5563"))

    for key, label in lanes:
        y = lane_y[key]
        out.append(f'<line x1="{_LABEL_W}" y1="{y + _LANE_H:.1f}" x2="{width - 20}" y2="{y + _LANE_H:.1f}" stroke="#e5e7eb"/>')
        out.append(_text(_LABEL_W - 10, y + _LANE_H / 2 + 4, label, 12, "end"))
    out += _bars(spans, lane_y, _LABEL_W, scale)

    # Memory strip: number of layers holding unsharded (Replicate()) parameters.
    points = unsharded_layers(spans)
    peak = max(c for _, c in points) or 1
    out.append(_text(_LABEL_W - 10, mem_top + mem_h / 2, "unsharded layers", 12, "end"))
    out.append(_text(_LABEL_W - 10, mem_top + mem_h / 2 + 14, f"(peak {peak})", 11, "end", "#6b7280"))
    path = [f"M{_LABEL_W:.1f},{mem_top + mem_h:.1f}"]
    for i, (t, c) in enumerate(points):
        x = _LABEL_W + t * scale
        y = mem_top + mem_h - c / peak * (mem_h - 6)
        if i:
            prev_y = mem_top + mem_h - points[i - 1][1] / peak * (mem_h - 6)
            path.append(f"L{x:.1f},{prev_y:.1f}")
        path.append(f"L{x:.1f},{y:.1f}")
    path.append(f"L{_LABEL_W + t_end * scale:.1f},{mem_top + mem_h:.1f}Z")
    out.append(f'<path d="{" ".join(path)}" fill="#2f9e77" fill-opacity="0.25" stroke="#2f9e77"/>')
    out.append(f'<line x1="{_LABEL_W}" y1="{mem_top + mem_h:.1f}" x2="{width - 20}" y2="{mem_top + mem_h:.1f}" stroke="#9ca3af"/>')

    kinds = [k for k in COLORS if any(s.op.kind == k for s in spans)]
    legend, _ = _legend(kinds, 16, height - 36, width)
    out += legend
    out.append("</svg>")
    return "\n".join(out) + "\n"


def render_stream_diagram(spans: list[Span], title: str = "Streams and events") -> str:
    """Render spans per stream with an arrow for every event wait that mattered.

    An arrow goes from the end of the op that recorded the event to the start
    of the op whose stream waited on it; only waits that actually delayed the
    op (``Span.waited_on``) are drawn, to keep the picture readable.

    Args:
        spans: Scheduled spans (see :func:`schedule`).
        title: Accessible title of the figure.

    Returns:
        A standalone SVG document.
    """
    lanes = _lanes(spans)
    t_end = max(s.end for s in spans)
    width = 1000.0
    scale = (width - _LABEL_W - 30) / t_end
    top = 48.0
    lane_h = _LANE_H + 22
    lane_y = {key: top + i * lane_h for i, (key, _) in enumerate(lanes)}
    height = top + len(lanes) * lane_h + 80
    out = _svg_open(width, height, title)
    out.append(
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#111827"/></marker></defs>'
    )
    out.append(_text(16, 26, title, 15, weight="bold"))
    for key, label in lanes:
        y = lane_y[key]
        out.append(f'<rect x="{_LABEL_W}" y="{y:.1f}" width="{width - _LABEL_W - 20:.1f}" height="{_LANE_H}" fill="#f3f4f6" rx="4"/>')
        out.append(_text(_LABEL_W - 10, y + _LANE_H / 2 + 4, label, 12, "end"))
    out += _bars(spans, lane_y, _LABEL_W, scale)
    by_name = {s.op.name: s for s in spans}
    for span in spans:
        for dep in span.waited_on:
            src = by_name[dep]
            x1 = _LABEL_W + src.end * scale
            y1 = lane_y[src.op.stream] + _LANE_H / 2
            x2 = _LABEL_W + span.start * scale
            y2 = lane_y[span.op.stream] + _LANE_H / 2
            if src.op.stream == span.op.stream:
                continue
            y1 += _BAR_H / 2 if y2 > y1 else -_BAR_H / 2
            y2 += -_BAR_H / 2 if y2 > y1 else _BAR_H / 2
            out.append(
                f'<path d="M{x1:.1f},{y1:.1f} C{x1 + 14:.1f},{y1:.1f} {x2 - 14:.1f},{y2:.1f} {x2:.1f},{y2:.1f}" '
                f'fill="none" stroke="#111827" stroke-width="1.2" marker-end="url(#arrow)">'
                f"<title>{escape(span.op.name)} waits on event recorded after {escape(dep)}</title></path>"
            )
    out.append(_text(16, height - 54, "Arrow: record_event() after the source op, wait_event() on the target op's stream "
                     "before it runs. Stream order alone serialises ops on one lane.", 11, fill="#4b5563"))
    kinds = [k for k in COLORS if any(s.op.kind == k for s in spans)]
    legend, _ = _legend(kinds, 16, height - 32, width)
    out += legend
    out.append("</svg>")
    return "\n".join(out) + "\n"


def all_figures() -> dict[str, str]:
    """Every figure of the site, keyed by its path under ``docs/``.

    Returns:
        Mapping such as ``{"figures/timeline.svg": "<svg ...>"}``.
    """
    iteration = schedule(fsdp2_iteration())
    zoom = schedule(fsdp2_iteration(num_layers=2, hsdp=True))
    return {
        "figures/timeline.svg": render_timeline(iteration),
        "figures/streams.svg": render_stream_diagram(
            zoom, "Streams and events: 2 layers + root, HSDP (2-D mesh)"
        ),
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
