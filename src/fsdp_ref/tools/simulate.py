"""Per-rank memory of ``fully_shard`` at world sizes no single machine has.

``python -m fsdp_ref.tools.simulate --model llama-7b --world-sizes 8 64 512 4096`` builds a
Llama-like model (or the GPT of :mod:`fsdp_ref.examples.gpt`) on the ``meta`` device
(shapes, no data), shards it with :func:`fsdp_ref.fully_shard` over a *fake* process group
of ``N`` ranks (collectives that do nothing, from
``torch.testing._internal.distributed.fake_pg``), and reads back from the sharded model
what one rank would hold. Nothing is allocated and nothing is computed, so N can be in
the thousands; a fake group is fine for layout and memory and useless for numerics.

What one rank holds is read into a :class:`~fsdp_ref.tools.memory_model.MemoryReport`, whose
:meth:`~fsdp_ref.tools.memory_model.MemoryReport.points` are the model: the bytes held at
each point of a steady-state step (torch 2.13's lifetimes, mixed-precision AdamW), the
peak the largest (see :mod:`fsdp_ref.tools.memory_model`).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager

import torch
import torch.distributed as dist

from fsdp_ref.examples.gpt import GPT, GPTConfig
from fsdp_ref.examples.llama import PRESETS, Llama, LlamaConfig

from .memory_model import GroupMemory, MemoryReport

__all__ = [
    "GPT_PRESETS",
    "fake_process_group",
    "format_table",
    "main",
    "simulate",
]

GPT_PRESETS: dict[str, GPTConfig] = {
    "gpt-0.94b": GPTConfig(vocab_size=65536, seq_len=2048, dim=2048, n_layers=16, n_heads=16),
}
"""The GPT of issue 33's GPU measurements: 16 blocks of d=2048, 0.94B parameters."""


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


def _parts(model: torch.nn.Module):
    """``(blocks, modules used after the blocks, tied parameter or None)`` of a Llama or
    a GPT."""
    if isinstance(model, GPT):
        return list(model.blocks), [model.norm, model.head], model.tok.weight
    return list(model.layers), [model.norm, model.output], None


def simulate(
    cfg: LlamaConfig | GPTConfig,
    world_size: int,
    param_dtype: torch.dtype = torch.bfloat16,
    reduce_dtype: torch.dtype = torch.float32,
    rank: int = 0,
    device: str = "cuda",
) -> MemoryReport:
    """Shard a meta-device :class:`Llama` (or :class:`GPT`) over a fake group and report
    one rank's bytes.

    Args:
        cfg: model shapes; a :class:`GPTConfig` builds the GPT (head tied to the
            embedding), a :class:`LlamaConfig` the Llama.
        world_size: number of ranks ``N``.
        param_dtype: all-gather and compute dtype of the mixed-precision policy.
        reduce_dtype: gradient reduction dtype.
        rank: which rank to report (rank 0 holds the most data).
        device: the device whose kernels the peak is modelled for: ``"cuda"`` or
            ``"cpu"`` (see the module docstring's last two points).

    Returns:
        The per-group shard sizes read from the sharded model, with the byte totals
        of the module docstring as properties.
    """
    from .. import MixedPrecisionPolicy, fully_shard
    from ..state import get_state

    if device not in ("cuda", "cpu"):
        raise ValueError(f"device must be 'cuda' or 'cpu', got {device!r}")
    mp = MixedPrecisionPolicy(param_dtype=param_dtype, reduce_dtype=reduce_dtype)
    with fake_process_group(world_size, rank):
        with torch.device("meta"):
            model = GPT(cfg) if isinstance(cfg, GPTConfig) else Llama(cfg)
        blocks, late_modules, tied = _parts(model)
        for block in blocks:
            fully_shard(block, mp_policy=mp)
        fully_shard(model, mp_policy=mp)
        late = {id(p) for m in late_modules for p in m.parameters()}
        tied_id = id(model.tok.weight) if tied is not None else None
        report = MemoryReport(world_size, sum(p.numel() for p in model.parameters()),
                              device=device)
        for label, module in [("root", model)] + [(f"layers.{i}", m)
                                                  for i, m in enumerate(blocks)]:
            params = [p for g in get_state(module).groups for p in g.fsdp_params]
            numel = [p.layout.full_shape.numel() for p in params]
            report.groups.append(GroupMemory(
                label=label,
                numel=sum(numel),
                shard_numel=sum(p.layout.padded_shard_numel for p in params),
                local_numel=sum(p.sharded_param.to_local().numel() for p in params),
                param_bytes=params[0].param_dtype.itemsize,
                reduce_bytes=params[0].reduce_dtype.itemsize,
                late_numel=sum(n for p, n in zip(params, numel) if id(p.sharded_param) in late),
                tied_numel=sum(n for p, n in zip(params, numel) if id(p.sharded_param) == tied_id),
                largest_numel=max(numel),
                largest_shard_numel=max(p.layout.padded_shard_numel for p in params),
            ))
    return report


def _gib(n: float) -> str:
    return f"{n / 2**30:.2f}"


def format_table(reports: list[MemoryReport]) -> str:
    """Two Markdown tables, one row per world size: the sharded state at rest (elements
    and GiB per rank, against ZeRO-3's 16Ψ/N), and the peak point's GiB per rank by
    :data:`~fsdp_ref.tools.memory_model.CATEGORY` (two, so that each fits a page's
    column)."""
    rest = ["| N | shard elements/rank | padding elements | params+grads+Adam | 16Ψ/N |",
            "|---:|---:|---:|---:|---:|"]
    peak = ["| N | peak at | sharded state | unsharded params | unsharded grads | "
            "comm buffers | temporaries | total |",
            "|---:|---|---:|---:|---:|---:|---:|---:|"]
    for r in reports:
        rest.append(f"| {r.world_size} | {r.shard_numel:,} | {r.padding_numel:,} | "
                    f"{_gib(r.sharded_bytes)} | {_gib(r.zero3_bytes)} |")
        peak.append(f"| {r.world_size} | {r.peak_point} | "
                    + " | ".join(_gib(v) for v in r.breakdown().values())
                    + f" | {_gib(r.total_bytes)} |")
    return "\n".join([*rest, "", *peak])


def main(argv: list[str] | None = None) -> None:
    """CLI: print the per-rank memory table for a preset model and several world sizes."""
    presets = {**PRESETS, **GPT_PRESETS}
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(presets), default="llama-7b")
    parser.add_argument("--world-sizes", type=int, nargs="+", default=[8, 64, 512, 4096])
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    args = parser.parse_args(argv)
    cfg = presets[args.model]
    print(f"{args.model}: Ψ = {cfg.num_params():,} parameters, {cfg.n_layers} blocks; "
          f"bf16 compute, fp32 reduce, AdamW on {args.device}; GiB per rank")
    print(format_table([simulate(cfg, n, device=args.device) for n in args.world_sizes]))


if __name__ == "__main__":
    main()
