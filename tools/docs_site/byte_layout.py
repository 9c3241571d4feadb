"""The mixed-dtype group's byte layout, drawn from the library's own buffer plan.

A frozen bf16 linear (32x32 weight, bias) beside two fp32 LoRA adapters (4x32, 32x4),
sharded over 2 ranks: :meth:`fsdp_ref.collectives.BufferPlan.of` places each input in a
rank's row of the all-gather buffer, and the figure draws that plan, one group per block
(one byte buffer) against two groups (a bf16 buffer and an fp32 buffer), so a change in
the layout code changes the picture.
"""

from __future__ import annotations

import torch

from fsdp_ref.collectives import BufferPlan
from fsdp_ref.tools.timeline import FIGURE_WIDTH_IN, figure_style, svg_text

__all__ = ["MIXED_GROUP", "render_byte_layout"]

WORLD = 2
MIXED_GROUP = [  # (name, full shape, dtype): the block of tests/extensions/scenarios_mixed.py
    ("base.weight", (32, 32), torch.bfloat16),
    ("base.bias", (32,), torch.bfloat16),
    ("lora_a.weight", (4, 32), torch.float32),
    ("lora_b.weight", (32, 4), torch.float32),
]
_COLORS = {torch.bfloat16: ("#4f7cc2", "#9fb6d9"), torch.float32: ("#d9822b", "#f2c08f")}


def _shard_numel(shape: tuple[int, ...]) -> int:
    rows = -(-shape[0] // WORLD)
    return rows * (torch.Size(shape[1:]).numel())


def _row(ax, y: float, plan: BufferPlan, items: list, label: str) -> None:
    """Draw one rank's row of ``plan`` at height ``y``, in bytes from 0."""
    unit = plan.dtype.itemsize
    for k, (name, _, dtype) in enumerate(items):
        start, size = plan.offsets[k] * unit, plan.sizes[k] * unit
        color = _COLORS[dtype][k % 2]
        ax.broken_barh([(start, size)], (y - 0.35, 0.7), facecolors=color, edgecolor="white")
        if size >= 200:
            ax.text(start + size / 2, y, f"{name}\n{str(dtype)[6:]}, {size} B", ha="center",
                    va="center", fontsize=7)
    ax.text(plan.width * unit + 12, y, label, va="center", fontsize=7)


def render_byte_layout() -> str:
    """The mixed group's all-gather rows: one byte buffer vs a buffer per dtype.

    Returns:
        A standalone SVG document.
    """
    numels = [_shard_numel(shape) for _, shape, _ in MIXED_GROUP]
    one = BufferPlan.of(numels, [d for *_, d in MIXED_GROUP], WORLD)
    bf16, fp32 = MIXED_GROUP[:2], MIXED_GROUP[2:]
    two = [BufferPlan.of(numels[:2], [d for *_, d in bf16], WORLD),
           BufferPlan.of(numels[2:], [d for *_, d in fp32], WORLD)]
    with figure_style():
        from matplotlib.figure import Figure

        fig = Figure(figsize=(FIGURE_WIDTH_IN, 2.3), layout="constrained")
        ax = fig.subplots()
        _row(ax, 2, one, MIXED_GROUP, f"one group: uint8,\n{one.width} B a rank")
        _row(ax, 1, two[0], bf16, f"two groups: bf16,\n{two[0].width * 2} B a rank")
        _row(ax, 0, two[1], fp32, f"and fp32,\n{two[1].width * 4} B a rank")
        bias_end = (one.offsets[1] + one.sizes[1]) * one.dtype.itemsize
        ax.text(bias_end + 4, 1.45, f"base.bias: {one.sizes[1]} B", fontsize=7, va="bottom")
        ax.set_xlim(0, one.width * 1.3)
        ax.set_ylim(-0.6, 2.6)
        ax.set_yticks([])
        ax.set_xlabel(f"bytes in one rank's row (the all-gather output holds {WORLD} rows, "
                      "one per rank)")
        fig.suptitle("A frozen bf16 base and fp32 adapters: one all-gather of bytes, "
                     "or one per dtype")
        return svg_text(fig, "Byte layout of a mixed-dtype group's all-gather buffer")
