"""Shared pieces of the FSDP scenarios (run inside the worker ranks).

* :func:`get_impl` picks ``torch.distributed.fsdp`` or ``fsdp_ref``;
* the models of :mod:`tests.fsdp.models` (re-exported), :func:`apply_fsdp` to shard them;
* :class:`Report` collects mismatches without raising (a raising rank would leave the
  others blocked in a collective), and the test asserts on the returned reports with
  :func:`assert_reports_ok` in the parent process.
"""

from __future__ import annotations

import copy
import importlib
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.tensor import DTensor

from tests.tolerance import Tolerance

IMPLS = ("torch", "fsdp_ref")

_IMPL_MODULES = {"torch": "torch.distributed.fsdp", "fsdp_ref": "fsdp_ref"}
API_NAMES = (
    "fully_shard",
    "FSDPModule",
    "MixedPrecisionPolicy",
    "OffloadPolicy",
    "CPUOffloadPolicy",
    "UnshardHandle",
    "register_fsdp_forward_method",
    "share_comm_ctx",
    "DataParallelMeshDims",
)


class Impl:
    """The FSDP2 API of one implementation; symbols resolve on first access so a
    scenario only needs the ones it uses."""

    def __init__(self, name: str):
        if name not in _IMPL_MODULES:
            raise ValueError(f"unknown impl {name!r}; expected one of {IMPLS}")
        self.name = name
        self.module = importlib.import_module(_IMPL_MODULES[name])

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("_"):
            raise AttributeError(attr)
        try:
            return getattr(self.module, attr)
        except AttributeError:
            raise AttributeError(f"{self.module.__name__} has no attribute {attr!r}") from None

    def __repr__(self) -> str:
        return f"Impl({self.name!r})"


_impl_cache: dict[str, Impl] = {}


def get_impl(impl: str) -> Impl:
    """``get_impl("torch")`` / ``get_impl("fsdp_ref")``: namespace with ``fully_shard``,
    ``FSDPModule``, ``MixedPrecisionPolicy``, ... of that implementation."""
    if impl not in _impl_cache:
        _impl_cache[impl] = Impl(impl)
    return _impl_cache[impl]


def make_mesh(world_size: int):
    from torch.distributed.device_mesh import init_device_mesh

    return init_device_mesh("cpu", (world_size,))


from tests.fsdp.models import (  # noqa: E402,F401  (re-exported: the scenarios import them from here)
    MLP,
    CausalSelfAttention,
    GPTBlock,
    ResBlock,
    SometimesUnused,
    Stack,
    TinyGPT,
    UnevenModel,
    block_modules,
    build_model,
)


def apply_fsdp(
    model: nn.Module,
    impl: Impl,
    mesh,
    *,
    nested: bool = True,
    reshard_after_forward: Any = None,
    root_reshard_after_forward: Any = "same",
) -> nn.Module:
    """``fully_shard`` each block (when ``nested``) then the root."""
    kw = {} if reshard_after_forward is None else {"reshard_after_forward": reshard_after_forward}
    if nested:
        for m in block_modules(model):
            impl.fully_shard(m, mesh=mesh, **kw)
    if root_reshard_after_forward != "same":
        kw = {"reshard_after_forward": root_reshard_after_forward}
    impl.fully_shard(model, mesh=mesh, **kw)
    return model


# --------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------


def global_batch(kind: str, step: int, batch: int, seed: int = 1234, **model_kwargs: Any):
    """Deterministic (input, target) of the whole batch for ``step``; identical on all ranks."""
    g = torch.Generator().manual_seed(seed + 7919 * step)
    if kind == "gpt":
        vocab = model_kwargs.get("vocab", 37)
        seq = model_kwargs.get("seq_len", 8)
        x = torch.randint(0, vocab, (batch, seq), generator=g)
        y = torch.randint(0, vocab, (batch, seq), generator=g)
        return x, y
    dims = {"mlp": (16, 16), "stack": (16, 8), "uneven": (7, 5), "unused": (12, 3)}
    din, dout = dims[kind]
    if kind == "mlp":
        din = model_kwargs.get("dim", 16)
        dout = model_kwargs.get("out") or din
    if kind == "stack":
        din = model_kwargs.get("dim", 16)
        dout = model_kwargs.get("out", 8)
    x = torch.randn(batch, din, generator=g)
    y = torch.randn(batch, dout, generator=g)
    return x, y


