"""Draw one training step from the stream-protocol recorder as an SVG timeline.

``python -m fsdp_ref.timeline docs/assets/timeline.svg`` trains a small GPT (one gloo
rank, in process), records its second step with :func:`fsdp_ref.streams.record`, and
writes the figure. The recorder has no clock, so the x axis is the *order* in which the
host issued each step of the protocol; one row per stream, one colour per group:

* boxes are work: ``CI`` copy-in, ``AG`` / ``RS`` / ``AR`` the collectives, ``CO``
  copy-out into the unsharded parameters, ``F`` / ``B`` a module's forward / backward,
  ``P`` a prefetch decision, ``G`` gradients ready, ``x`` a free (of the unsharded
  parameters on ``compute``, of a collective buffer elsewhere);
* dots are recorded events and triangles the waits on them, joined by a line: the
  cross-stream ordering a GPU would enforce; diamonds are whole-stream waits.

The output depends only on the recorded order, so it is byte-identical on every run.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from html import escape
from pathlib import Path

import torch

from .streams import TraceEvent

__all__ = ["STREAMS", "main", "record_step", "render_svg"]

STREAMS = ("compute", "all_gather_copy_in", "all_gather", "reduce_scatter", "all_reduce")
"""The rows of the figure, top to bottom."""

_WORK = {"copy_in": "CI", "copy_out": "CO", "forward": "F", "backward": "B", "prefetch": "P",
         "grad_ready": "G", "free": "x"}
_COLLECTIVE = {"all_gather": "AG", "reduce_scatter": "RS", "all_reduce": "AR"}
_PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#edc948",
            "#9c755f", "#ff9da7", "#bab0ac")
_WORK_W, _SYNC_W, _LANE_H, _LEFT, _TOP = 18, 6, 44, 150, 64


def record_step(n_layers: int = 4, steps_before: int = 1) -> list[TraceEvent]:
    """Train a small GPT under ``fully_shard`` and record one steady-state step.

    Uses the default process group when one exists, else a one-rank gloo group in this
    process (destroyed afterwards).

    Args:
        n_layers: transformer blocks, each its own ``fully_shard`` group.
        steps_before: unrecorded steps first, so lazy initialization is not drawn.

    Returns:
        The events of forward, backward and the optimizer step, in issue order.
    """
    import torch.distributed as dist
    import torch.nn.functional as F

    from . import fully_shard
    from .gpt import GPT, GPTConfig
    from .streams import record

    owned = not dist.is_initialized()
    if owned:
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
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


def render_svg(events: Sequence[TraceEvent], title: str = "") -> str:
    """The SVG text of the timeline of ``events``.

    Args:
        events: a recorded step (see :func:`record_step`).
        title: a heading drawn above the figure.

    Returns:
        A standalone SVG document.
    """
    groups: list[str] = []
    for ev in events:
        if ev.group and ev.group not in groups:
            groups.append(ev.group)
    color = {g: _PALETTE[i % len(_PALETTE)] for i, g in enumerate(groups)}
    color[""] = "#999"
    xs, x = [], _LEFT
    for ev in events:
        w = _WORK_W if _label(ev) else _SYNC_W
        xs.append((x, w))
        x += w + 1
    width = x + 20
    lanes_bottom = _TOP + _LANE_H * len(STREAMS)
    height = lanes_bottom + 80
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="#fff"/>',
        f'<text x="10" y="20" font-size="14" font-weight="bold">{escape(title)}</text>',
    ]
    for i, name in enumerate(STREAMS):
        y = _TOP + i * _LANE_H
        fill = "#f6f6f6" if i % 2 == 0 else "#fff"
        out.append(f'<rect x="{_LEFT - 4}" y="{y}" width="{width - _LEFT}" height="{_LANE_H}" '
                   f'fill="{fill}"/>')
        out.append(f'<text x="{_LEFT - 10}" y="{y + _LANE_H / 2 + 4:.0f}" '
                   f'text-anchor="end">{name}</text>')
    # phase band: forward until the first backward, then backward and the final callback
    first_bwd = next((i for i, ev in enumerate(events) if ev.kind == "backward"), len(events))
    bands = [("forward", 0, first_bwd), ("backward + final callback + optimizer", first_bwd,
                                           len(events))]
    for name, a, b in bands:
        if a >= b:
            continue
        x0, x1 = xs[a][0], xs[b - 1][0] + xs[b - 1][1]
        out.append(f'<line x1="{x0}" y1="{_TOP - 8}" x2="{x1}" y2="{_TOP - 8}" '
                   'stroke="#333" stroke-width="2"/>')
        out.append(f'<text x="{(x0 + x1) / 2:.0f}" y="{_TOP - 14}" '
                   f'text-anchor="middle">{escape(name)}</text>')
    recorded: dict[int, tuple[float, float]] = {}
    links = []
    marks = []
    for ev, (x0, w) in zip(events, xs):
        row = STREAMS.index(ev.stream) if ev.stream in STREAMS else 0
        y = _TOP + row * _LANE_H
        cx, cy = x0 + w / 2, y + _LANE_H / 2
        label = _label(ev)
        tip = escape(f"{ev.kind} {ev.detail} {ev.group}".strip())
        if label:
            stroke = ' stroke="#c00" stroke-width="1.5"' if ev.kind == "free" else ""
            marks.append(f'<rect x="{x0}" y="{y + 8}" width="{w}" height="{_LANE_H - 16}" '
                         f'fill="{color[ev.group]}"{stroke}><title>{tip}</title></rect>')
            marks.append(f'<text x="{cx:.1f}" y="{cy + 4:.1f}" text-anchor="middle" '
                         f'font-size="9" fill="#fff">{label}</text>')
        elif ev.kind == "record_event":
            recorded[ev.event_id] = (cx, cy)
            marks.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="2.5" '
                         f'fill="{color[ev.group]}"><title>{tip}</title></circle>')
        elif ev.kind == "wait_event":
            if ev.event_id in recorded:
                sx, sy = recorded[ev.event_id]
                links.append(f'<line x1="{sx:.1f}" y1="{sy:.1f}" x2="{cx:.1f}" y2="{cy:.1f}" '
                             'stroke="#aaa" stroke-width="0.8"/>')
            marks.append(f'<path d="M{cx - 3:.1f},{cy - 3:.1f} L{cx + 3:.1f},{cy - 3:.1f} '
                         f'L{cx:.1f},{cy + 3:.1f} Z" fill="{color[ev.group]}">'
                         f'<title>{tip}</title></path>')
        else:
            marks.append(f'<path d="M{cx:.1f},{cy - 3:.1f} L{cx + 3:.1f},{cy:.1f} '
                         f'L{cx:.1f},{cy + 3:.1f} L{cx - 3:.1f},{cy:.1f} Z" fill="#666">'
                         f'<title>{tip}</title></path>')
    out += links + marks
    ly = lanes_bottom + 24
    lx = _LEFT
    for g in groups:
        out.append(f'<rect x="{lx}" y="{ly - 10}" width="12" height="12" fill="{color[g]}"/>')
        out.append(f'<text x="{lx + 16}" y="{ly}">{escape(g)}</text>')
        lx += 24 + 7 * len(g)
    out.append(
        f'<text x="{_LEFT}" y="{ly + 24}">CI copy-in, AG all-gather, CO copy-out, F forward, '
        "B backward, P prefetch, G grads ready, RS reduce-scatter, AR all-reduce, "
        "x free (red outline); dot: event recorded, triangle: wait on it, diamond: "
        "wait on a whole stream. x axis: issue order, not time.</text>"
    )
    out.append("</svg>")
    return "\n".join(out) + "\n"


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
