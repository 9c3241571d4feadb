"""torchao float8 training with float8 all-gather (``Float8Linear`` weights wrapped in
``WeightWithDynamicFloat8CastTensor``, whose pre hook casts the shard to float8 with a
scale that ``precompute_float8_dynamic_scale_for_fsdp`` computed for the whole tensor),
under torch's ``fully_shard`` and fsdp_ref side by side (run in the ranks)."""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist
import torch.nn as nn
from torchao.float8 import (
    Float8LinearConfig,
    convert_to_float8_training,
    precompute_float8_dynamic_scale_for_fsdp,
)
from torchao.float8.fsdp_utils import WeightWithDynamicFloat8CastTensor

from tests.extensions.scenarios_mixed import count_bytes
from tests.fsdp.common import Report, exc_info, get_impl, make_mesh, rank_slice
from tests.tolerance import EXACT


def _model(bias: bool) -> nn.Module:
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(32, 64, bias=bias), nn.ReLU(), nn.Linear(64, 32, bias=bias),
                        nn.ReLU(), nn.Linear(32, 16, bias=bias))
    config = Float8LinearConfig(enable_fsdp_float8_all_gather=True)
    convert_to_float8_training(net, config=config)
    return net


def _run(impl: str, rank: int, world_size: int, bias: bool, steps: int):
    api, mesh = get_impl(impl), make_mesh(world_size)
    net = _model(bias)
    for layer in (net[0], net[2], net[4]):
        api.fully_shard(layer, mesh=mesh)
    api.fully_shard(net, mesh=mesh)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    losses, dtypes = [], set()
    for _ in range(steps):  # one batch, fitted: the loss must fall
        g = torch.Generator().manual_seed(0)
        x = torch.randn(4 * world_size, 32, generator=g)
        y = torch.randn(4 * world_size, 16, generator=g)
        with count_bytes() as log:
            loss = (net(rank_slice(x, rank, world_size)) - rank_slice(y, rank, world_size))
            loss = loss.pow(2).mean()
            loss.backward()
        dtypes |= {dtype for kind, dtype, _ in log if kind == "AG"}
        opt.step()
        opt.zero_grad()
        precompute_float8_dynamic_scale_for_fsdp(net)
        mean = loss.detach().clone()
        dist.all_reduce(mean)
        losses.append(mean.item() / world_size)
    wrapped = all(isinstance(p.to_local(), WeightWithDynamicFloat8CastTensor)
                  for n, p in net.named_parameters() if n.endswith("weight"))
    shards = {n: p.to_local().detach().clone() for n, p in net.named_parameters()}
    return losses, shards, wrapped, sorted(dtypes)


def float8_vs_torch(rank: int, world_size: int, bias: bool = True, steps: int = 3
                    ) -> dict[str, Any]:
    """Same losses and shards under both (with biases: a float8 + fp32 group, gathered as
    bytes by both); without biases the groups are all float8, which gloo refuses: torch's
    fully_shard fails there, fsdp_ref moves the bytes and is compared with the biased
    run's mechanics instead (same scales, same casts)."""
    report = Report(rank, f"float8 bias={bias}")
    ref_losses, ref_shards, wrapped, dtypes = _run("fsdp_ref", rank, world_size, bias, steps)
    report.check(wrapped, "fsdp_ref lost the float8 weight wrapper while sharding")
    torch_err = None
    try:
        losses, shards, _, torch_dtypes = _run("torch", rank, world_size, bias, steps)
    except Exception as exc:  # noqa: BLE001  (recorded for the test)
        torch_err = exc_info(exc)
    if torch_err is None:
        report.close("losses", ref_losses, losses, EXACT)
        for n, t in shards.items():
            report.close(f"shard {n}", ref_shards[n], t, EXACT)
        report.check(torch_dtypes == dtypes, f"all-gather dtypes {dtypes} != {torch_dtypes}")
    return report.result(losses=ref_losses, torch_err=torch_err, gather_dtypes=dtypes)
