"""Composability scenarios: register_fsdp_forward_method, share_comm_ctx, UnshardHandle,
custom all-gather / reduce-scatter comms, activation checkpointing and torch.compile
(run on every rank by the harness).  Every numeric check compares with a single-process
reference trained on the full batch (SGD)."""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.tensor import DTensor

from tests import tolerance
from tests.fsdp.common import (
    MLP,
    Report,
    build_model,
    deepcopy_model,
    get_impl,
    global_batch,
    make_mesh,
    mean_over_ranks,
    rank_slice,
    run_with,
)
from tests.policies.helpers import (
    comm_bases,
    compare_named,
    fsdp_modules,
    spy_collectives,
    step_pair,
)
from tests.tolerance import EXACT

# --------------------------------------------------------------------------------------
# register_fsdp_forward_method
# --------------------------------------------------------------------------------------


class _Generator(nn.Module):
    def __init__(self, dim: int = 16):
        super().__init__()
        self.lin1 = nn.Linear(dim, dim)
        self.lin2 = nn.Linear(dim, dim)

    def forward(self, x):
        return self.lin2(torch.relu(self.lin1(x)))

    def generate(self, x, n: int = 3):
        """Uses the parameters directly (not through forward)."""
        h = x
        for _ in range(n):
            h = torch.tanh(F.linear(h, self.lin1.weight, self.lin1.bias))
            h = h @ self.lin2.weight.t() + self.lin2.bias
        return h


def forward_method(rank: int, world_size: int, impl: str) -> dict[str, Any]:
    report = Report(rank, "register_fsdp_forward_method")
    api = get_impl(impl)
    mesh = make_mesh(world_size)
    torch.manual_seed(0)
    net = _Generator()
    ref = deepcopy_model(net)
    api.fully_shard(net, mesh=mesh, reshard_after_forward=True)
    x = global_batch("mlp", 0, 2 * world_size)[0]
    xr = rank_slice(x, rank, world_size)

    # without registration the method sees the sharded DTensors: DTensor refuses to mix
    # them with the plain input (and nothing else may fail)
    _, err = run_with(lambda: net.generate(xr))
    report.check(
        isinstance(err, RuntimeError) and "got mixed torch.Tensor and DTensor" in str(err),
        f"generate() without registration should fail on the sharded DTensors, got {err!r}",
    )

    api.register_fsdp_forward_method(net, "generate")
    with torch.no_grad():
        out = net.generate(xr)
    report.close("generate() (no_grad) vs reference", out, ref.generate(xr), EXACT)
    for n, p in net.named_parameters():
        report.check(isinstance(p, DTensor), f"{n} not resharded after generate()")

    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    for step in range(2):
        # generate() applies each layer 3 times
        tol = tolerance.of_model(ref, rows=2 * world_size, steps=step + 1, repeat=3)
        xs, _ = global_batch("mlp", step + 1, 2 * world_size)
        opt.zero_grad(set_to_none=True)
        ref_opt.zero_grad(set_to_none=True)
        loss = net.generate(rank_slice(xs, rank, world_size)).pow(2).mean()
        loss.backward()
        ref_loss = ref.generate(xs).pow(2).mean()
        ref_loss.backward()
        report.close(f"step {step} generate loss", mean_over_ranks(loss), ref_loss.item(), tol)
        compare_named(report, net, ref, f"step {step} generate", tol, grads=True)
        opt.step()
        ref_opt.step()
    compare_named(report, net, ref, "final after generate training", tol)
    # forward still works and matches
    report.close("forward after generate", net(xr), ref(xr), tol)
    return report.result()


# --------------------------------------------------------------------------------------
# share_comm_ctx
# --------------------------------------------------------------------------------------


def shared_comm_ctx(rank: int, world_size: int, impl: str) -> dict[str, Any]:
    """Two separately sharded roots (``m2(m1(x))``, like two pipeline stages) sharing
    one comm context both train like their references."""
    report = Report(rank, "share_comm_ctx")
    api = get_impl(impl)
    mesh = make_mesh(world_size)
    m1 = build_model("stack", seed=0, out=16, n_blocks=2)
    torch.manual_seed(1)
    m2 = MLP(16, 32, 8)
    r1, r2 = deepcopy_model(m1), deepcopy_model(m2)
    for block in m1.blocks:
        api.fully_shard(block, mesh=mesh)
    api.fully_shard(m1, mesh=mesh)
    api.fully_shard(m2.in_proj, mesh=mesh)
    api.fully_shard(m2, mesh=mesh)
    api.share_comm_ctx([m1, m2])
    opt = torch.optim.SGD([*m1.parameters(), *m2.parameters()], lr=0.1)
    ref_opt = torch.optim.SGD([*r1.parameters(), *r2.parameters()], lr=0.1)
    for step in range(3):
        tol = tolerance.training(rows=2 * world_size, steps=step + 1,
                                 shapes=[p.shape for r in (r1, r2) for p in r.parameters()])
        x, y = global_batch("stack", step, 2 * world_size)
        opt.zero_grad(set_to_none=True)
        ref_opt.zero_grad(set_to_none=True)
        loss = F.mse_loss(m2(m1(rank_slice(x, rank, world_size))), rank_slice(y, rank, world_size))
        loss.backward()
        ref_loss = F.mse_loss(r2(r1(x)), y)
        ref_loss.backward()
        report.close(f"step {step} loss", mean_over_ranks(loss), ref_loss.item(), tol)
        compare_named(report, m1, r1, f"step {step} m1", tol, grads=True)
        compare_named(report, m2, r2, f"step {step} m2", tol, grads=True)
        opt.step()
        ref_opt.step()
    compare_named(report, m1, r1, "final m1", tol)
    compare_named(report, m2, r2, "final m2", tol)
    return report.result()