def loss_fn(kind: str, out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    if kind == "gpt":
        return F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
    return F.mse_loss(out, y)


def rank_slice(t: torch.Tensor, rank: int, world_size: int) -> torch.Tensor:
    assert t.shape[0] % world_size == 0, "batch must divide evenly for exact parity"
    return t.chunk(world_size, dim=0)[rank]


# --------------------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------------------


class Report:
    """Collects failures as strings (never raises) plus free-form info, and the comparison
    that came closest to its bound (``closest``: how many times the bound, and what)."""

    def __init__(self, rank: int, name: str = ""):
        self.rank = rank
        self.name = name
        self.errors: list[str] = []
        self.info: dict[str, Any] = {}
        self.closest: tuple[float, str] = (0.0, "")

    def check(self, cond: Any, msg: str) -> bool:
        if not cond:
            self.errors.append(msg)
        return bool(cond)

    def close(self, what: str, actual: Any, expected: Any, tol: Tolerance) -> bool:
        """``actual`` equals ``expected`` within ``tol`` (a bound of :mod:`tests.tolerance`,
        normwise; :data:`~tests.tolerance.EXACT` for copies and for torch)."""
        actual = torch.as_tensor(actual).detach()
        expected = torch.as_tensor(expected).detach()
        if isinstance(actual, DTensor) or isinstance(expected, DTensor):
            self.errors.append(f"{what}: compare full tensors, got a DTensor")
            return False
        if actual.shape != expected.shape:
            self.errors.append(f"{what}: shape {tuple(actual.shape)} != {tuple(expected.shape)}")
            return False
        excess = tol.excess(actual, expected)
        if excess > self.closest[0] or not self.closest[1]:
            self.closest = (excess, what)
        if excess > 1:
            a, e = actual.double(), expected.double()
            self.errors.append(
                f"{what}: max abs diff {(a - e).abs().max().item():.3g}, {excess:.3g}x the "
                f"bound (max |expected| {e.abs().max().item():.3g}, rtol={tol.rtol:.3g}, "
                f"floor={tol.floor:g})"
            )
            return False
        return True

    def result(self, **extra: Any) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "name": self.name,
            "errors": self.errors,
            "closest": self.closest,
            "info": {**self.info, **extra},
        }


#: Set to a file path to append, per report checked, the comparison that came closest to
#: its bound (one JSON line: test, rank, report, how many times the bound, what).
MARGINS_LOG = "TOLERANCE_LOG"


def assert_reports_ok(results: Iterable[dict[str, Any]]) -> None:
    """Parent side: fail with every rank's collected errors."""
    results = list(results)
    if os.environ.get(MARGINS_LOG):
        _log_margins(os.environ[MARGINS_LOG], results)
    lines = []
    for res in results:
        for err in res["errors"]:
            lines.append(f"[rank {res['rank']}] {res.get('name', '')}: {err}")
    assert not lines, "scenario checks failed:\n" + "\n".join(lines[:60])


def _log_margins(path: str, results: list[dict[str, Any]]) -> None:
    test = os.environ.get("PYTEST_CURRENT_TEST", "").removesuffix(" (call)")
    with open(path, "a") as f:
        for res in results:
            excess, what = res.get("closest", (0.0, ""))
            f.write(json.dumps({"test": test, "rank": res["rank"], "report": res.get("name", ""),
                                "excess": excess, "what": what}) + "\n")


def full(t: torch.Tensor) -> torch.Tensor:
    """The full value of a (possibly DTensor) tensor."""
    if isinstance(t, DTensor):
        return t.full_tensor()
    return t


def local_expected(t: torch.Tensor, like: torch.Tensor) -> torch.Tensor | None:
    """This rank's piece of the full tensor ``t`` under ``like``'s DTensor layout (1-D
    mesh, ``Shard(0)`` with torch.chunk semantics, or ``Replicate()``); None otherwise."""
    from torch.distributed.tensor import Replicate, Shard

    if not isinstance(like, DTensor) or like.device_mesh.ndim != 1:
        return None
    placement = like.placements[0]
    if isinstance(placement, Replicate):
        return t
    if isinstance(placement, Shard) and placement.dim == 0:
        ws = like.device_mesh.size()
        rank = like.device_mesh.get_local_rank()
        chunks = t.chunk(ws, dim=0)
        if rank < len(chunks):
            return chunks[rank]
        return t.new_empty((0, *t.shape[1:]))
    return None


