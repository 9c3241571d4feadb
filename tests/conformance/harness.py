"""Run one scenario on torch's FSDP2 and on fsdp_ref side by side, and compare.

A *scenario* is a function ``scenario(lib, **kwargs) -> result`` written once against a
:class:`Lib`: the names of one implementation (``lib.fully_shard``, ``lib.replicate``,
``lib.FSDPModule``, ``lib.ShardPlacementResult``, ...) plus the few things that differ
between sharded and one-process training (``lib.local`` slices the batch, ``lib.mean``
averages a loss over ranks, ``lib.state`` returns full parameters). Implementations:

* ``"torch"``: ``torch.distributed.fsdp.fully_shard`` and torch 2.13's
  ``replicate_with_fsdp.replicate``: the behaviour to match;
* ``"fsdp_ref"``: the implementation under test;
* ``"plain"``: no sharding at all, each rank trains the whole model on the whole batch:
  the truth where torch cannot run a configuration on gloo;
* ``"ddp"``: ``DistributedDataParallel`` as ``replicate`` (for the replicate scenarios).

In every rank, :func:`side_by_side` calls the scenario once per implementation, in the
same process and on the same data, and returns what each returned or raised. In the
parent, :func:`assert_same_results` compares the results (exact for names and ints,
``rtol``/``atol`` for tensors and floats) and :func:`assert_same_refusal` compares two
refusals: our exception must be of torch's type (or a subclass) and our message must start
with torch's whole message (a scenario may mask names that legitimately differ).
"""

from __future__ import annotations

import contextlib
import importlib
import math
import re
import traceback
from typing import Any

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.tensor import DTensor

from tests import tolerance
from tests.fsdp.common import exc_info

SIDE_BY_SIDE = "tests.conformance.harness:side_by_side"
#: Rows per rank of :func:`fit`'s batches (and of most scenarios that train by hand).
ROWS_PER_RANK = 2


_MESHES: dict[tuple, Any] = {}


class Lib:
    """One implementation's FSDP2 names, as a scenario running on ``rank`` sees them."""

    def __init__(self, name: str, rank: int, world_size: int) -> None:
        self.name, self.rank, self.world_size = name, rank, world_size
        self.distributed = name != "plain"
        if name in ("torch", "plain", "ddp"):
            from torch.distributed._composable import replicate_with_fsdp as rep
            from torch.distributed.fsdp import _fully_shard as fs
            from torch.distributed.fsdp._fully_shard import _fsdp_common as common

            self._names = {
                **{n: getattr(fs, n) for n in fs.__all__},
                "replicate": rep.replicate,
                "ReplicateModule": rep.ReplicateModule,
                "ShardPlacementResult": common.ShardPlacementResult,
                "FSDPMeshInfo": common.FSDPMeshInfo,
                "HSDPMeshInfo": common.HSDPMeshInfo,
            }
        elif name == "fsdp_ref":
            from torch.distributed.fsdp._fully_shard import _fsdp_common as common

            import fsdp_ref

            # torchtitan-style code builds torch's mesh infos and hands them to fsdp_ref
            self._names = {n: getattr(fsdp_ref, n) for n in fsdp_ref.__all__}
            self._names.update(FSDPMeshInfo=common.FSDPMeshInfo,
                               HSDPMeshInfo=common.HSDPMeshInfo)
        else:
            raise ValueError(f"unknown implementation {name!r}")
        if name == "plain":  # the same policies, nothing applied
            self._names.update(fully_shard=_unchanged, replicate=_unchanged)
        if name == "ddp":
            self._names.update(replicate=_ddp, fully_shard=_not_ddp)

    def __getattr__(self, attr: str) -> Any:
        try:
            return self.__dict__["_names"][attr]
        except KeyError:
            raise AttributeError(f"{self.name} has no {attr!r}") from None

    def mesh(self, shape: tuple[int, ...] | None = None,
             names: tuple[str, ...] | None = None):
        """A CPU ``DeviceMesh`` of ``shape`` (default: all ranks, 1-D), made once per
        process: every mesh creates process groups, which takes a collective each."""
        key = (shape or (self.world_size,), names)
        if key not in _MESHES:
            from torch.distributed.device_mesh import init_device_mesh

            _MESHES[key] = init_device_mesh("cpu", key[0], mesh_dim_names=names)
        return _MESHES[key]

    def local(self, t: torch.Tensor) -> torch.Tensor:
        """This rank's slice of a global batch (the whole batch for ``plain``)."""
        if not self.distributed:
            return t
        return t.chunk(self.world_size, dim=0)[self.rank]

    def mean(self, value: torch.Tensor) -> float:
        """A per-rank loss averaged over ranks (the loss itself for ``plain``)."""
        t = value.detach().reshape(1).double().clone()
        if self.distributed and self.world_size > 1:
            dist.all_reduce(t)
            t /= self.world_size
        return t.item()

    def state(self, model: nn.Module) -> dict[str, torch.Tensor]:
        """Every parameter's full value, by name (DDP's ``module.`` prefix dropped)."""
        return {name.removeprefix("module."): full(p).detach().clone()
                for name, p in model.named_parameters()}


