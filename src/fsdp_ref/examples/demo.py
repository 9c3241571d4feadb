"""``make demo``: train a small GPT with ``fully_shard`` on the ranks ``torchrun`` started.

Run it as ``torchrun --standalone --nproc_per_node 2 -m fsdp_ref.examples.demo``. Each rank draws
its own slice of a synthetic batch (a learnable pattern: every token predicts the next
one modulo the vocabulary), and prints per step the loss averaged over ranks, the step
time, and each rank's bytes of sharded parameters, then a one-line summary.
"""

from __future__ import annotations

import argparse
import os
import time

import torch
import torch.distributed as dist

from .. import fully_shard
from .gpt import GPT, GPTConfig

__all__ = ["init_from_torchrun", "main", "sharded_param_bytes"]


def sharded_param_bytes(model: torch.nn.Module) -> int:
    """Bytes of parameter data this rank holds (local shards of DTensor parameters)."""
    total = 0
    for p in model.parameters():
        local = p.to_local() if hasattr(p, "to_local") else p
        total += local.numel() * local.element_size()
    return total


def init_from_torchrun(target: str) -> tuple[int, int, torch.device]:
    """Join the process group ``torchrun`` prepared: NCCL on GPUs (one per local rank),
    gloo on CPU with one intra-op thread per rank.

    Args:
        target: what to run, for the error message (e.g. ``"-m fsdp_ref.examples.demo"``).

    Returns:
        ``(rank, world_size, device)``.

    Raises:
        SystemExit: when not started by torchrun.
    """
    if "RANK" not in os.environ:
        raise SystemExit(f"run under torchrun: torchrun --standalone --nproc_per_node 2 {target}")
    torch.set_num_threads(1)
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    if backend == "nccl":
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group(backend)
    device = (
        torch.device("cuda", torch.cuda.current_device()) if backend == "nccl" else torch.device("cpu")
    )
    return dist.get_rank(), dist.get_world_size(), device


def _batch(step: int, rank: int, world: int, per_rank: int, cfg: GPTConfig):
    gen = torch.Generator().manual_seed(1000 + step)
    starts = torch.randint(0, cfg.vocab_size, (per_rank * world, 1), generator=gen)
    seq = (starts + torch.arange(cfg.seq_len + 1)) % cfg.vocab_size
    mine = seq[rank * per_rank : (rank + 1) * per_rank]
    return mine[:, :-1], mine[:, 1:]


def main(argv: list[str] | None = None) -> float:
    """Train and print progress; returns the final loss."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch-per-rank", type=int, default=8)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--dim", type=int, default=64)
    args = parser.parse_args(argv)

    rank, world, device = init_from_torchrun("-m fsdp_ref.examples.demo")
    backend = dist.get_backend()

    cfg = GPTConfig(dim=args.dim, n_layers=args.layers, seq_len=32, vocab_size=128)
    torch.manual_seed(0)
    model = GPT(cfg).to(device)
    full_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    for block in model.blocks:
        fully_shard(block)
    fully_shard(model)
    optim = torch.optim.AdamW(model.parameters(), lr=3e-3)
    mine = sharded_param_bytes(model)
    per_rank = [None] * world
    dist.all_gather_object(per_rank, mine)
    if rank == 0:
        print(f"GPT {cfg.num_params():,} params on {world} ranks ({backend}); "
              f"unsharded {full_bytes:,} B; sharded per rank {per_rank}")

    loss_value = float("nan")
    times = []
    for step in range(args.steps):
        tokens, targets = (t.to(device) for t in _batch(step, rank, world, args.batch_per_rank, cfg))
        start = time.perf_counter()
        loss = model.loss(tokens, targets)
        loss.backward()
        optim.step()
        optim.zero_grad()
        reduced = loss.detach().clone()
        dist.all_reduce(reduced)
        loss_value = reduced.item() / world
        times.append(time.perf_counter() - start)
        if rank == 0:
            print(f"step {step:3d}  loss {loss_value:7.4f}  step {times[-1] * 1e3:7.1f} ms  "
                  f"sharded param bytes per rank {per_rank}")
    if rank == 0:
        med = sorted(times)[len(times) // 2] * 1e3
        print(f"summary: {args.steps} steps on {world} ranks, loss {loss_value:.4f}, "
              f"median step {med:.1f} ms, {mine:,} of {full_bytes:,} param bytes on rank 0")
    dist.destroy_process_group()
    return loss_value


if __name__ == "__main__":
    main()
