"""Per-rank memory of ``fully_shard`` at world sizes no single machine has.

``python -m fsdp_ref.tools.simulate --model llama-7b --world-sizes 8 64 512 4096`` builds a
Llama-like model on the ``meta`` device (shapes, no data), shards it with
:func:`fsdp_ref.fully_shard` over a *fake* process group of ``N`` ranks (collectives that
do nothing, from ``torch.testing._internal.distributed.fake_pg``), and reads back from the
sharded model what one rank would hold. Nothing is allocated and nothing is computed, so
N can be in the thousands; a fake group is fine for layout and memory and useless for
numerics.

The model, per rank, for mixed-precision AdamW (``param_dtype=bfloat16``,
``reduce_dtype=float32``), with ``S`` the padded shard elements of this rank:

================================  =====================================================
sharded parameters (fp32)         ``4 S``
sharded gradients (fp32)          ``4 S``
AdamW ``exp_avg`` + ``exp_avg_sq``  ``8 S``
unsharded parameters (bf16)       ``2 (R + 2 B)``: the root group ``R`` (kept unsharded
                                  from forward to the end of backward, the default for
                                  the root) and two blocks ``B`` (the one computing and
                                  the one prefetched)
unsharded gradients (bf16)        ``2 (R + B)``: the root's (its head's gradient exists
                                  from the start of backward) and the block in backward
communication buffers             ``2 N B_p`` (a block's all-gather output, bf16) plus
                                  ``4 N B_p`` (its reduce-scatter input, fp32)
================================  =====================================================

where ``B`` is the largest block's unsharded element count and ``B_p`` its padded shard.
The first three rows are ZeRO-3's ``16 Ψ / N`` for ``Ψ`` parameters, plus padding: FSDP
shards dim 0 of each parameter into ``ceil(dim0 / N)`` rows per rank (as ``torch.chunk``
does), so each rank holds ``S = Σ ceil(dim0 / N) · rest`` elements, which exceeds
``Ψ / N`` once ``N`` approaches the size of the small dims. The last three rows are the
*working set*: transient, not sharded, and independent of ``N`` except for padding, so
at large ``N`` they dominate. Activations are not modelled.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch
import torch.distributed as dist

from fsdp_ref.examples.llama import PRESETS, Llama, LlamaConfig

__all__ = [
    "GroupMemory",
    "MemoryReport",
    "fake_process_group",
    "format_table",
    "main",
    "simulate",
]


@dataclass(frozen=True)
class GroupMemory:
    """One ``fully_shard`` group as one rank sees it.

    Attributes:
        label: ``"root"`` or ``"layers.<i>"``.
        numel: unsharded elements of the group.
        shard_numel: elements of this rank's padded shards (what it allocates).
        local_numel: elements of real data in this rank's shards (``to_local().numel()``).
        param_bytes: bytes per element of the unsharded (compute) parameters.
        reduce_bytes: bytes per element of the gradient reduction.
    """

    label: str
    numel: int
    shard_numel: int
    local_numel: int
    param_bytes: int
    reduce_bytes: int


@dataclass
class MemoryReport:
    """Per-rank bytes of one model at one world size (see the module docstring).

    Attributes:
        world_size: number of ranks ``N``.
        num_params: total parameters ``Ψ``.
        groups: the root group first, then each block's group.
        state_bytes_per_elem: bytes of sharded state per element (fp32 param, fp32 grad,
            AdamW's two moments: 16).
    """

    world_size: int
    num_params: int
    groups: list[GroupMemory] = field(default_factory=list)
    state_bytes_per_elem: int = 16

    @property
    def root(self) -> GroupMemory:
        """The root module's group (embedding, final norm, head)."""
        return self.groups[0]

    @property
    def largest_block(self) -> GroupMemory:
        """The block group with the most elements."""
        return max(self.groups[1:], key=lambda g: g.numel)

    @property
    def shard_numel(self) -> int:
        """``S``: padded shard elements this rank holds, over all groups."""
        return sum(g.shard_numel for g in self.groups)

    @property
    def padding_numel(self) -> int:
        """Elements this rank holds beyond an exact ``Ψ / N`` split (may be fractional
        in the ideal, so this is ``S - ceil(Ψ / N)``)."""
        return self.shard_numel - math.ceil(self.num_params / self.world_size)

    @property
    def sharded_param_bytes(self) -> int:
        """fp32 sharded parameters: ``4 S``."""
        return 4 * self.shard_numel

    @property
    def sharded_grad_bytes(self) -> int:
        """fp32 sharded gradients: ``4 S``."""
        return 4 * self.shard_numel

    @property
    def optimizer_bytes(self) -> int:
        """AdamW moments: ``(state_bytes_per_elem - 8) S`` (``8 S``)."""
        return (self.state_bytes_per_elem - 8) * self.shard_numel

    @property
    def sharded_bytes(self) -> int:
        """Parameters, gradients and optimizer state: ``16 S``."""
        return self.sharded_param_bytes + self.sharded_grad_bytes + self.optimizer_bytes

    @property
    def zero3_bytes(self) -> float:
        """The ZeRO-3 formula ``16 Ψ / N`` (no padding)."""
        return self.state_bytes_per_elem * self.num_params / self.world_size

    @property
    def unsharded_param_bytes(self) -> int:
        """Root plus two blocks of unsharded parameters in the compute dtype."""
        r, b = self.root, self.largest_block
        return r.param_bytes * r.numel + 2 * b.param_bytes * b.numel

    @property
    def unsharded_grad_bytes(self) -> int:
        """Root plus one block of unsharded gradients in the compute dtype."""
        r, b = self.root, self.largest_block
        return r.param_bytes * r.numel + b.param_bytes * b.numel

    @property
    def comm_buffer_bytes(self) -> int:
        """One block's all-gather output plus its reduce-scatter input (padded)."""
        b = self.largest_block
        return self.world_size * b.shard_numel * (b.param_bytes + b.reduce_bytes)

    @property
    def working_set_bytes(self) -> int:
        """Peak unsharded working set: parameters, gradients and collective buffers."""
        return self.unsharded_param_bytes + self.unsharded_grad_bytes + self.comm_buffer_bytes

    @property
    def total_bytes(self) -> int:
        """Sharded state plus the working set (activations excluded)."""
        return self.sharded_bytes + self.working_set_bytes


@contextmanager
def fake_process_group(world_size: int, rank: int = 0) -> Iterator[None]:
    """Initialize the default process group as a fake one of ``world_size`` ranks.

    Args:
        world_size: ranks the group pretends to have.
        rank: the rank this process plays.

    Raises:
        RuntimeError: if a process group is already initialized.
    """
    from torch.testing._internal.distributed.fake_pg import FakeStore

    if dist.is_initialized():
        raise RuntimeError("a process group is already initialized; simulate needs its own")
    dist.init_process_group("fake", store=FakeStore(), rank=rank, world_size=world_size)
    try:
        yield
    finally:
        dist.destroy_process_group()


def simulate(
    cfg: LlamaConfig,
    world_size: int,
    param_dtype: torch.dtype = torch.bfloat16,
    reduce_dtype: torch.dtype = torch.float32,
    rank: int = 0,
) -> MemoryReport:
    """Shard a meta-device :class:`Llama` over a fake group and report one rank's bytes.

    Args:
        cfg: model shapes.
        world_size: number of ranks ``N``.
        param_dtype: all-gather and compute dtype of the mixed-precision policy.
        reduce_dtype: gradient reduction dtype.
        rank: which rank to report (rank 0 holds the most data).

    Returns:
        The per-group shard sizes read from the sharded model, with the byte totals
        of the module docstring as properties.
    """
    from .. import MixedPrecisionPolicy, fully_shard
    from ..state import get_state

    mp = MixedPrecisionPolicy(param_dtype=param_dtype, reduce_dtype=reduce_dtype)
    with fake_process_group(world_size, rank):
        with torch.device("meta"):
            model = Llama(cfg)
        for layer in model.layers:
            fully_shard(layer, mp_policy=mp)
        fully_shard(model, mp_policy=mp)
        report = MemoryReport(world_size, sum(p.numel() for p in model.parameters()))
        for label, module in [("root", model)] + [
            (f"layers.{i}", m) for i, m in enumerate(model.layers)
        ]:
            params = [p for g in get_state(module).groups for p in g.fsdp_params]
            report.groups.append(
                GroupMemory(
                    label=label,
                    numel=sum(p.layout.full_shape.numel() for p in params),
                    shard_numel=sum(p.layout.padded_shard_numel for p in params),
                    local_numel=sum(p.sharded_param.to_local().numel() for p in params),
                    param_bytes=params[0].param_dtype.itemsize,
                    reduce_bytes=params[0].reduce_dtype.itemsize,
                )
            )
    return report


def _gib(n: float) -> str:
    return f"{n / 2**30:.2f}"


def format_table(reports: list[MemoryReport]) -> str:
    """A Markdown table of per-rank GiB, one row per world size."""
    head = (
        "| N | shard elems/rank | padding elems | params+grads+Adam | 16Ψ/N | "
        "unsharded params | unsharded grads | comm buffers | total |\n"
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    )
    rows = [
        f"| {r.world_size} | {r.shard_numel:,} | {r.padding_numel:,} | "
        f"{_gib(r.sharded_bytes)} | {_gib(r.zero3_bytes)} | {_gib(r.unsharded_param_bytes)} | "
        f"{_gib(r.unsharded_grad_bytes)} | {_gib(r.comm_buffer_bytes)} | {_gib(r.total_bytes)} |"
        for r in reports
    ]
    return "\n".join([head, *rows])


def main(argv: list[str] | None = None) -> None:
    """CLI: print the per-rank memory table for a preset model and several world sizes."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(PRESETS), default="llama-7b")
    parser.add_argument("--world-sizes", type=int, nargs="+", default=[8, 64, 512, 4096])
    args = parser.parse_args(argv)
    cfg = PRESETS[args.model]
    print(f"{args.model}: Ψ = {cfg.num_params():,} parameters, {cfg.n_layers} blocks of "
          f"{cfg.block_params():,}, root {cfg.root_params():,}; bf16 compute, fp32 reduce, "
          "AdamW; GiB per rank")
    print(format_table([simulate(cfg, n) for n in args.world_sizes]))


if __name__ == "__main__":
    main()
