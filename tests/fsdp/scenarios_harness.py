"""Scenarios used by the harness self-tests (tests/fsdp/test_harness.py)."""

from __future__ import annotations

import os
import time


def echo(rank, world_size, **kwargs):
    import torch
    import torch.distributed as dist

    t = torch.tensor([float(rank)])
    dist.all_reduce(t)
    return {
        "rank": rank,
        "world_size": world_size,
        "kwargs": kwargs,
        "sum": t.item(),
        "pid": os.getpid(),
        "threads": torch.get_num_threads(),
    }


def raise_on(rank, world_size, bad_rank=0):
    """``bad_rank`` raises; the others block in a collective (``bad_rank=None``: all raise)."""
    import torch
    import torch.distributed as dist

    if bad_rank is None or rank == bad_rank:
        raise ValueError(f"deliberate failure on rank {rank}")
    dist.all_reduce(torch.ones(1))
    return rank


def sleep(rank, world_size, seconds=10.0):
    time.sleep(seconds)
    return rank


def die(rank, world_size, bad_rank=0):
    if rank == bad_rank:
        os._exit(7)
    time.sleep(30)
    return rank


def unpicklable(rank, world_size):
    return lambda: None