def full(t: torch.Tensor) -> torch.Tensor:
    """The full value of a tensor that may be a DTensor."""
    return t.full_tensor() if isinstance(t, DTensor) else t


def _unchanged(module: Any, **kwargs: Any) -> Any:
    return module


def _ddp(module: nn.Module, **kwargs: Any) -> nn.Module:
    from torch.nn.parallel import DistributedDataParallel

    return DistributedDataParallel(module)


def _not_ddp(module: nn.Module, **kwargs: Any) -> nn.Module:
    raise NotImplementedError("the ddp implementation has no fully_shard")


# ---- training --------------------------------------------------------------------------


def batch(step: int, rows: int, din: int, dout: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The global (input, target) of ``step``: the same on every rank and implementation."""
    g = torch.Generator().manual_seed(1000 + step)
    return torch.randn(rows, din, generator=g), torch.randn(rows, dout, generator=g)


def fit(lib: Lib, model: nn.Module, *, din: int, dout: int, steps: int = 2,
        rows_per_rank: int = ROWS_PER_RANK, lr: float = 0.1,
        step_context=None) -> dict[str, Any]:
    """Train ``model`` with SGD on MSE for ``steps`` steps (each rank its slice of a
    global batch of ``rows_per_rank * world_size`` rows); the per-step mean losses and the
    final full parameters. ``step_context()``, if given, makes a context manager that
    each step (forward, backward, optimizer step) runs in."""
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for step in range(steps):
        x, y = batch(step, rows_per_rank * lib.world_size, din, dout)
        with step_context() if step_context is not None else contextlib.nullcontext():
            opt.zero_grad(set_to_none=True)
            loss = F.mse_loss(model(lib.local(x)), lib.local(y))
            loss.backward()
            opt.step()
        losses.append(lib.mean(loss))
    return {"losses": losses, "params": lib.state(model)}


# ---- worker side -----------------------------------------------------------------------


def side_by_side(rank: int, world_size: int, scenario: str, libs: tuple[str, ...],
                 kwargs: dict[str, Any]) -> dict[str, tuple[str, Any]]:
    """In one rank: run ``scenario`` ("module:function") once per implementation in
    ``libs``, each from the same seed; ``{lib: ("ok", result) or ("raised", info)}``."""
    module_name, fn_name = scenario.split(":")
    fn = getattr(importlib.import_module(module_name), fn_name)
    out: dict[str, tuple[str, Any]] = {}
    for name in libs:
        torch.manual_seed(0)
        try:
            out[name] = ("ok", _portable(fn(Lib(name, rank, world_size), **kwargs)))
        except Exception as e:  # noqa: BLE001 (a refusal is a result here)
            out[name] = ("raised", {**exc_info(e), "tb": traceback.format_exc()[-6000:]})
    return out


class Array:
    """A tensor on its way to the parent: torch pickles tensors through shared memory,
    which these worker processes cannot hand over, so the values travel as numpy."""

    def __init__(self, t: torch.Tensor) -> None:
        self.dtype = str(t.dtype).removeprefix("torch.")
        self.values = t.detach().to(torch.float64).cpu().numpy()

    def tensor(self) -> torch.Tensor:
        return torch.from_numpy(self.values).to(getattr(torch, self.dtype))


def _portable(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return Array(value)
    if isinstance(value, dict):
        return {k: _portable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_portable(v) for v in value)
    return value


def _restored(value: Any) -> Any:
    if isinstance(value, Array):
        return value.tensor()
    if isinstance(value, dict):
        return {k: _restored(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_restored(v) for v in value)
    return value


# ---- parent side -----------------------------------------------------------------------


def run(pool, scenario: str, libs: tuple[str, ...] = ("torch", "fsdp_ref"),
        timeout_s: float = 120.0, **kwargs: Any) -> list[dict[str, tuple[str, Any]]]:
    """Run ``scenario`` side by side on every rank of ``pool``; the per-rank outcomes."""
    results = pool.run(SIDE_BY_SIDE, scenario=scenario, libs=tuple(libs), kwargs=kwargs,
                       timeout_s=timeout_s)
    return [_restored(per_rank) for per_rank in results]


def result_of(outcome: tuple[str, Any], lib: str, rank: int) -> Any:
    """The value a lib returned; fails with its exception when it raised."""
    status, value = outcome
    assert status == "ok", (f"rank {rank}: {lib} raised {value['type']}: {value['msg'][:800]}"
                            f"\n{value.get('tb', '')}")
    return value


def differences(expected: Any, actual: Any, path: str = "", rtol: float = 0.0,
                atol: float = 0.0, tol: tolerance.Tolerance | None = None) -> list[str]:
    """Where ``actual`` differs from ``expected``: tensors and floats within ``rtol`` /
    ``atol`` (or, with ``tol``, within its normwise bound), everything else equal;
    containers element by element."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict) or set(expected) != set(actual):
            got = sorted(map(str, actual)) if isinstance(actual, dict) else actual
            return [f"{path}: keys {got!r} (expected {sorted(map(str, expected))})"]
        return [d for k in expected
                for d in differences(expected[k], actual[k], f"{path}.{k}", rtol, atol, tol)]
    if isinstance(expected, (list, tuple)):
        if not isinstance(actual, (list, tuple)) or len(expected) != len(actual):
            return [f"{path}: {actual!r} (expected {expected!r})"]
        return [d for i, (e, a) in enumerate(zip(expected, actual))
                for d in differences(e, a, f"{path}[{i}]", rtol, atol, tol)]
    if tol is not None and isinstance(expected, (torch.Tensor, float)):
        rtol, atol = 0.0, tol.atol_for(expected)
    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, torch.Tensor) or actual.shape != expected.shape:
            return [f"{path}: {actual!r:.80} is not a tensor of shape {tuple(expected.shape)}"]
        if actual.dtype != expected.dtype:
            return [f"{path}: dtype {actual.dtype} (expected {expected.dtype})"]
        if not torch.allclose(actual.double(), expected.double(), rtol=rtol, atol=atol):
            diff = (actual.double() - expected.double()).abs().max().item()
            return [f"{path}: max abs diff {diff:.3g} (rtol={rtol:.3g}, atol={atol:.3g})"]
        return []
    if isinstance(expected, float) and isinstance(actual, (int, float)):
        if not math.isclose(actual, expected, rel_tol=rtol, abs_tol=atol):
            return [f"{path}: {actual!r} (expected {expected!r}, atol={atol:.3g})"]
        return []
    return [] if actual == expected else [f"{path}: {actual!r} (expected {expected!r})"]