# --------------------------------------------------------------------------------------
# unshard(async_op=True)
# --------------------------------------------------------------------------------------


def unshard_handle(rank: int, world_size: int, impl: str, first: str = "root") -> dict[str, Any]:
    """``unshard(async_op=True)`` on the root and every block before forward returns an
    ``UnshardHandle``; after ``wait()`` the module's parameters are plain full tensors
    equal to the reference's; forward (which waits on un-waited handles itself) and
    training still match.

    first: ``"root"`` (the root is unsharded first, as in the docs' example) or
    ``"block"`` (a block is unsharded before the root ever ran forward).
    """
    report = Report(rank, f"unshard_handle[{first}]")
    api = get_impl(impl)
    mesh = make_mesh(world_size)
    net = build_model("stack", seed=0)
    ref = deepcopy_model(net)
    for block in net.blocks:
        api.fully_shard(block, mesh=mesh)
    api.fully_shard(net, mesh=mesh)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    ref_params = dict(ref.named_parameters())
    tol = EXACT  # before the first step: copies
    for step in range(2):
        order = [net, *net.blocks] if first == "root" else [*net.blocks, net]
        handles = [m.unshard(async_op=True) for m in order]
        for h in handles:
            report.check(
                isinstance(h, api.UnshardHandle), f"unshard(async_op=True) returned {type(h)}"
            )
        b0 = net.blocks[0]
        handles[order.index(b0)].wait()
        for n, p in b0.named_parameters():
            report.check(not isinstance(p, DTensor), f"step {step}: blocks.0.{n} still sharded")
            if not isinstance(p, DTensor):  # trained as far as the reference, step steps
                report.close(f"step {step}: unsharded blocks.0.{n}", p,
                             ref_params[f"blocks.0.{n}"], tol)
        tol = tolerance.of_model(ref, rows=2 * world_size, steps=step + 1)
        x, y = global_batch("stack", step, 2 * world_size)
        step_pair(report, net, ref, opt, ref_opt, x, y, rank, world_size, what=f"step {step}",
                  tol=tol)
        for n, p in net.named_parameters():
            report.check(isinstance(p, DTensor), f"step {step}: {n} not resharded after backward")
    compare_named(report, net, ref, "final", tol)
    return report.result()


# --------------------------------------------------------------------------------------
# custom comms
# --------------------------------------------------------------------------------------


def custom_comms(rank: int, world_size: int, impl: str) -> dict[str, Any]:
    """Subclasses of the ``AllGather`` / ``ReduceScatter`` interfaces that count their
    calls and delegate to ``dist.all_gather_into_tensor`` / ``reduce_scatter_tensor``:
    they run every all-gather and reduce-scatter (the default ``*_single`` collectives are
    not used any more) and training still matches the reference."""
    report = Report(rank, "custom_comms")
    api = get_impl(impl)
    AllGather, ReduceScatter = comm_bases(impl)
    counts = {"ag": 0, "rs": 0, "ag_alloc": 0, "rs_alloc": 0, "bad_group": 0}

    class CountingAllGather(AllGather):
        def allocate(self, size, *, dtype, device):
            counts["ag_alloc"] += 1
            return torch.empty(*size, dtype=dtype, device=device)

        def __call__(self, output_tensor, input_tensor, group, async_op=False):
            counts["ag"] += 1
            counts["bad_group"] += int(group.size() != world_size)
            return dist.all_gather_into_tensor(output_tensor, input_tensor, group=group,
                                               async_op=async_op)

    class CountingReduceScatter(ReduceScatter):
        def allocate(self, size, *, dtype, device):
            counts["rs_alloc"] += 1
            return torch.empty(*size, dtype=dtype, device=device)

        def __call__(self, output_tensor, input_tensor, group, op, async_op=False):
            counts["rs"] += 1
            counts["bad_group"] += int(group.size() != world_size)
            return dist.reduce_scatter_tensor(output_tensor, input_tensor, op=op, group=group,
                                              async_op=async_op)

    mesh = make_mesh(world_size)
    net = build_model("stack", seed=0)
    ref = deepcopy_model(net)
    for block in net.blocks:
        api.fully_shard(block, mesh=mesh)
    api.fully_shard(net, mesh=mesh)
    mods = fsdp_modules(net, api)
    for m in mods:
        m.set_custom_all_gather(CountingAllGather())
        m.set_custom_reduce_scatter(CountingReduceScatter())
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    steps = 2
    with spy_collectives() as calls:
        for step in range(steps):
            x, y = global_batch("stack", step, 2 * world_size)
            tol = tolerance.of_model(ref, rows=2 * world_size, steps=step + 1)
            step_pair(report, net, ref, opt, ref_opt, x, y, rank, world_size,
                      what=f"step {step}", tol=tol)
    compare_named(report, net, ref, "final", tol)
    names = [c[0] for c in calls]
    default = [n for n in names if n in ("all_gather_single", "reduce_scatter_single")]
    report.check(not default, f"default collectives still used: {default}")
    # every group all-gathers at least once per step and reduce-scatters once per step
    report.check(counts["ag"] >= len(mods) * steps, f"custom all-gather calls: {counts}")
    report.check(counts["rs"] == len(mods) * steps, f"custom reduce-scatter calls: {counts}")
    report.check(
        names.count("all_gather_into_tensor") == counts["ag"]
        and names.count("reduce_scatter_tensor") == counts["rs"],
        f"delegated collectives {names} vs counts {counts}",
    )
    report.check(counts["ag_alloc"] > 0 and counts["rs_alloc"] > 0,
                 f"custom allocate() never used: {counts}")
    report.check(counts["bad_group"] == 0, "a custom comm got a group of the wrong size")
    return report.result(counts=counts)


