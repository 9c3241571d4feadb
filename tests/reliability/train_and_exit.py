"""Train a few steps under torchrun and exit, the way a user script ends.

``torchrun --standalone --nproc_per_node 2 tests/reliability/train_and_exit.py --impl fsdp_ref``

Like ``make demo``, every step ends with a loss all-reduce, and the script ends with
``destroy_process_group()``: the last collective is released by a gloo worker thread
while Python shuts down, the race :mod:`fsdp_ref.clean_exit` closes. Its last line says
what it did.
"""

from __future__ import annotations

import argparse
import importlib

import torch
import torch.distributed as dist
import torch.nn as nn


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", choices=["fsdp_ref", "torch"], default="fsdp_ref")
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    fsdp = importlib.import_module("fsdp_ref" if args.impl == "fsdp_ref" else "torch.distributed.fsdp")
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Linear(32, 32) for _ in range(3)])
    for layer in model:
        fsdp.fully_shard(layer)
    fsdp.fully_shard(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(rank)
    for _ in range(args.steps):
        loss = model(torch.randn(8, 32, generator=gen)).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        dist.all_reduce(loss.detach())
    handler = "n/a"
    if args.impl == "fsdp_ref":
        from fsdp_ref import clean_exit

        handler = str(clean_exit._installed)
    dist.destroy_process_group()
    if rank == 0:
        print(f"trained {args.steps} steps with {args.impl} on {world} ranks; "
              f"exit handler installed: {handler}", flush=True)


if __name__ == "__main__":
    main()
