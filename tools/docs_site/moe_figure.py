"""The Mixture-of-Experts page's figure: who holds which experts, and which collective
runs on which group.

The rank grid is the world mesh ``(ep, efsdp)`` as ``DeviceMesh`` lays it out (row-major:
rank ``r`` sits at ``(r // efsdp, r % efsdp)``), so a row is an ``efsdp`` group (the ranks
that hold the same experts, each a slice of them) and a column an ``ep`` group (the ranks
that exchange tokens). Below it, one block's collectives in forward and backward on their
three groups, in the order :func:`fsdp_ref.examples.moe.parallelize_moe`'s layout issues
them (counted per group by ``tests/examples/test_moe.py``).
"""

from __future__ import annotations

from typing import Any

from fsdp_ref.tools.timeline import FIGURE_WIDTH_IN, figure_style, svg_text

__all__ = ["BACKWARD_SLOT", "GROUP_COLORS", "STEPS", "mesh_groups", "render_moe_mesh"]

#: Colour of each process group (and of the collectives that run on it).
GROUP_COLORS = {"dp": "#4f7cc2", "efsdp": "#d9822b", "ep": "#2f9e77"}

#: One block's work in order: (time slot, group or "" for compute, label). Both
#: all-gathers (and both reduce-scatters) are issued together, one per mesh.
STEPS: list[tuple[int, str, str]] = [
    (0, "dp", "all-gather"), (0, "efsdp", "all-gather"), (1, "", "router"),
    (2, "ep", "all-to-all\ntokens\nout"), (3, "", "experts"),
    (4, "ep", "all-to-all\noutputs\nback"),
    (5, "dp", "all-gather"), (5, "efsdp", "all-gather"),
    (6, "ep", "all-to-all\ngrads\nout"), (7, "", "experts'\nbackward"),
    (8, "ep", "all-to-all\ngrads\nback"), (9, "", "router's\nbackward"),
    (10, "dp", "reduce-\nscatter"), (10, "efsdp", "reduce-\nscatter"),
]
#: First slot of backward.
BACKWARD_SLOT = 5


def mesh_groups(ep: int, efsdp: int) -> tuple[list[list[int]], list[list[int]]]:
    """The ``efsdp`` groups (rows) and ``ep`` groups (columns) of an ``(ep, efsdp)`` mesh.

    Returns:
        ``(efsdp_groups, ep_groups)``, each a list of rank lists.
    """
    rows = [list(range(i * efsdp, (i + 1) * efsdp)) for i in range(ep)]
    cols = [list(range(j, ep * efsdp, efsdp)) for j in range(efsdp)]
    return rows, cols


def _grid(ax: Any, ep: int, efsdp: int, num_experts: int) -> None:
    """Rank boxes, efsdp rows, ep columns and the dp outline."""
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    rows, cols = mesh_groups(ep, efsdp)
    n_local = num_experts // ep
    w, h, dx, dy = 1.25, 0.8, 1.55, 1.45
    for i, row in enumerate(rows):
        y = -i * dy
        ax.add_patch(FancyBboxPatch((-0.2, y - 0.15), dx * (efsdp - 1) + w + 0.4, h + 0.3,
                                    boxstyle="round,pad=0.02", fc=GROUP_COLORS["efsdp"],
                                    alpha=0.25, ec="none"))
        first, last = i * n_local, (i + 1) * n_local - 1
        ax.text(dx * (efsdp - 1) + w + 0.35, y + h / 2,
                f"efsdp {row}:\nE{first}-E{last}, 1/{efsdp}\nof them a rank",
                fontsize=7, va="center", color="#8a4b0f")
        for j, rank in enumerate(row):
            ax.add_patch(FancyBboxPatch((j * dx, y), w, h, boxstyle="round,pad=0.02",
                                        fc="white", ec="#444444"))
            ax.text(j * dx + w / 2, y + h / 2, f"rank {rank}\nE{first}-E{last}: 1/{efsdp}",
                    ha="center", va="center", fontsize=7)
    for j, col in enumerate(cols):
        x = j * dx + w / 2
        ax.add_patch(FancyArrowPatch((x, -dy + h + 0.02), (x, -0.02), arrowstyle="<->",
                                     mutation_scale=9, color=GROUP_COLORS["ep"], lw=1.4))
        ax.text(x + 0.06, -dy + h + (dy - h) / 2, f"ep {col}", fontsize=7, va="center",
                color=GROUP_COLORS["ep"])
    ax.add_patch(FancyBboxPatch((-0.35, -(ep - 1) * dy - 0.3), dx * (efsdp - 1) + w + 0.7,
                                (ep - 1) * dy + h + 0.6, boxstyle="round,pad=0.02", fc="none",
                                ec=GROUP_COLORS["dp"], ls="--", lw=1.2))
    ax.text(-0.35, h + 0.4, f"dp mesh: all {ep * efsdp} ranks (router, norms, dense SwiGLU, "
            "embedding, head)", fontsize=7, color=GROUP_COLORS["dp"])
    ax.set_xlim(-0.5, dx * (efsdp - 1) + w + 2.4)
    ax.set_ylim(-(ep - 1) * dy - 0.45, h + 0.7)


def _steps(ax: Any) -> None:
    """One block's collectives as boxes on three lanes (dp, efsdp, ep) plus compute."""
    lanes = ["dp", "efsdp", "ep", ""]
    for slot, group, label in STEPS:
        row = lanes.index(group)
        ax.broken_barh([(slot, 0.94)], (row - 0.45, 0.9), edgecolor="white",
                       facecolors=GROUP_COLORS.get(group, "#e5e5e5"))
        ax.text(slot + 0.47, row, label, ha="center", va="center", fontsize=7,
                color="white" if group else "black")
    end = max(slot for slot, _, _ in STEPS) + 1
    ax.axvline(BACKWARD_SLOT - 0.03, color="#888888", lw=0.8, ls=":")
    ax.set_yticks(range(len(lanes)), ["dp", "efsdp", "ep", "compute"])
    ax.set_ylim(len(lanes) - 0.5, -0.5)
    ax.set_xlim(-0.05, end + 0.05)
    ax.set_xticks([])
    ax.tick_params(axis="y", length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.set_title("One block: forward | backward (blocks reshard after forward, so backward "
                 "all-gathers again)", fontsize=8, loc="left")


def render_moe_mesh(ep: int = 2, efsdp: int = 4, num_experts: int = 4) -> str:
    """The world mesh of an MoE run and one block's collectives on its three groups.

    Args:
        ep: ranks that share the experts by expert parallelism (the mesh's rows).
        efsdp: ranks that FSDP-shard the same experts (the mesh's columns).
        num_experts: routed experts per block (divisible by ``ep``).

    Returns:
        A standalone SVG document.
    """
    with figure_style():
        from matplotlib.figure import Figure

        fig = Figure(figsize=(FIGURE_WIDTH_IN, 5.2), layout="constrained")
        top, bottom = fig.subplots(2, 1, height_ratios=[2.0, 1.4])
        _grid(top, ep, efsdp, num_experts)
        top.set_aspect("equal")
        top.axis("off")
        _steps(bottom)
        fig.suptitle(f"World mesh (ep={ep}, efsdp={efsdp}): experts along rows, tokens "
                     "along columns")
        return svg_text(fig, "Meshes and collectives of an expert-parallel MoE under FSDP")


if __name__ == "__main__":  # pragma: no cover - manual preview helper
    import sys

    print(render_moe_mesh(), file=open(sys.argv[1] if len(sys.argv) > 1 else "moe.svg", "w"))
