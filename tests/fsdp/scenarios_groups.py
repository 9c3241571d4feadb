"""Scenarios about what makes a group: a list of modules sharded as one group, tied
siblings in one group, and a method other than forward registered to unshard."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn as nn

from tests import tolerance
from tests.fsdp.common import (
    Report,
    build_model,
    compare_params,
    deepcopy_model,
    full,
    get_impl,
    make_mesh,
    mean_over_ranks,
    rank_slice,
)
from tests.fsdp.scenarios_api import _is_sharded
from tests.tolerance import EXACT


def list_one_group(rank: int, world_size: int, impl: str) -> dict[str, Any]:
    """fully_shard([a, b]) makes one group: both become FSDPModules, unshard()/reshard()
    on one of them (not recursive) acts on both."""
    report = Report(rank, "list_one_group")
    fsdp = get_impl(impl)
    mesh = make_mesh(world_size)
    net = build_model("stack")
    a, b, c = net.blocks
    ret = fsdp.fully_shard([a, b], mesh=mesh)
    fsdp.fully_shard(c, mesh=mesh)
    fsdp.fully_shard(net, mesh=mesh)
    report.check(isinstance(ret, list) and len(ret) == 2, f"fully_shard(list) returned {type(ret)}")
    report.check(
        isinstance(a, fsdp.FSDPModule) and isinstance(b, fsdp.FSDPModule),
        "modules of the list did not become FSDPModules",
    )
    a.unshard()
    for name, m in (("blocks.0", a), ("blocks.1", b)):
        for pname, p in m.named_parameters():
            report.check(
                not _is_sharded(p), f"{name}.{pname} not unsharded by unshard() on blocks.0"
            )
    for pname, p in c.named_parameters():
        report.check(
            _is_sharded(p), f"blocks.2.{pname} (other group) unsharded by blocks.0.unshard()"
        )
    b.reshard()
    for name, m in (("blocks.0", a), ("blocks.1", b)):
        for pname, p in m.named_parameters():
            report.check(_is_sharded(p), f"{name}.{pname} not resharded by reshard() on blocks.1")
    return report.result()


class _WithEncode(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Linear(8, 16)
        self.body = nn.Linear(16, 16)
        self.head = nn.Linear(16, 4)

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(torch.tanh(self.emb(x)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.encode(x))


def forward_method(rank: int, world_size: int, impl: str) -> dict[str, Any]:
    """register_fsdp_forward_method makes a non-forward method unshard/reshard like
    forward (here: called before any forward, on the root)."""
    report = Report(rank, "register_fsdp_forward_method")
    fsdp = get_impl(impl)
    mesh = make_mesh(world_size)
    torch.manual_seed(0)
    net = _WithEncode()
    ref = deepcopy_model(net)
    fsdp.fully_shard(net.body, mesh=mesh)
    fsdp.fully_shard(net, mesh=mesh)
    fsdp.register_fsdp_forward_method(net, "encode")
    x = torch.randn(2, 8, generator=torch.Generator().manual_seed(1))
    out = net.encode(x)
    ref_out = ref.encode(x)
    report.close("encode() output", out, ref_out, EXACT)
    out.sum().backward()
    ref_out.sum().backward()
    ref_params = dict(ref.named_parameters())
    for name, p in net.named_parameters():
        report.check(_is_sharded(p), f"{name} not sharded after encode()+backward")
        if name.startswith("head"):
            continue
        if report.check(p.grad is not None, f"{name}.grad is None"):  # same x on every rank
            report.close(f"grad {name}", full(p.grad), ref_params[name].grad,
                         tolerance.replicated_sum(world_size))
    report.close("forward() after encode()", net(x), ref(x), EXACT)
    return report.result()


def tied_siblings_in_one_group(rank: int, world_size: int, impl: str) -> dict[str, Any]:
    """fully_shard([a, b]) where a and b share (tie) a weight is legitimate: the group
    holds the tied parameter once, it stays tied, and training matches the reference."""
    from tests.fsdp.scenarios_misuse import _Shared

    report = Report(rank, "tied_siblings_in_one_group")
    fsdp = get_impl(impl)
    mesh = make_mesh(world_size)
    torch.manual_seed(0)
    net = _Shared()
    ref = deepcopy_model(net)
    fsdp.fully_shard([net.a, net.b], mesh=mesh)
    fsdp.fully_shard(net, mesh=mesh)
    report.check(net.a.weight is net.b.weight, "a.weight and b.weight are no longer tied")
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(2)
    for step in range(3):
        tol = tolerance.of_model(ref, rows=2 * world_size, steps=step + 1)
        x = torch.randn(2 * world_size, 4, generator=g)
        ref_loss = ref(x).pow(2).mean()
        ref_loss.backward()
        loss = net(rank_slice(x, rank, world_size)).pow(2).mean()
        loss.backward()
        report.close(f"step {step} loss", mean_over_ranks(loss), ref_loss, tol)
        compare_params(report, net, ref, f"step {step}", tol, grads=True)
        for o in (opt, ref_opt):
            o.step()
            o.zero_grad(set_to_none=True)
    compare_params(report, net, ref, "final", tol)
    return report.result()