# --------------------------------------------------------------------------------------
# activation checkpointing and torch.compile
# --------------------------------------------------------------------------------------


def _count_inner_forwards(model: nn.Module) -> list[int]:
    counter = [0]
    for block in model.modules():
        if type(block).__name__ in ("ResBlock", "FSDPResBlock"):
            block.mlp.register_forward_pre_hook(lambda *_: counter.__setitem__(0, counter[0] + 1))
    return counter


def activation_checkpointing(rank: int, world_size: int, impl: str, kind: str) -> dict[str, Any]:
    """Blocks checkpointed before fully_shard: ``"function"`` (``torch.utils.checkpoint``
    inside each block's forward) or ``"wrapper"`` (``checkpoint_wrapper`` around each
    block, also applied to the reference).  Recomputation happens (each block's MLP runs
    twice per step) and training matches the reference."""
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper

    report = Report(rank, f"activation_checkpointing[{kind}]")
    api = get_impl(impl)
    mesh = make_mesh(world_size)
    net = build_model("stack", seed=0, checkpoint=(kind == "function"))
    ref = build_model("stack", seed=0)
    if kind == "wrapper":
        for i, block in enumerate(list(net.blocks)):
            net.blocks[i] = checkpoint_wrapper(block)
    for block in net.blocks:
        api.fully_shard(block, mesh=mesh)
    api.fully_shard(net, mesh=mesh)
    counter = _count_inner_forwards(net)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    for step in range(3):
        counter[0] = 0
        x, y = global_batch("stack", step, 2 * world_size)
        tol = tolerance.of_model(ref, rows=2 * world_size, steps=step + 1)
        step_pair(report, net, ref, opt, ref_opt, x, y, rank, world_size, what=f"step {step}",
                  tol=tol)
        report.check(
            counter[0] == 2 * len(net.blocks),
            f"step {step}: block MLPs ran {counter[0]} times, expected {2 * len(net.blocks)} "
            "(forward + recomputation)",
        )
    compare_named(report, net, ref, "final", tol)
    return report.result()


def compiled_blocks(rank: int, world_size: int, impl: str, how: str) -> dict[str, Any]:
    """Blocks compiled (``backend="aot_eager"``) before fully_shard: ``"method"``
    (``block.compile()``, in place) or ``"wrapper"`` (``torch.compile(block)``, an
    OptimizedModule put back into the model).  Training matches the eager reference."""
    import torch._dynamo

    report = Report(rank, f"compile[{how}]")
    api = get_impl(impl)
    mesh = make_mesh(world_size)
    torch._dynamo.reset()
    net = build_model("stack", seed=0, n_blocks=2)
    ref = deepcopy_model(net)
    for i, block in enumerate(list(net.blocks)):
        if how == "method":
            block.compile(backend="aot_eager")
        else:
            net.blocks[i] = torch.compile(block, backend="aot_eager")
    for block in net.blocks:
        api.fully_shard(block, mesh=mesh)
    api.fully_shard(net, mesh=mesh)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    for step in range(3):
        x, y = global_batch("stack", step, 2 * world_size)
        tol = tolerance.of_model(ref, rows=2 * world_size, steps=step + 1)
        step_pair(report, net, ref, opt, ref_opt, x, y, rank, world_size, what=f"step {step}",
                  tol=tol)
    compare_named(report, net, ref, "final", tol)
    for n, p in net.named_parameters():
        report.check(isinstance(p, DTensor), f"{n} not sharded after training")
    return report.result()

