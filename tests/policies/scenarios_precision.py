"""Mixed precision and CPU offload scenarios (run on every rank by the harness).

``mixed_precision``: the implementation under test and torch's ``fully_shard`` train two
identically seeded copies with the same :class:`MixedPrecisionPolicy` side by side (same
process, same data); per-step losses, gradients and final parameters must agree bitwise,
and a fp32 single-process reference must stay within the rounding bound of
:func:`tests.tolerance.mixed_precision`.  On top, the dtypes are checked where
they are observable: sharded params (fp32), the params the module sees in forward
(``param_dtype``), the all-gather and reduce-scatter inputs (spied on
``torch.distributed``), module inputs/outputs, and the sharded grads (fp32).

``cpu_offload``: ``CPUOffloadPolicy(pin_memory=False)`` vs no offload and torch with
offload (bitwise: on a CPU mesh offloading copies) vs a single-process reference.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.tensor import DTensor

from tests import tolerance
from tests.fsdp.common import (
    Report,
    build_model,
    get_impl,
    global_batch,
    make_mesh,
    mean_over_ranks,
    rank_slice,
)
from tests.policies.helpers import (
    DTYPES,
    all_grads_are_dtensors,
    compare_named,
    spy_collectives,
)
from tests.tolerance import EXACT

DIM = 16


class MPBlock(nn.Module):
    """Residual MLP block that records the dtypes it sees in forward."""

    def __init__(self, dim: int = DIM):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.lin1 = nn.Linear(dim, 2 * dim)
        self.lin2 = nn.Linear(2 * dim, dim)
        self.seen: list[tuple[str, Any]] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.lin1.weight
        self.seen.append(("input", x.dtype))
        self.seen.append(("weight", w.dtype))
        self.seen.append(("weight_is_dtensor", isinstance(w, DTensor)))
        h = x.to(w.dtype)
        return h + self.lin2(F.gelu(self.lin1(self.norm(h))))


class MPNet(nn.Module):
    """in_proj -> 2 MPBlocks -> head; casts to each layer's weight dtype itself, so any
    combination of policies runs, and records what it sees."""

    def __init__(self, dim: int = DIM, out: int = 8, n_blocks: int = 2):
        super().__init__()
        self.in_proj = nn.Linear(dim, dim)
        self.blocks = nn.ModuleList(MPBlock(dim) for _ in range(n_blocks))
        self.head = nn.Linear(dim, out)
        self.seen: list[tuple[str, Any]] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.seen.append(("input", x.dtype))
        self.seen.append(("in_proj_weight", self.in_proj.weight.dtype))
        self.seen.append(("head_weight", self.head.weight.dtype))
        h = self.in_proj(x.to(self.in_proj.weight.dtype))
        for block in self.blocks:
            h = block(h)
        return self.head(h.to(self.head.weight.dtype))


def _build(seed: int = 0) -> MPNet:
    torch.manual_seed(seed)
    return MPNet()


def _shard(net: MPNet, api, mesh, policy: dict[str, Any], per_group: bool, offload: bool) -> None:
    kw = {"offload_policy": api.CPUOffloadPolicy(pin_memory=False)} if offload else {}
    if per_group:
        # bf16 body whose outputs come back as fp32, fp32 (default policy) root/head
        body = api.MixedPrecisionPolicy(
            param_dtype=torch.bfloat16, reduce_dtype=torch.float32, output_dtype=torch.float32
        )
        for block in net.blocks:
            api.fully_shard(block, mesh=mesh, mp_policy=body, **kw)
        api.fully_shard(net, mesh=mesh, **kw)
        return
    pol = api.MixedPrecisionPolicy(**policy)
    for block in net.blocks:
        api.fully_shard(block, mesh=mesh, mp_policy=pol, **kw)
    api.fully_shard(net, mesh=mesh, mp_policy=pol, **kw)


def _vs_fp32(ref: nn.Module, steps: int, pdt: torch.dtype, rdt: torch.dtype,
             world_size: int) -> tolerance.Tolerance:
    """The bound between training in ``pdt`` (reducing in ``rdt``) and the fp32 reference:
    the rounding of :func:`tests.tolerance.mixed_precision` plus the reordered sums."""
    tol = tolerance.of_model(ref, rows=2 * world_size, steps=steps)
    if pdt == torch.float32 and rdt == torch.float32:
        return tol
    return tol.plus(tolerance.of_model(ref, rows=2 * world_size, steps=steps, mixed=pdt,
                                       reduce_dtype=rdt, world_size=world_size))


def _seen(entries: list[tuple[str, Any]], key: str) -> set:
    return {v for k, v in entries if k == key}


def mixed_precision(
    rank: int,
    world_size: int,
    impl: str,
    param_dtype: str | None = "bfloat16",
    reduce_dtype: str | None = "float32",
    output_dtype: str | None = None,
    cast_forward_inputs: bool = True,
    per_group: bool = False,
    steps: int = 3,
    offload: bool = False,
    hsdp: bool = False,
) -> dict[str, Any]:
    """See the module docstring; ``offload`` adds ``CPUOffloadPolicy(pin_memory=False)``
    and ``hsdp`` uses a 2-D ``(replicate, shard)`` mesh (both implementations)."""
    report = Report(rank, "mixed_precision")
    if hsdp:
        from torch.distributed.device_mesh import init_device_mesh

        mesh = init_device_mesh("cpu", (2, world_size // 2), mesh_dim_names=("replicate", "shard"))
    else:
        mesh = make_mesh(world_size)
    policy = {
        "param_dtype": DTYPES.get(param_dtype),
        "reduce_dtype": DTYPES.get(reduce_dtype),
        "output_dtype": DTYPES.get(output_dtype),
        "cast_forward_inputs": cast_forward_inputs,
    }
    pdt = policy["param_dtype"] or torch.float32
    rdt = policy["reduce_dtype"] or pdt

    ref = _build()
    nets, opts = [], []
    for api in (get_impl("torch"), get_impl(impl)):
        net = _build()
        _shard(net, api, mesh, policy, per_group, offload)
        nets.append(net)
        opts.append(torch.optim.SGD(net.parameters(), lr=0.1))
    t_net, i_net = nets
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)

    for name, p in i_net.named_parameters():
        report.check(isinstance(p, DTensor), f"{name} is not a DTensor after fully_shard")
        report.check(p.dtype == torch.float32, f"sharded {name} has dtype {p.dtype}, not fp32")
        if isinstance(p, DTensor):
            report.check(
                p.to_local().dtype == torch.float32,
                f"local shard of {name} has dtype {p.to_local().dtype}, not fp32",
            )

    losses: list[list[float]] = [[], []]
    for step in range(steps):
        x, y = global_batch("mlp", step, 2 * world_size, dim=DIM, out=8)
        xr, yr = rank_slice(x, rank, world_size), rank_slice(y, rank, world_size)
        for k, (net, opt) in enumerate(zip(nets, opts)):
            opt.zero_grad(set_to_none=True)
            net.seen.clear()
            for b in net.blocks:
                b.seen.clear()
            with spy_collectives() as calls:
                out = net(xr)
                loss = F.mse_loss(out.float(), yr)
                loss.backward()
            losses[k].append(mean_over_ranks(loss))
            if k == 0:
                continue
            # ---- dtypes seen by the implementation under test ----
            gathers = {dt for name, dt, _ in calls if name == "all_gather_single"}
            reduces = {dt for name, dt, _ in calls if name == "reduce_scatter_single"}
            if hsdp:  # the replica all-reduce runs in the reduce dtype too
                all_reduces = {dt for name, dt, _ in calls if name == "all_reduce"}
                exp_ar = {torch.float32} if per_group else {rdt}
                report.check(
                    all_reduces == exp_ar,
                    f"step {step}: HSDP all-reduce dtypes {all_reduces}, expected {exp_ar}",
                )
            if per_group:
                exp_out = torch.float32
                report.check(
                    gathers == {torch.bfloat16, torch.float32},
                    f"step {step}: all-gather dtypes {gathers}, expected bf16 (blocks) and "
                    "fp32 (root)",
                )
                report.check(reduces == {torch.float32}, f"reduce-scatter dtypes {reduces}")
                report.check(
                    _seen(net.seen, "input") == {torch.float32}
                    and _seen(net.seen, "in_proj_weight") == {torch.float32}
                    and _seen(net.seen, "head_weight") == {torch.float32},
                    f"step {step}: fp32 root saw {net.seen}",
                )
                for i, b in enumerate(net.blocks):
                    report.check(
                        _seen(b.seen, "input") == {torch.bfloat16}
                        and _seen(b.seen, "weight") == {torch.bfloat16},
                        f"step {step}: bf16 block {i} saw {b.seen}",
                    )
            else:
                exp_out = policy["output_dtype"] or pdt
                report.check(
                    gathers == {pdt}, f"step {step}: all-gather dtypes {gathers}, expected {pdt}"
                )
                report.check(
                    reduces == {rdt},
                    f"step {step}: reduce-scatter dtypes {reduces}, expected {rdt}",
                )
                exp_root_in = pdt if cast_forward_inputs else torch.float32
                report.check(
                    _seen(net.seen, "input") == {exp_root_in},
                    f"step {step}: root input dtypes {_seen(net.seen, 'input')}, expected "
                    f"{exp_root_in} (cast_forward_inputs={cast_forward_inputs})",
                )
                report.check(
                    _seen(net.seen, "in_proj_weight") == {pdt}
                    and _seen(net.seen, "head_weight") == {pdt},
                    f"step {step}: root saw weights {net.seen}, expected {pdt}",
                )
                for i, b in enumerate(net.blocks):
                    report.check(
                        _seen(b.seen, "weight") == {pdt}
                        and _seen(b.seen, "weight_is_dtensor") == {False},
                        f"step {step}: block {i} saw {b.seen}, expected unsharded {pdt} weights",
                    )
                    report.check(
                        _seen(b.seen, "input") == {pdt},
                        f"step {step}: block {i} inputs {_seen(b.seen, 'input')}, expected {pdt}",
                    )
            report.check(out.dtype == exp_out, f"step {step}: output dtype {out.dtype} != {exp_out}")
            for name, p in net.named_parameters():
                report.check(p.grad is not None, f"step {step}: {name} has no grad")
                if p.grad is not None:
                    report.check(
                        p.grad.dtype == torch.float32,
                        f"step {step}: grad of {name} has dtype {p.grad.dtype}, not fp32",
                    )
            all_grads_are_dtensors(report, net, f"step {step}")
        report.close(f"step {step} loss vs torch", losses[1][-1], losses[0][-1], EXACT)
        compare_named(report, i_net, t_net, f"step {step} vs torch", EXACT, grads=True)
        for opt in opts:
            opt.step()
        # fp32 single-process reference: low-precision training stays close
        ref_opt.zero_grad(set_to_none=True)
        ref_loss = F.mse_loss(ref(x), y)
        ref_loss.backward()
        ref_opt.step()
        report.close(f"step {step} loss vs fp32 reference", losses[1][-1], ref_loss.item(),
                     _vs_fp32(ref, step + 1, pdt, rdt, world_size))

    compare_named(report, i_net, t_net, "final vs torch", EXACT)
    compare_named(report, i_net, ref, "final vs fp32 reference",
                  _vs_fp32(ref, steps, pdt, rdt, world_size))
    for name, p in i_net.named_parameters():
        report.check(p.dtype == torch.float32, f"after step: {name} has dtype {p.dtype}")
    return report.result(torch_losses=losses[0], impl_losses=losses[1])


def cpu_offload(rank: int, world_size: int, impl: str, steps: int = 3) -> dict[str, Any]:
    """CPUOffloadPolicy(pin_memory=False): shards and grads on CPU, same numbers as no
    offload, as torch with offload, and as the single-process reference."""
    report = Report(rank, "cpu_offload")
    mesh = make_mesh(world_size)
    api, t_api = get_impl(impl), get_impl("torch")
    report.check(
        issubclass(api.CPUOffloadPolicy, api.OffloadPolicy),
        "CPUOffloadPolicy is not a subclass of OffloadPolicy",
    )
    pol = api.CPUOffloadPolicy(pin_memory=False)
    report.check(pol.pin_memory is False, "pin_memory=False not kept")
    report.check(api.CPUOffloadPolicy().pin_memory is True, "pin_memory should default to True")

    ref = build_model("stack", seed=0)
    configs = [
        ("offload", api, pol),
        ("no_offload", api, api.OffloadPolicy()),
        ("torch_offload", t_api, t_api.CPUOffloadPolicy(pin_memory=False)),
    ]
    nets, opts = [], []
    for _, a, offload in configs:
        net = build_model("stack", seed=0)
        for block in net.blocks:
            a.fully_shard(block, mesh=mesh, offload_policy=offload)
        a.fully_shard(net, mesh=mesh, offload_policy=offload)
        nets.append(net)
        opts.append(torch.optim.SGD(net.parameters(), lr=0.1))
    off_net = nets[0]
    for name, p in off_net.named_parameters():
        report.check(isinstance(p, DTensor), f"{name} is not a DTensor")
        report.check(p.device.type == "cpu", f"sharded {name} on {p.device}")
        if isinstance(p, DTensor):
            report.check(p.to_local().device.type == "cpu", f"local shard of {name} not on CPU")

    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    for step in range(steps):
        x, y = global_batch("stack", step, 2 * world_size)
        xr, yr = rank_slice(x, rank, world_size), rank_slice(y, rank, world_size)
        step_losses = []
        for net, opt in zip(nets, opts):
            opt.zero_grad(set_to_none=True)
            lo = F.mse_loss(net(xr), yr)
            lo.backward()
            step_losses.append(mean_over_ranks(lo))
        for name, p in off_net.named_parameters():
            g = p.grad
            report.check(
                isinstance(g, DTensor) and g.device.type == "cpu",
                f"step {step}: grad of {name} is {type(g).__name__} on "
                f"{getattr(g, 'device', None)}, expected a CPU DTensor",
            )
        ref_opt.zero_grad(set_to_none=True)
        ref_loss = F.mse_loss(ref(x), y)
        ref_loss.backward()
        tol = tolerance.of_model(ref, rows=2 * world_size, steps=step + 1)
        report.close(f"step {step} loss offload vs reference", step_losses[0], ref_loss.item(), tol)
        compare_named(report, off_net, ref, f"step {step} offload vs reference", tol, grads=True)
        # offloading copies (CPU to CPU here): the same numbers as without it, and as torch
        for label, lo in zip(("no_offload", "torch_offload"), step_losses[1:]):
            report.close(f"step {step} loss offload vs {label}", step_losses[0], lo, EXACT)
        for opt in (*opts, ref_opt):
            opt.step()
        for name, p in off_net.named_parameters():
            report.check(
                p.device.type == "cpu" and isinstance(p, DTensor),
                f"step {step}: {name} not a CPU DTensor after the optimizer step",
            )
    for (label, _, _), net in zip(configs[1:], nets[1:]):
        compare_named(report, off_net, net, f"final offload vs {label}", EXACT)
    compare_named(report, off_net, ref, "final offload vs reference", tol)
    return report.result()