def assert_same_results(results: list[dict], expected: str = "torch", actual: str = "fsdp_ref",
                        rtol: float | None = None, atol: float | None = None,
                        keys: tuple[str, ...] | None = None, rows: int | None = None,
                        mixed: torch.dtype | None = None) -> None:
    """Every rank: ``actual``'s result equals ``expected``'s (both must have returned);
    with ``keys``, only those entries of the two result dicts.

    Against ``"torch"`` the comparison is bitwise: the same ops on the same data in the
    same order. Against the unsharded model (``"plain"``) or DDP the sums run in another
    order, so the bound is :func:`tests.tolerance.of_result`'s, from the run's sizes:
    ``rows`` is the global batch (default :data:`ROWS_PER_RANK` per rank), ``mixed`` the
    compute dtype when a mixed-precision run is compared with fp32 training. ``rtol`` /
    ``atol`` given explicitly replace both (``0, 0`` for values that are copies).
    """
    explicit = rtol is not None or atol is not None
    rtol, atol = rtol or 0.0, atol or 0.0
    problems = []
    for rank, per_lib in enumerate(results):
        want = result_of(per_lib[expected], expected, rank)
        got = result_of(per_lib[actual], actual, rank)
        tol = None
        if expected != "torch" and not explicit:
            tol = tolerance.of_result(want, rows=rows or ROWS_PER_RANK * len(results),
                                      mixed=mixed)
        if keys is not None:
            want, got = ({k: r[k] for k in keys} for r in (want, got))
        problems += [f"rank {rank}: {actual} vs {expected}{d}"
                     for d in differences(want, got, "", rtol, atol, tol)]
    assert not problems, "\n".join(problems[:40])


