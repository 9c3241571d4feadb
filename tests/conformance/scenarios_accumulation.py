"""Gradient accumulation with sync off under a mixed-precision policy (issue 30 item 1).

With ``set_requires_gradient_sync(False)`` a group keeps its unsharded gradients across
backwards and reduces them in the backward that syncs. Under ``param_dtype=bfloat16,
reduce_dtype=float32`` torch 2.13 moves each microbatch's bf16 gradient into an fp32
accumulator right after that backward (``FSDPParam.to_accumulated_grad_if_needed``) and adds
later ones into it; summing in bf16 instead loses up to an ulp of bf16 per microbatch (the
difference the issue measured: 0.031 against a largest gradient of 10.6 after two
microbatches). Each scenario here runs microbatches ``1..n``, sync off for all but the
last, and returns what a user sees: the per-microbatch losses, the sharded gradients after
the syncing backward, the parameters after an SGD step, and after every non-syncing
backward the dtype and size of what each parameter holds unreduced (torch's accumulator
and ``.grad`` against fsdp_ref's): the same memory, not just the same numbers.
"""

from __future__ import annotations

import torch
import torch.nn as nn

from tests.conformance.harness import full

DIM = 64


def _held(lib, model: nn.Module) -> list[tuple[str, tuple[str, int] | None, bool]]:
    """Per managed parameter: (dtype, numel) of the reduce-dtype accumulator if any, and
    whether a ``param_dtype`` ``.grad`` is still held, read from each library's own state
    (torch: ``FSDPParam.unsharded_accumulated_grad``; fsdp_ref: ``accumulated_grad``)."""
    held = []
    for module in model.modules():
        groups = getattr(module, "_get_fsdp_state", None)
        if groups is None:
            continue
        state = module._get_fsdp_state()
        for group in (state._fsdp_param_groups if lib.name == "torch" else state.groups):
            for p in group.fsdp_params:
                acc = (p.unsharded_accumulated_grad if lib.name == "torch"
                       else p.accumulated_grad)
                unsharded = p._unsharded_param if lib.name == "torch" else p.unsharded_param
                grad = None if unsharded is None else unsharded.grad
                held.append((p._param_fqn if lib.name == "torch" else p.fqn,
                             None if acc is None else (str(acc.dtype), acc.numel()),
                             grad is not None))
    return sorted(held, key=lambda h: h[0])


class TwoLayers(nn.Module):
    """``head(relu(block(x)))``; ``unused`` is a layer forward never calls."""

    def __init__(self, unused: bool) -> None:
        super().__init__()
        self.block = nn.Linear(DIM, DIM)
        self.head = nn.Linear(DIM, DIM, bias=False)
        self.unused = nn.Linear(DIM, DIM) if unused else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.relu(self.block(x)))


def _model(lib, *, offload: bool, hsdp: bool, reshard_after_backward: bool,
           unused: bool) -> nn.Module:
    torch.manual_seed(0)
    model = TwoLayers(unused)
    mesh = lib.mesh((2, lib.world_size // 2), ("replicate", "shard")) if hsdp else lib.mesh()
    mp = lib.MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    kwargs = {"mesh": mesh, "mp_policy": mp}
    if offload:
        kwargs["offload_policy"] = lib.CPUOffloadPolicy(pin_memory=False)
    lib.fully_shard(model.block, **kwargs)
    lib.fully_shard(model, **kwargs)
    if lib.distributed:
        model.set_reshard_after_backward(reshard_after_backward)
        if unused:
            model.set_reduce_scatter_unused_params(True)
    return model


def accumulate(lib, microbatches: int, offload: bool = False, hsdp: bool = False,
               reshard_after_backward: bool = True, unused: bool = False,
               all_reduce_every: bool = True) -> dict:
    """``microbatches`` backwards through two bf16/fp32 groups, sync on only in the last;
    with ``all_reduce_every=False`` (HSDP) the all-reduce is also off until the last."""
    model = _model(lib, offload=offload, hsdp=hsdp,
                   reshard_after_backward=reshard_after_backward, unused=unused)
    g = torch.Generator().manual_seed(7)
    rows = 4 * lib.world_size
    losses, held = [], []
    for i in range(microbatches):
        last = i == microbatches - 1
        model.set_requires_gradient_sync(last)
        if hsdp and not all_reduce_every:
            model.set_requires_all_reduce(last)
        x = torch.randn(rows, DIM, generator=g)
        x = lib.local(x) * (1 + i)  # growing magnitudes: bf16 sums lose the small ones
        loss = model(x).float().square().sum()
        loss.backward()
        losses.append(loss.detach().float())
        if not last:
            held.append(_held(lib, model))
    grads = {n: full(p.grad) for n, p in model.named_parameters() if p.grad is not None}
    torch.optim.SGD(model.parameters(), lr=1e-3).step()
    params = {n: full(p).detach().clone() for n, p in model.named_parameters()}
    return {"losses": losses, "grads": grads, "params": params, "held": held}


def accumulate_unused(lib, microbatches: int = 3) -> dict:
    """``set_reduce_scatter_unused_params(True)`` with a layer forward never calls, sync off
    until the last microbatch. torch 2.13 refuses this (an ``AssertionError``, "FSDP
    reduce-scatter expects uniform gradient dtype": the unused layer's zero gradient is
    made in ``param_dtype`` while the others were accumulated in ``reduce_dtype``); fsdp_ref
    reduces every gradient in its ``reduce_dtype``. The truth for fsdp_ref is torch on the
    model without that layer, and a zero gradient for it: pass ``without_unused=True`` for
    torch. The unused layer's entries come back apart, under ``"unused"``."""
    out = accumulate(lib, microbatches, unused=True)
    unused = {k: {n: v for n, v in out[k].items() if n.startswith("unused.")}
              for k in ("grads", "params")}
    for k in ("grads", "params"):
        out[k] = {n: v for n, v in out[k].items() if not n.startswith("unused.")}
    out["held"] = [[h for h in step if not h[0].startswith("unused.")] for step in out["held"]]
    return {**out, "unused": unused}


def accumulate_without_unused(lib, microbatches: int = 3) -> dict:
    """The truth for :func:`accumulate_unused`: the same training without the unused layer
    (the ``unused`` entry holds the values the layer starts from, for the check that
    fsdp_ref leaves it unchanged by a zero gradient)."""
    out = accumulate(lib, microbatches)
    torch.manual_seed(0)
    start = TwoLayers(unused=True).unused
    return {**out, "start": {f"unused.{n}": p.detach().clone()
                             for n, p in start.named_parameters()}}
