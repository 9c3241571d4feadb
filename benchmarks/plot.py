"""A dependency-free SVG bar chart of ``compare.py`` results (deterministic output).

Two panels: median step time with min–max whiskers, and peak memory per rank; one group
of bars per world size, one bar per contender.
"""

from __future__ import annotations

from html import escape

__all__ = ["render_comparison"]

COLORS = {"fsdp_ref": "#1f77b4", "torch_fsdp": "#ff7f0e", "ddp": "#7f7f7f"}
LABELS = {"fsdp_ref": "fsdp_ref fully_shard", "torch_fsdp": "torch fully_shard", "ddp": "torch DDP"}


def _nice_max(value: float) -> float:
    """The smallest 1/2/5 x 10^k at or above ``value``."""
    if value <= 0:
        return 1.0
    scale = 1.0
    while scale * 10 < value:
        scale *= 10
    while scale > value:
        scale /= 10
    for step in (1, 2, 5, 10):
        if step * scale >= value:
            return step * scale
    return 10 * scale


def _panel(x0, y0, w, h, title, unit, groups, impls, value, whisker=None):
    """One bar panel; ``groups`` is a list of (label, result)."""
    out = []
    top = max(
        (whisker(r, i)[1] if whisker else value(r, i)) for _, r in groups for i in impls
    )
    ymax = _nice_max(top * 1.1)
    out.append(f'<text x="{x0 + w / 2:.1f}" y="{y0 - 10}" text-anchor="middle" '
               f'font-weight="bold">{escape(title)}</text>')
    for k in range(6):
        v = ymax * k / 5
        y = y0 + h - h * k / 5
        out.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x0 + w}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{x0 - 6}" y="{y + 4:.1f}" text-anchor="end">{v:g}</text>')
    out.append(f'<text x="{x0 - 42}" y="{y0 + h / 2:.1f}" text-anchor="middle" '
               f'transform="rotate(-90 {x0 - 42} {y0 + h / 2:.1f})">{escape(unit)}</text>')
    gw = w / len(groups)
    bw = gw * 0.8 / len(impls)
    for g, (label, r) in enumerate(groups):
        gx = x0 + g * gw + gw * 0.1
        for j, impl in enumerate(impls):
            v = value(r, impl)
            bh = h * v / ymax
            bx = gx + j * bw
            out.append(f'<rect x="{bx:.1f}" y="{y0 + h - bh:.1f}" width="{bw * 0.9:.1f}" '
                       f'height="{bh:.1f}" fill="{COLORS[impl]}"><title>{escape(impl)}: '
                       f'{v:.2f} {escape(unit)}</title></rect>')
            out.append(f'<text x="{bx + bw * 0.45:.1f}" y="{y0 + h - bh - 4:.1f}" '
                       f'text-anchor="middle" font-size="10">{v:.1f}</text>')
            if whisker:
                lo, hi = whisker(r, impl)
                cx = bx + bw * 0.45
                ylo, yhi = y0 + h - h * lo / ymax, y0 + h - h * hi / ymax
                out.append(f'<line x1="{cx:.1f}" y1="{ylo:.1f}" x2="{cx:.1f}" y2="{yhi:.1f}" '
                           'stroke="#000"/>')
                for yy in (ylo, yhi):
                    out.append(f'<line x1="{cx - 4:.1f}" y1="{yy:.1f}" x2="{cx + 4:.1f}" '
                               f'y2="{yy:.1f}" stroke="#000"/>')
        out.append(f'<text x="{x0 + g * gw + gw / 2:.1f}" y="{y0 + h + 18}" '
                   f'text-anchor="middle">{escape(label)}</text>')
    out.append(f'<line x1="{x0}" y1="{y0 + h}" x2="{x0 + w}" y2="{y0 + h}" stroke="#000"/>')
    return out


def render_comparison(results: list[dict]) -> str:
    """SVG text comparing the contenders at every world size in ``results``."""
    results = sorted(results, key=lambda r: r["world_size"])
    impls = [i for i in COLORS if all(i in r["impls"] for r in results)]
    groups = [(f"{r['world_size']} ranks ({r['backend']})", r) for r in results]
    width, height = 820, 380
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="#fff"/>',
    ]
    parts += _panel(
        80, 50, 300, 250, "step time (median, min-max)", "ms", groups, impls,
        lambda r, i: r["impls"][i]["step_ms"]["median"],
        lambda r, i: (r["impls"][i]["step_ms"]["min"], r["impls"][i]["step_ms"]["max"]),
    )
    parts += _panel(
        490, 50, 300, 250, "peak memory per rank", "MiB", groups, impls,
        lambda r, i: r["impls"][i]["peak_bytes"] / 2**20,
    )
    for j, impl in enumerate(impls):
        x = 120 + j * 220
        parts.append(f'<rect x="{x}" y="{height - 30}" width="12" height="12" '
                     f'fill="{COLORS[impl]}"/>')
        parts.append(f'<text x="{x + 18}" y="{height - 20}">{escape(LABELS[impl])}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
