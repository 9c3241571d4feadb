"""Train under ``torchrun --max-restarts``, checkpointing every step with DCP; resume after a
failure from the last complete checkpoint.

``TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1 torchrun --standalone --nproc_per_node 2
--max-restarts 1 tests/reliability/elastic_train.py --ckpt DIR --out DIR --fail-at 2``

With ``--fail-at k``, the last rank raises in step ``k`` of the first attempt (after its
backward, before the optimizer step); torchrun restarts every rank, which load model and
optimizer state from the newest checkpoint whose ``done`` marker exists and train on.
Each rank finally writes the bytes of its local shards to ``OUT/rank<r>.bin``, so a test
can compare them bit for bit with an uninterrupted run (:func:`uninterrupted`).
"""

from __future__ import annotations

import argparse
import os
import pickle
from pathlib import Path

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.nn as nn
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict

from fsdp_ref import fully_shard


def _model() -> nn.Module:
    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Sequential(nn.Linear(24, 24), nn.Tanh()) for _ in range(3)])
    for block in model:
        fully_shard(block)
    return fully_shard(model)


def _batch(step: int, rank: int, world: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(100 + step)
    x, y = torch.randn(4 * world, 24, generator=gen), torch.randn(4 * world, 24, generator=gen)
    return x.chunk(world)[rank], y.chunk(world)[rank]


def _latest(ckpt: Path) -> int:
    """The newest step whose checkpoint was completely written (-1: none)."""
    done = [int(p.name.split("_")[1]) for p in ckpt.glob("step_*") if (p / "done").exists()]
    return max(done, default=-1)


def train(rank: int, world: int, ckpt: Path, steps: int, fail_at: int | None,
          attempt: int) -> dict[str, bytes]:
    """Resume from the newest complete checkpoint in ``ckpt`` (if any), train to ``steps``
    and return the bytes of this rank's local shards."""
    model = _model()
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)
    start = _latest(ckpt) + 1
    if start > 0:
        model_sd, optim_sd = get_state_dict(model, opt)
        state = {"model": model_sd, "optim": optim_sd}
        dcp.load(state, checkpoint_id=str(ckpt / f"step_{start - 1}"))
        set_state_dict(model, opt, model_state_dict=state["model"], optim_state_dict=state["optim"])
        if rank == 0:
            print(f"attempt {attempt}: resumed after step {start - 1}", flush=True)
    for step in range(start, steps):
        x, y = _batch(step, rank, world)
        nn.functional.mse_loss(model(x), y).backward()
        if step == fail_at and attempt == 0 and rank == world - 1:
            raise RuntimeError(f"simulated failure in step {step} on rank {rank}")
        opt.step()
        opt.zero_grad()
        model_sd, optim_sd = get_state_dict(model, opt)
        path = ckpt / f"step_{step}"
        dcp.save({"model": model_sd, "optim": optim_sd}, checkpoint_id=str(path))
        dist.barrier()
        if rank == 0:
            (path / "done").touch()
    if rank == 0:
        print(f"attempt {attempt}: trained steps {start}..{steps - 1} on {world} ranks", flush=True)
    return {k: v.to_local().numpy().tobytes() for k, v in model.state_dict().items()}


def uninterrupted(rank: int, world_size: int, ckpt: str, steps: int = 4) -> dict[str, bytes]:
    """The same training without a failure, as a scenario of the test worker pool."""
    return train(rank, world_size, Path(ckpt), steps, None, 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ckpt", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--fail-at", type=int, default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    shards = train(rank, world, args.ckpt, args.steps, args.fail_at, attempt)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"rank{rank}.bin").write_bytes(pickle.dumps(shards))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
