"""Pieces shared by the policy / composability scenarios (run inside the worker ranks).

Builds on :mod:`tests.fsdp.common` (models, :class:`Report`, data) and adds:

* :func:`spy_collectives`: records every ``torch.distributed`` collective FSDP issues
  (both implementations call ``dist.all_gather_single`` / ``dist.reduce_scatter_single``
  / ``dist.all_reduce`` through the module attribute, so patching them sees each call
  with its dtype and group size);
* :func:`comm_bases`: the ``AllGather`` / ``ReduceScatter`` interfaces of an impl;
* :func:`train_pair`: one SGD step of a sharded model on this rank's slice and of a
  single-process reference on the full batch, with loss / grad comparison.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.tensor import DTensor

from tests.collective_spy import KINDS, spy_on
from tests.fsdp.common import (
    Report,
    compare_params,
    for_shard,
    local_expected,
    mean_over_ranks,
    rank_slice,
)
from tests.tolerance import Tolerance

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


@contextlib.contextmanager
def spy_collectives() -> Iterator[list[tuple[str, torch.dtype, int]]]:
    """Record ``(name, dtype of the input tensor, group size)`` of each c10d collective
    called through ``torch.distributed.<name>`` while the block runs."""
    calls: list[tuple[str, torch.dtype, int]] = []

    def record(name, args, kwargs):
        tensors = [a for a in args if torch.is_tensor(a)]
        # all_gather_single(out, inp) / reduce_scatter_single(out, inp): input is 2nd
        t = kwargs.get("input", kwargs.get("input_tensor", kwargs.get("tensor")))
        if t is None and tensors:
            t = tensors[-1]
        group = kwargs.get("group")
        size = dist.get_world_size(group) if group is not None else dist.get_world_size()
        calls.append((name, None if t is None else t.dtype, size))

    with spy_on(KINDS, record):
        yield calls


def comm_bases(impl: str):
    """``(AllGather, ReduceScatter)`` abstract bases of the implementation."""
    if impl == "torch":
        from torch.distributed.fsdp._fully_shard._fsdp_api import AllGather, ReduceScatter

        return AllGather, ReduceScatter
    import fsdp_ref

    return fsdp_ref.AllGather, fsdp_ref.ReduceScatter


def fsdp_modules(model: nn.Module, api) -> list[nn.Module]:
    return [m for m in model.modules() if isinstance(m, api.FSDPModule)]


def strip(name: str) -> str:
    """Parameter name without wrapper prefixes (torch.compile, checkpoint_wrapper)."""
    for prefix in ("_orig_mod.", "_checkpoint_wrapped_module."):
        name = name.replace(prefix, "")
    return name


def named_params(model: nn.Module) -> dict[str, torch.Tensor]:
    return {strip(n): p for n, p in model.named_parameters()}


def compare_named(
    report: Report,
    model: nn.Module,
    ref: nn.Module,
    what: str,
    tol: Tolerance,
    grads: bool = False,
    scale: float = 1.0,
) -> None:
    """Like :func:`compare_params` but matches names modulo wrapper prefixes; compares
    full tensors (``full_tensor()`` of DTensors), optionally ``ref * scale``, within
    ``tol`` (gradients at their own scale). A gradient sharded ``Shard(0)`` on a 1-D mesh
    is compared shard by shard with the reference's matching chunk: no all-gather."""
    if grads:
        tol = tol.gradients()
    mine, theirs = named_params(model), named_params(ref)
    report.check(
        sorted(mine) == sorted(theirs),
        f"{what}: parameter names differ: {sorted(mine)} vs {sorted(theirs)}",
    )
    for name, p in mine.items():
        if name not in theirs:
            continue
        a, e = (p.grad, theirs[name].grad) if grads else (p, theirs[name])
        if a is None or e is None:
            report.check(
                (a is None) == (e is None),
                f"{what} {name}: grad is None={a is None}, reference grad is None={e is None}",
            )
            continue
        label = f"{what} {'grad' if grads else 'param'} {name}"
        if grads and isinstance(a, DTensor) and not isinstance(e, DTensor):
            expected = local_expected(e.detach().float() * scale, a)
            if expected is not None:
                report.close(label + " (local shard)", a.to_local().detach().float(), expected,
                             for_shard(tol, e.detach().float() * scale))
                continue
        if isinstance(a, DTensor):
            a = a.full_tensor()
        if isinstance(e, DTensor):
            e = e.full_tensor()
        report.close(label, a.detach().float(), e.detach().float() * scale, tol)


def step_pair(
    report: Report,
    net: nn.Module,
    ref: nn.Module,
    opt: torch.optim.Optimizer,
    ref_opt: torch.optim.Optimizer,
    x: torch.Tensor,
    y: torch.Tensor,
    rank: int,
    dp_size: int,
    dp_rank: int | None = None,
    what: str = "",
    check_grads: bool = True,
    *,
    tol: Tolerance,
) -> tuple[float, float]:
    """One SGD step: ``net`` on its data-parallel slice, ``ref`` on the full batch; loss
    and gradients compared within ``tol`` (the bound of :mod:`tests.tolerance` for the
    steps since the two models were equal, this one included).

    ``dp_rank`` (default ``rank``) picks the slice; the loss is averaged over all ranks,
    which equals the full-batch loss when every dp rank's slice has the same size.
    """
    dp_rank = rank if dp_rank is None else dp_rank
    opt.zero_grad(set_to_none=True)
    ref_opt.zero_grad(set_to_none=True)
    loss = F.mse_loss(net(rank_slice(x, dp_rank, dp_size)), rank_slice(y, dp_rank, dp_size))
    loss.backward()
    ref_loss = F.mse_loss(ref(x), y)
    ref_loss.backward()
    mean_loss = mean_over_ranks(loss)
    report.close(f"{what} loss", mean_loss, ref_loss.item(), tol)
    if check_grads:
        compare_named(report, net, ref, what, tol, grads=True)
    opt.step()
    ref_opt.step()
    return mean_loss, ref_loss.item()


def all_grads_are_dtensors(report: Report, model: nn.Module, what: str) -> None:
    for name, p in model.named_parameters():
        if p.grad is not None:
            report.check(
                isinstance(p.grad, DTensor),
                f"{what}: grad of {name} is a {type(p.grad).__name__}, not a DTensor",
            )


__all__ = [
    "DTYPES",
    "all_grads_are_dtensors",
    "comm_bases",
    "compare_named",
    "compare_params",
    "fsdp_modules",
    "named_params",
    "spy_collectives",
    "step_pair",
    "strip",
]