def compare_params(
    report: Report,
    model: nn.Module,
    ref: nn.Module,
    what: str,
    tol: Tolerance,
    grads: bool = False,
    gather: bool | None = None,
) -> None:
    """Compare ``model``'s parameters (or grads, at their own scale:
    :meth:`~tests.tolerance.Tolerance.gradients`) with ``ref``'s within ``tol``.

    ``gather=True`` compares ``full_tensor()``s (one all-gather per tensor);
    ``gather=False`` compares each rank's local shard with the matching chunk of the
    reference's full tensor (no communication; together the ranks cover every element).
    Default: gather parameters, not gradients.
    """
    if gather is None:
        gather = not grads
    if grads:
        tol = tol.gradients()
    ref_params = dict(ref.named_parameters())
    names = [n for n, _ in model.named_parameters()]
    report.check(
        sorted(names) == sorted(ref_params),
        f"{what}: parameter names differ: {sorted(names)} vs {sorted(ref_params)}",
    )
    for name, p in model.named_parameters():
        if name not in ref_params:
            continue
        rp = ref_params[name]
        if grads:
            a, e = p.grad, rp.grad
            if a is None or e is None:
                report.check(
                    (a is None) == (e is None),
                    f"{what} grad {name}: is None={a is None}, reference is None={e is None}",
                )
                continue
            label = f"{what} grad {name}"
        else:
            a, e = p, rp
            label = f"{what} param {name}"
        if (
            not gather
            and isinstance(a, DTensor)
            and isinstance(e, DTensor)
            and tuple(a.placements) == tuple(e.placements)
            and a.to_local().shape == e.to_local().shape
        ):
            report.close(label + " (local shard)", a.to_local(), e.to_local(), for_shard(tol, e))
            continue
        if not gather and isinstance(a, DTensor) and not isinstance(e, DTensor):
            expected_local = local_expected(e.detach(), a)
            if expected_local is not None:
                report.close(label + " (local shard)", a.to_local(), expected_local, for_shard(tol, e))
                continue
        report.close(label, full(a), full(e), tol)


def for_shard(tol: Tolerance, t: torch.Tensor) -> Tolerance:
    """``tol`` for a shard of ``t``: normwise over the whole tensor, so at least ``max|t|``
    (a DTensor's largest local magnitude, maximized over its ranks: no gather)."""
    if tol.rtol == 0:
        return tol
    local = t.to_local() if isinstance(t, DTensor) else t
    m = torch.tensor([local.detach().abs().max().item() if local.numel() else 0.0])
    if isinstance(t, DTensor):
        dist.all_reduce(m, op=dist.ReduceOp.MAX, group=t.device_mesh.get_group())
    return replace(tol, floor=max(tol.floor, m.item()))


def mean_over_ranks(value: torch.Tensor) -> float:
    t = value.detach().clone().reshape(1).double()
    dist.all_reduce(t)
    return t.item() / dist.get_world_size()


def make_optimizer(name: str, params, **kw: Any) -> torch.optim.Optimizer:
    params = list(params)
    if name == "sgd":
        return torch.optim.SGD(params, lr=kw.get("lr", 0.1))
    if name == "sgd_momentum":
        return torch.optim.SGD(params, lr=kw.get("lr", 0.05), momentum=0.9, nesterov=True)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=kw.get("lr", 1e-2), weight_decay=0.1)
    if name == "adam":
        return torch.optim.Adam(params, lr=kw.get("lr", 1e-2))
    if name == "adagrad":
        return torch.optim.Adagrad(params, lr=kw.get("lr", 0.05))
    if name == "rmsprop":
        return torch.optim.RMSprop(params, lr=kw.get("lr", 1e-3))
    if name == "adamax":
        return torch.optim.Adamax(params, lr=kw.get("lr", 1e-2))
    if name == "nadam":
        return torch.optim.NAdam(params, lr=kw.get("lr", 1e-2))
    if name == "radam":
        return torch.optim.RAdam(params, lr=kw.get("lr", 1e-2))
    if name == "adadelta":
        return torch.optim.Adadelta(params, lr=kw.get("lr", 1.0))
    raise ValueError(f"unknown optimizer {name!r}")


def deepcopy_model(model: nn.Module) -> nn.Module:
    """Reference copy taken before ``fully_shard`` (FSDP modules refuse deepcopy)."""
    return copy.deepcopy(model)


def run_with(fn: Callable[[], Any]) -> tuple[Any, BaseException | None]:
    try:
        return fn(), None
    except BaseException as e:  # noqa: BLE001
        return None, e


def exc_info(e: BaseException | None) -> dict[str, Any] | None:
    """Picklable description of an exception (for misuse scenarios)."""
    if e is None:
        return None
    return {
        "type": type(e).__name__,
        "mro": [c.__name__ for c in type(e).__mro__],
        "msg": str(e),
    }
