"""A group of mixed dtypes: a frozen bf16 base beside fp32 adapters in one ``fully_shard``
call (run in the ranks; failures are collected, never raised).

Both implementations gather such a group in one all-gather through a byte buffer (torch
2.13 checks only that the *trainable* parameters share a dtype; fsdp_ref does not need
even that: each dtype gets its own reduce-scatter). Both groupings, one group per block
and two (base, adapters), are trained under both and their collectives counted in bytes.
"""

from __future__ import annotations

import contextlib
from typing import Any

import torch
import torch.nn as nn

from tests.collective_spy import KINDS, spy_on
from tests.fsdp.common import Report, exc_info, get_impl, make_mesh, rank_slice
from tests.tolerance import EXACT

DIM, RANK = 32, 4
_COLLECTIVES = [name for name, kind in KINDS.items() if kind != "AR"]


class Adapted(nn.Module):
    """A frozen bf16 linear plus an fp32 low-rank adapter beside it."""

    def __init__(self) -> None:
        super().__init__()
        self.base = nn.Linear(DIM, DIM, dtype=torch.bfloat16).requires_grad_(False)
        self.lora_a = nn.Linear(DIM, RANK, bias=False)
        self.lora_b = nn.Linear(RANK, DIM, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.base(x.to(torch.bfloat16)).float() + self.lora_b(self.lora_a(x))


def _model() -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(Adapted(), nn.ReLU(), Adapted())


def _shard(model: nn.Sequential, api, mesh, grouping: str) -> None:
    for block in (model[0], model[2]):
        if grouping == "one":
            api.fully_shard(block, mesh=mesh)
        else:
            api.fully_shard(block.base, mesh=mesh)
            api.fully_shard([block.lora_a, block.lora_b], mesh=mesh)
    api.fully_shard(model, mesh=mesh)


@contextlib.contextmanager
def count_bytes():
    """Record ``(kind, dtype, bytes of the output)`` of every all-gather and
    reduce-scatter issued while the block runs."""
    log: list[tuple[str, str, int]] = []

    def record(name, args, kwargs):
        out = args[0] if args else next(iter(kwargs.values()))  # the output comes first
        log.append((KINDS[name], str(out.dtype), out.numel() * out.element_size()))

    with spy_on(_COLLECTIVES, record):
        yield log


def _train(model, rank, world_size, steps):
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    losses, logs = [], []
    for step in range(steps):
        g = torch.Generator().manual_seed(step)
        x, y = torch.randn(2 * world_size, DIM, generator=g), torch.randn(2 * world_size, DIM,
                                                                          generator=g)
        with count_bytes() as log:
            loss = (model(rank_slice(x, rank, world_size)) - rank_slice(y, rank, world_size))
            loss = loss.pow(2).mean()
            loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
        logs.append(log)
    return losses, logs


def mixed_group(rank: int, world_size: int, steps: int = 3, impl: str = "fsdp_ref"
                ) -> dict[str, Any]:
    """fsdp_ref and torch's fully_shard, each with one group per block and with two."""
    report = Report(rank, "mixed dtypes")
    mesh = make_mesh(world_size)
    torch_err = None
    try:
        model = _model()
        model[0].base.requires_grad_(True)  # trainable bf16 beside trainable fp32
        _shard(model, get_impl("torch"), mesh, "one")
        model(torch.randn(2, DIM))
    except Exception as exc:  # noqa: BLE001  (recorded for the test)
        torch_err = exc_info(exc)
    runs = {}
    plan = [("torch_two", "torch", "two"), ("torch_one", "torch", "one"),
            ("ref_two", impl, "two"), ("ref_one", impl, "one")]
    for name, run_impl, grouping in plan:
        model = _model()
        base_before = {k: v.clone() for k, v in model.state_dict().items() if "base" in k}
        _shard(model, get_impl(run_impl), mesh, grouping)
        losses, logs = _train(model, rank, world_size, steps)
        shards = {n: p.to_local().detach().clone() for n, p in model.named_parameters()}
        base_after = {k: v.full_tensor() for k, v in model.state_dict().items() if "base" in k}
        report.check(all(torch.equal(base_before[k], base_after[k]) for k in base_before),
                     f"{name}: the frozen base changed")
        report.check(all(shards[n].dtype == (torch.bfloat16 if "base" in n else torch.float32)
                         for n in shards), f"{name}: a shard changed dtype")
        runs[name] = (losses, shards, logs[-1])
    ref_losses, ref_shards, _ = runs["torch_two"]
    for name in ("torch_one", "ref_two", "ref_one"):
        losses, shards, _ = runs[name]
        report.close(f"{name} losses", losses, ref_losses, EXACT)
        for n, t in shards.items():
            report.close(f"{name} shard {n}", t.float(), ref_shards[n].float(), EXACT)
    return report.result(torch_err=torch_err,
                         steady_step={k: v[2] for k, v in runs.items()})
