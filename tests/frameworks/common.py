"""Shared pieces of the framework scenarios: one run per implementation, compared bitwise.

Every framework test trains the same tiny model twice on 2 gloo ranks: once in the
``torch`` pool, where torch's ``fully_shard`` does the sharding, and once in the
``fsdp_ref`` pool, where the scenario's first act is ``fsdp_ref.install()`` — before the
framework is imported, as a user would do it (``docs/guides/frameworks.md``). The two
pools are separate processes (``conftest.py``), because a framework that imported torch's
names once keeps them. The parent then compares what both runs returned, bitwise
(:func:`assert_bitwise`): losses, parameters, the framework's state dict or checkpoint.

Rank side: :func:`scenario` (calls :func:`use` first), :func:`fsdp_modules` (proof that
the run was sharded by the implementation it claims), :func:`full` / :func:`params`
(full values of sharded tensors). Parent side: :func:`run_both`, :func:`assert_bitwise`.
"""

from __future__ import annotations

import functools
import io
import os
import sys
from collections.abc import Mapping
from typing import Any

import torch
import torch.nn as nn
from torch.distributed.tensor import DTensor

IMPLS = ("torch", "fsdp_ref")
#: Top-level modules of the frameworks: none may be imported before ``install()``.
FRAMEWORKS = ("accelerate", "transformers", "peft", "lightning", "pytorch_lightning",
              "lightning_fabric", "torchtune", "torchtitan")


def use(impl: str, rank: int, world_size: int) -> None:
    """Make this rank process run ``impl`` under the frameworks (first line of a scenario).

    ``fsdp_ref``: ``fsdp_ref.install()`` once per process, and it must come before any
    framework is imported (a framework that imported torch's ``fully_shard`` first would
    keep it). ``torch``: fsdp_ref must not be installed. Both: the launcher's environment
    variables the frameworks read (the pool's process group is already up; they reuse it).
    """
    from fsdp_ref import compat

    if impl == "fsdp_ref":
        if not compat.is_installed():
            early = [m for m in FRAMEWORKS if m in sys.modules]
            if early:
                raise AssertionError(f"{early} imported before fsdp_ref.install()")
            import fsdp_ref

            fsdp_ref.install()
    elif impl == "torch":
        if compat.is_installed():
            raise AssertionError("fsdp_ref is installed in the torch pool")
    else:
        raise ValueError(f"impl must be one of {IMPLS}, got {impl!r}")
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world_size),
                      LOCAL_WORLD_SIZE=str(world_size), GROUP_RANK="0", NODE_RANK="0",
                      MASTER_ADDR="127.0.0.1", MASTER_PORT="29511")


def scenario(fn):
    """Decorate a scenario ``fn(rank, world_size, impl, **kwargs)``: :func:`use` runs first,
    and the result travels back as ``torch.save`` bytes (:func:`unpack`), because once a
    framework imported ``torch.multiprocessing`` the pool's pickler would send tensors as
    shared-memory handles the parent cannot open."""

    @functools.wraps(fn)
    def run(rank: int, world_size: int, impl: str, **kwargs: Any) -> bytes:
        use(impl, rank, world_size)
        buffer = io.BytesIO()
        torch.save(fn(rank, world_size, impl, **kwargs), buffer)
        return buffer.getvalue()

    return run


def unpack(data: bytes) -> Any:
    """What a :func:`scenario` returned (tensors, containers, numbers and strings only)."""
    return torch.load(io.BytesIO(data), weights_only=True)


