"""Training-parity scenarios (run on every rank by the harness).

``vs_reference``: an FSDP model trained on this rank's slice of each batch must match a
single-process copy of the same model trained on the full batch (the copy is taken
before ``fully_shard``).  Losses (averaged over ranks), gradients (``full_tensor()``)
and final parameters are compared every step, within the bound of :mod:`tests.tolerance`.

``vs_torch``: the implementation under test and torch's own ``fully_shard`` train two
identically seeded copies side by side in the same process on the same data; per-step
losses, gradients and final parameters (full and local shards) must agree bitwise.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.distributed.tensor import DTensor

from tests import tolerance
from tests.fsdp.common import (
    Report,
    apply_fsdp,
    build_model,
    compare_params,
    deepcopy_model,
    full,
    get_impl,
    global_batch,
    loss_fn,
    make_mesh,
    make_optimizer,
    mean_over_ranks,
    rank_slice,
)
from tests.tolerance import EXACT


def _set_prefetch(model) -> None:
    blocks = list(model.blocks)
    for i, block in enumerate(blocks):
        if i + 1 < len(blocks):
            # two modules ahead: exercises "at least length two" aggressive prefetching
            block.set_modules_to_forward_prefetch(blocks[i + 1 : i + 3])
        if i > 0:
            block.set_modules_to_backward_prefetch([blocks[i - 1]])
    model.set_modules_to_forward_prefetch(blocks[:2])
    model.set_modules_to_backward_prefetch([blocks[-1]])


def vs_reference(
    rank: int,
    world_size: int,
    impl: str,
    model: str = "stack",
    model_kwargs: dict[str, Any] | None = None,
    nested: bool = True,
    reshard_after_forward: Any = None,
    steps: int = 3,
    batch_per_rank: int = 2,
    lr: float | None = None,
    microbatches: int = 1,
    accum: str | None = None,
    two_forwards: bool = False,
    prefetch: bool = False,
    fail_at_step: int | None = None,
    clip: float | None = None,
    alternate_unused: bool = False,
    list_group: bool = False,
    sabotage_no_sync: bool = False,
) -> dict[str, Any]:
    """Train FSDP (this rank's slice) vs a full-batch single-process reference, SGD, within
    the bound of :mod:`tests.tolerance` for the model, the global batch and the step.

    accum: ``None`` (one backward per step), ``"sync"`` (``microbatches`` backwards,
    gradients reduced every time), ``"no_sync"`` (``set_requires_gradient_sync(False)``
    on all but the last microbatch) or ``"no_sync_last"`` (additionally
    ``set_is_last_backward(False)`` on all but the last).
    two_forwards: two forward passes (the two halves of the batch) before one backward.
    fail_at_step: at that step a block raises in forward; the root's
    ``reset_iter_state()`` is called and the step is redone.
    sabotage_no_sync: never reduce gradients (the checks must then fail).
    """
    report = Report(rank, "vs_reference")
    fsdp = get_impl(impl)
    mesh = make_mesh(world_size)
    model_kwargs = dict(model_kwargs or {})
    kind = model

    net = build_model(kind, seed=0, **model_kwargs)
    ref = deepcopy_model(net)
    if list_group:
        blocks = list(net.blocks)
        groups = fsdp.fully_shard(blocks[:2], mesh=mesh)
        report.check(
            isinstance(groups, list) and all(isinstance(g, fsdp.FSDPModule) for g in groups),
            f"fully_shard(list) should return the list of FSDPModules, got {type(groups)}",
        )
        for b in blocks[2:]:
            fsdp.fully_shard(b, mesh=mesh)
        fsdp.fully_shard(net, mesh=mesh)
    else:
        apply_fsdp(net, fsdp, mesh, nested=nested, reshard_after_forward=reshard_after_forward)
    if prefetch:
        _set_prefetch(net)
    if sabotage_no_sync:  # negative control for the harness self-tests
        net.set_requires_gradient_sync(False)

    opt_kw = {} if lr is None else {"lr": lr}
    # SGD: the bound of tests.tolerance follows plain gradient steps (see ``optimizers``)
    opt = make_optimizer("sgd", net.parameters(), **opt_kw)
    ref_opt = make_optimizer("sgd", ref.parameters(), **opt_kw)

    n_micro = microbatches if accum else 1
    n_parts = 2 if two_forwards else n_micro
    tokens = model_kwargs.get("seq_len", 8) if kind == "gpt" else 1  # rows of one sample
    rows = batch_per_rank * world_size * n_parts * tokens
    losses, ref_losses = [], []
    for step in range(steps):
        tol = tolerance.of_model(ref, rows=rows, steps=step + 1)
        x, y = global_batch(kind, step, batch_per_rank * world_size * n_parts, **model_kwargs)
        xs, ys = x.chunk(n_parts), y.chunk(n_parts)
        if alternate_unused:
            net.use_branch = ref.use_branch = step % 2 == 0

        # ---- reference: full batch ----
        ref_opt.zero_grad(set_to_none=True)
        if two_forwards:
            ref_loss = sum(loss_fn(kind, ref(xp), yp) for xp, yp in zip(xs, ys))
            ref_loss.backward()
        else:
            ref_loss = 0.0
            for xp, yp in zip(xs, ys):
                micro_loss = loss_fn(kind, ref(xp), yp) / n_parts
                micro_loss.backward()
                ref_loss = ref_loss + micro_loss.detach()
        if clip is not None:
            ref_norm = torch.nn.utils.clip_grad_norm_(ref.parameters(), clip)

        # ---- FSDP: this rank's slice ----
        if fail_at_step == step:
            net.blocks[1].fail_next = True
            try:
                net(rank_slice(xs[0], rank, world_size))
                report.errors.append(f"step {step}: injected failure did not raise")
            except RuntimeError as e:
                report.check("injected failure" in str(e), f"unexpected exception {e!r}")
            net.reset_iter_state()
        opt.zero_grad(set_to_none=True)
        if two_forwards:
            outs = [net(rank_slice(xp, rank, world_size)) for xp in xs]
            loss = sum(
                loss_fn(kind, o, rank_slice(yp, rank, world_size)) for o, yp in zip(outs, ys)
            )
            loss.backward()
        else:
            loss = 0.0
            for i, (xp, yp) in enumerate(zip(xs, ys)):
                last = i == n_parts - 1
                if accum in ("no_sync", "no_sync_last"):
                    net.set_requires_gradient_sync(last)
                if accum == "no_sync_last":
                    net.set_is_last_backward(last)
                micro_loss = (
                    loss_fn(
                        kind,
                        net(rank_slice(xp, rank, world_size)),
                        rank_slice(yp, rank, world_size),
                    )
                    / n_parts
                )
                micro_loss.backward()
                loss = loss + micro_loss.detach()
        if clip is not None:
            norm = torch.nn.utils.clip_grad_norm_(net.parameters(), clip)
            # the norm sums squares (another order on each rank) and scales every gradient
            tol = tol.plus(tolerance.squares(ref.parameters(), world_size))
            report.close(f"step {step} clip_grad_norm_ total norm", full(norm), ref_norm, tol)

        losses.append(mean_over_ranks(loss))
        ref_losses.append(float(ref_loss))
        report.close(f"step {step} loss", losses[-1], ref_losses[-1], tol)
        compare_params(report, net, ref, f"step {step}", tol, grads=True)
        for name, p in net.named_parameters():
            g = p.grad
            if g is not None and not isinstance(g, DTensor):
                report.errors.append(
                    f"step {step} grad of {name} is a {type(g).__name__}, not a DTensor"
                )
        opt.step()
        ref_opt.step()

    compare_params(report, net, ref, "final", tol)
    return report.result(losses=losses, ref_losses=ref_losses)


def vs_torch(
    rank: int,
    world_size: int,
    impl: str,
    model: str = "gpt",
    model_kwargs: dict[str, Any] | None = None,
    nested: bool = True,
    reshard_after_forward: Any = None,
    steps: int = 4,
    batch_per_rank: int = 2,
    optim: str = "adamw",
) -> dict[str, Any]:
    """Implementation under test vs torch's fully_shard, same process, same seed/data:
    bitwise (the same ops on the same data in the same order)."""
    report = Report(rank, "vs_torch")
    mesh = make_mesh(world_size)
    model_kwargs = dict(model_kwargs or {})
    kind = model
    torch_fsdp, test_fsdp = get_impl("torch"), get_impl(impl)

    nets, opts = [], []
    for api in (torch_fsdp, test_fsdp):
        net = build_model(kind, seed=0, **model_kwargs)
        apply_fsdp(net, api, mesh, nested=nested, reshard_after_forward=reshard_after_forward)
        nets.append(net)
        opts.append(make_optimizer(optim, net.parameters()))
    t_net, i_net = nets

    for (name, tp), (iname, ip) in zip(t_net.named_parameters(), i_net.named_parameters()):
        report.check(name == iname, f"parameter order differs: {name} vs {iname}")
        if isinstance(tp, DTensor) and isinstance(ip, DTensor):
            report.check(
                tuple(tp.to_local().shape) == tuple(ip.to_local().shape)
                and tuple(tp.placements) == tuple(ip.placements),
                f"{name}: local shard {tuple(ip.to_local().shape)} {ip.placements} != "
                f"torch's {tuple(tp.to_local().shape)} {tp.placements}",
            )
        else:
            report.errors.append(
                f"{name}: expected DTensors, got {type(tp).__name__}/{type(ip).__name__}"
            )

    losses: list[list[float]] = [[], []]
    for step in range(steps):
        x, y = global_batch(kind, step, batch_per_rank * world_size, **model_kwargs)
        xr, yr = rank_slice(x, rank, world_size), rank_slice(y, rank, world_size)
        for k, (net, opt) in enumerate(zip(nets, opts)):
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(kind, net(xr), yr)
            loss.backward()
            losses[k].append(loss.item())
        report.close(f"step {step} local loss", losses[1][-1], losses[0][-1], EXACT)
        compare_params(report, i_net, t_net, f"step {step}", EXACT, grads=True)
        for opt in opts:
            opt.step()

    compare_params(report, i_net, t_net, "final", EXACT)
    for (name, tp), (_, ip) in zip(t_net.named_parameters(), i_net.named_parameters()):
        if isinstance(tp, DTensor) and isinstance(ip, DTensor):
            report.close(f"final local shard {name}", ip.to_local(), tp.to_local(), EXACT)
    return report.result(torch_losses=losses[0], impl_losses=losses[1])


def optimizers(
    rank: int, world_size: int, impl: str, names: tuple[str, ...] = (), steps: int = 2
) -> list[dict[str, Any]]:
    """Any torch.optim optimizer works on the sharded DTensor parameters: trains like torch's
    ``fully_shard`` with that optimizer, bitwise. (Not against one process: an adaptive
    optimizer divides each element's update by that element's own gradient size, so where
    a gradient is within the reordered sums' bound of zero its update may differ by up to
    the learning rate, and no bound relative to the tensor exists.)"""
    out = []
    for name in names:
        res = vs_torch(rank, world_size, impl, model="mlp", nested=True, optim=name, steps=steps)
        res["name"] = f"optimizer {name}"
        out.append(res)
    return out
