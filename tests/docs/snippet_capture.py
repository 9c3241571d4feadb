"""What a snippet's namespace holds, in a form two runs can be compared by.

:func:`capture` turns the names a snippet left behind into plain data: every module's
parameters, gradients and buffers, every tensor (DTensors as their full value, gathered
once every rank agreed on which DTensors it holds), numbers, strings, optimizer state,
and how many modules each library sharded. :func:`diff` lists where torch's run and
fsdp_ref's differ, bit for bit; :func:`check_modules` that each run sharded with its own
library. Used by :mod:`tests.docs.snippet_runner`, inside the worker ranks.
"""

from __future__ import annotations

import tempfile
import types
from typing import Any

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.tensor import DTensor

__all__ = ["capture", "check_modules", "diff"]


def _sharded_counts(module: nn.Module) -> tuple[int, int]:
    """How many of ``module``'s submodules are FSDP modules, and how many of those are
    fsdp_ref's."""
    from torch.distributed.fsdp import FSDPModule as TorchFSDPModule

    import fsdp_ref

    fsdp = [m for m in module.modules() if isinstance(m, TorchFSDPModule)]
    return len(fsdp), sum(isinstance(m, fsdp_ref.FSDPModule) for m in fsdp)


class _Gathered:
    """Where a DTensor's full value goes once every rank agreed to gather it."""

    def __init__(self, index: int) -> None:
        self.index = index


def _value(v: Any, dts: list[DTensor], depth: int = 0) -> Any:
    """``v`` as plain comparable data; each DTensor is queued on ``dts`` (gathered later,
    see :func:`capture`)."""
    if isinstance(v, DTensor) and type(v._local_tensor) is not torch.Tensor:
        # a tensor subclass inside (NF4, float8): its own rules; compare what it is
        return ("tensor", str(tuple(v.placements)), type(v._local_tensor).__name__)
    if isinstance(v, DTensor):
        dts.append(v)
        return ("tensor", str(tuple(v.placements)), _Gathered(len(dts) - 1))
    if isinstance(v, torch.Tensor):
        if v.numel() and v.untyped_storage().nbytes() == 0:
            return ("tensor", "", "storage freed")  # a gathered parameter after reshard
        return ("tensor", "", v.detach().cpu().clone())
    if isinstance(v, nn.Module):
        fsdp, ours = _sharded_counts(v)
        return ("module", {"sharded": fsdp, "ours": ours},
                {n: (_value(p, dts), None if p.grad is None else _value(p.grad, dts))
                 for n, p in v.named_parameters()},
                {n: _value(b, dts) for n, b in v.named_buffers()})
    if isinstance(v, torch.optim.Optimizer):
        return ("optimizer", _value(v.state_dict()["state"], dts, depth + 1))
    if isinstance(v, BaseException):
        return ("exception", type(v).__name__, str(v))
    if isinstance(v, str) and v.startswith(tempfile.gettempdir()):
        return "<a temporary path>"  # each run makes its own
    if isinstance(v, (bool, int, float, complex, str, bytes, type(None), torch.dtype,
                      torch.device, torch.Size)):
        return v
    if depth < 4 and isinstance(v, (list, tuple)):
        return (type(v).__name__, [_value(x, dts, depth + 1) for x in v])
    if depth < 4 and isinstance(v, dict):
        if all(isinstance(k, (str, int)) for k in v):
            return ("dict", {str(k): _value(x, dts, depth + 1) for k, x in v.items()})
        return ("dict values", [_value(x, dts, depth + 1) for x in v.values()])  # tensor keys
    return ("object",)  # handles, meshes, functions: nothing to compare


def _fill(v: Any, fulls: list[torch.Tensor]) -> Any:
    if isinstance(v, _Gathered):
        return fulls[v.index]
    if isinstance(v, tuple):
        return tuple(_fill(x, fulls) for x in v)
    if isinstance(v, list):
        return [_fill(x, fulls) for x in v]
    if isinstance(v, dict):
        return {k: _fill(x, fulls) for k, x in v.items()}
    return v


def capture(ns: dict[str, Any], base: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """What the snippet's namespace holds beyond the preamble, comparably, and a problem
    (``""``: none).

    Full values of DTensors take collectives, so the ranks first agree on the list of
    DTensors (shape and placements) they hold; when it differs (a rank-dependent value,
    such as the dict rank 0 handed to ``set_model_state_dict``), nothing is gathered and
    the difference is the problem, instead of a collective mismatch that kills gloo."""
    out: dict[str, Any] = {}
    dts: list[DTensor] = []
    for name in sorted(ns):
        v = ns[name]
        if name.startswith("_") or (name in base and base[name] is v):
            continue
        if isinstance(v, (types.ModuleType, types.FunctionType, type)):
            continue
        out[name] = _value(v, dts)
    mine = [(tuple(t.shape), str(t.placements), str(t.dtype)) for t in dts]
    everyone: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(everyone, mine)
    if any(other != mine for other in everyone):
        counts = ", ".join(f"rank {r}: {len(x)}" for r, x in enumerate(everyone))
        return _fill(out, [t.to_local().detach().clone() for t in dts]), (
            f"the ranks hold different DTensors after this snippet ({counts}); the runner "
            "cannot compare them (keep rank-dependent DTensors out of the namespace)")
    return _fill(out, [t.full_tensor().detach().cpu().clone() for t in dts]), ""


def diff(a: Any, b: Any, where: str, out: list[str]) -> None:
    """Append to ``out`` every place where ``a`` (torch) and ``b`` (fsdp_ref) differ."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            out.append(f"{where}: {type(a).__name__} vs {type(b).__name__}")
        elif a.dtype != b.dtype or a.shape != b.shape:
            out.append(f"{where}: {a.dtype}{list(a.shape)} vs {b.dtype}{list(b.shape)}")
        elif not torch.equal(a, b):
            gap = (a.double() - b.double()).abs().max().item() if a.is_floating_point() else "?"
            out.append(f"{where}: values differ (max |torch - fsdp_ref| = {gap})")
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k == "ours":  # which library sharded: checked by _check_modules
                continue
            if k not in a or k not in b:
                out.append(f"{where}.{k}: only in {'torch' if k in a else 'fsdp_ref'}")
            else:
                diff(a[k], b[k], f"{where}.{k}", out)
        return
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, f"{where}[{i}]", out)
        return
    if a != b:
        out.append(f"{where}: {a!r} vs {b!r}")


def check_modules(cap: Any, lib: str, where: str, out: list[str]) -> None:
    """Every sharded module of ``cap`` belongs to ``lib``."""
    if isinstance(cap, tuple) and cap and cap[0] == "module":
        fsdp, ours = cap[1]["sharded"], cap[1]["ours"]
        if (lib == "torch" and ours) or (lib == "fsdp_ref" and ours != fsdp):
            out.append(f"{where}: {ours} of {fsdp} sharded modules are fsdp_ref's in the "
                       f"{lib} run (a snippet that runs on both must import torch's names)")
    elif isinstance(cap, dict):
        for k, v in cap.items():
            check_modules(v, lib, f"{where}.{k}", out)