def mask_quoted(message: str) -> str:
    """``message`` with every ``'quoted'`` name replaced by ``'…'`` (for refusals whose
    wording is torch's but whose parameter path is counted from another module)."""
    return re.sub(r"'[^'\n]*'", "'…'", message)


def assert_same_refusal(results: list[dict], expected: str = "torch", actual: str = "fsdp_ref",
                        normalize=None) -> dict[str, Any]:
    """Every rank: both raised; ``actual``'s exception is of ``expected``'s type or a
    subclass, and its message starts with ``expected``'s whole message (after
    ``normalize``, if given, on both). Returns rank 0's two exception infos."""
    problems = []
    for rank, per_lib in enumerate(results):
        (s_want, want), (s_got, got) = per_lib[expected], per_lib[actual]
        if s_want != "raised" or s_got != "raised":
            problems.append(f"rank {rank}: {expected} {s_want}, {actual} {s_got}: "
                            f"{want!r:.300} / {got!r:.300}")
            continue
        if want["type"] not in got["mro"]:
            problems.append(f"rank {rank}: {actual} raised {got['type']}, not a "
                            f"{want['type']}: {got['msg'][:300]}")
        norm = normalize or (lambda m: m)
        if not norm(got["msg"]).startswith(norm(want["msg"])):
            problems.append(f"rank {rank}: {actual}'s message\n  {got['msg'][:400]!r}\n"
                            f"does not start with {expected}'s\n  {want['msg'][:400]!r}")
    assert not problems, "\n".join(problems[:20])
    return {"expected": results[0][expected][1], "actual": results[0][actual][1]}


def under_detector(lib: Lib, target: str, gpu_path: bool = True, **kwargs: Any) -> dict:
    """Run ``target`` ("module:function") for ``lib`` inside fsdp_ref's race detector
    (:mod:`fsdp_ref.sanitizer`); its result plus the races found (summaries)."""
    from fsdp_ref.sanitizer import detect

    module_name, fn_name = target.split(":")
    fn = getattr(importlib.import_module(module_name), fn_name)
    with detect(gpu_path=gpu_path, raise_on_race=False) as detector:
        result = fn(lib, **kwargs)
    return {**result, "races": [race.summary() for race in detector.races]}