def fsdp_modules(model: nn.Module, impl: str) -> list[str]:
    """The names of the modules of ``model`` that ``impl`` sharded ("" is the root); raises
    if the other implementation sharded any.

    fsdp_ref's modules are also instances of torch's ``FSDPModule`` (``fsdp_ref.compat``),
    so the test is on fsdp_ref's class: present under ``fsdp_ref``, absent under ``torch``.
    """
    from torch.distributed.fsdp import FSDPModule as TorchFSDPModule

    import fsdp_ref

    ours = [n for n, m in model.named_modules() if isinstance(m, fsdp_ref.FSDPModule)]
    sharded = [n for n, m in model.named_modules() if isinstance(m, TorchFSDPModule)]
    if impl == "fsdp_ref" and ours != sharded:
        raise AssertionError(f"sharded by torch under fsdp_ref: {sorted(set(sharded) - set(ours))}")
    if impl == "torch" and ours:
        raise AssertionError(f"sharded by fsdp_ref in the torch run: {ours}")
    return sharded


def full(t: torch.Tensor) -> torch.Tensor:
    """A detached copy of the full value of ``t`` (a collective for a DTensor)."""
    if isinstance(t, DTensor):
        t = t.full_tensor()
    return t.detach().clone()


def params(model: nn.Module) -> dict[str, torch.Tensor]:
    """Every parameter's full value, by name (every rank must call it: all-gathers)."""
    return {n: full(p) for n, p in model.named_parameters()}


def to_plain(value: Any) -> Any:
    """A picklable copy of a (nested) state dict: DTensors become their full tensors."""
    if isinstance(value, Mapping):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(to_plain(v) for v in value)
    if isinstance(value, torch.Tensor):
        return full(value)
    return value


# ---- parent side ---------------------------------------------------------------------


def run_both(pools: Mapping[str, Any], target: str, timeout_s: float = 300, **kwargs: Any):
    """Run scenario ``target`` in both pools; return ``{impl: per-rank results}`` after
    asserting the two runs bitwise equal rank by rank."""
    out = {impl: [unpack(r) for r in pools[impl].run(target, impl=impl, timeout_s=timeout_s,
                                                      **kwargs)]
           for impl in IMPLS}
    for rank, (theirs, ours) in enumerate(zip(out["torch"], out["fsdp_ref"])):
        assert_bitwise(ours, theirs, f"rank {rank}")
    return out


def mismatches(ours: Any, theirs: Any, path: str) -> list[str]:
    """Every place where ``ours`` and ``theirs`` differ: structure, dtype, shape, bits."""
    if isinstance(theirs, Mapping):
        if not isinstance(ours, Mapping) or set(ours) != set(theirs):
            return [f"{path}: keys differ: {sorted(set(ours) ^ set(theirs))[:6]}"
                    if isinstance(ours, Mapping) else f"{path}: {type(ours).__name__}"]
        return [m for k in theirs for m in mismatches(ours[k], theirs[k], f"{path}.{k}")]
    if isinstance(theirs, (list, tuple)):
        if not isinstance(ours, (list, tuple)) or len(ours) != len(theirs):
            return [f"{path}: length {len(ours)} != {len(theirs)}"]
        return [m for i, (a, b) in enumerate(zip(ours, theirs))
                for m in mismatches(a, b, f"{path}[{i}]")]
    if isinstance(theirs, torch.Tensor):
        if not isinstance(ours, torch.Tensor):
            return [f"{path}: {type(ours).__name__}, torch has a tensor"]
        if ours.dtype != theirs.dtype or ours.shape != theirs.shape:
            return [f"{path}: {ours.dtype}{tuple(ours.shape)} != "
                    f"torch's {theirs.dtype}{tuple(theirs.shape)}"]
        if torch.equal(ours, theirs):
            return []
        diff = (ours.double() - theirs.double()).abs().max().item()
        top = theirs.double().abs().max().item()
        return [f"{path}: max |diff| {diff:.3g} (max |torch| {top:.3g})"]
    if ours != theirs and not (ours != ours and theirs != theirs):  # nan == nan here
        return [f"{path}: {ours!r} != torch's {theirs!r}"]
    return []


def assert_bitwise(ours: Any, theirs: Any, what: str) -> None:
    """Fail listing (the first 20 of) every difference between fsdp_ref's and torch's."""
    found = mismatches(ours, theirs, what)
    assert not found, f"fsdp_ref differs from torch in {len(found)} places:\n" + "\n".join(
        found[:20])
