"""What a state dict entry must satisfy to load into a sharded module, checked on one rank.

The rules ``load_state_dict`` would otherwise discover mid-copy, plus two it does not
check, one :class:`Problem` per entry that breaks one (:func:`check_entry`,
:func:`problems_in`):

* a tensor, of the parameter's (global) shape;
* a dtype of the same kind: floating to floating, complex to complex, integer or bool to
  integer or bool (a bf16 checkpoint into an fp32 model is fine; an int64 tensor into a
  float weight is a wrong key, not a cast);
* for a sharded (DTensor) parameter, a DTensor on the same mesh (any placements: the copy
  redistributes); a plain tensor there fails mid-copy in torch, so load full state dicts
  with ``set_model_state_dict(..., StateDictOptions(full_state_dict=True))``;
* with ``assign=True``, the same dtype, placements and local shape, since the tensor
  becomes the sharded parameter itself;
* with ``strict=True``, no missing and no unexpected keys.

Each problem carries two wordings, torch's (which code written for torch matches, and
:func:`torch_load_error` assembles into torch's message) and fsdp_ref's (what to do).
Everything here is pure: no communication, nothing copied. Agreeing on the problems
across ranks and refusing the load is :mod:`fsdp_ref.loading`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import torch
import torch.nn as nn
from torch.distributed.tensor import DTensor

__all__ = ["Problem", "check_entry", "problems_in", "torch_load_error"]


class Problem(NamedTuple):
    """One entry that would not load.

    Attributes:
        key: its state dict key.
        kind: ``"missing"``, ``"unexpected"`` (torch lists those keys together, one line
            each) or ``"entry"``.
        torch: torch's line for an entry in its ``load_state_dict`` error (a size
            mismatch, a value that is not a tensor), or ``ours`` where torch has none.
        ours: what is wrong, and what to do, in fsdp_ref's words.
    """

    key: str
    kind: str
    torch: str
    ours: str


def _entry(key: str, ours: str, torch_line: str | None = None) -> Problem:
    return Problem(key, "entry", torch_line or f"{key}: {ours}", f"{key}: {ours}")


@dataclass(frozen=True)
class _Slot:
    """One entry ``load_state_dict`` will fill: the tensor there now (``None`` for a
    module's extra state), and the prefix of its module if that module loads with its own
    ``_load_from_state_dict`` rules (``None`` otherwise)."""

    current: torch.Tensor | None
    custom_prefix: str | None


def _slots(module: nn.Module, prefix: str) -> dict[str, _Slot]:
    """Every key ``module.load_state_dict`` visits below ``prefix``, as torch's recursion
    visits them: parameters, persistent buffers and extra state of each submodule."""
    out: dict[str, _Slot] = {}

    def visit(m: nn.Module, p: str) -> None:
        custom = type(m)._load_from_state_dict is not nn.Module._load_from_state_dict
        mark = p if custom else None
        for name, t in m._parameters.items():
            if t is not None:
                out[p + name] = _Slot(t, mark)
        for name, t in m._buffers.items():
            if t is not None and name not in m._non_persistent_buffers_set:
                out[p + name] = _Slot(t, mark)
        if type(m).get_extra_state is not nn.Module.get_extra_state:
            out[p + "_extra_state"] = _Slot(None, p)
        for name, child in m._modules.items():
            if child is not None:
                visit(child, f"{p}{name}.")

    visit(module, prefix)
    return out


def _kind(dtype: torch.dtype) -> str:
    if dtype.is_complex:
        return "complex"
    if dtype.is_floating_point:
        return "floating point"
    return "integer/bool"


def check_entry(key: str, value: Any, current: torch.Tensor, assign: bool,
                full: bool = False) -> Problem | None:
    """What is wrong with loading ``value`` into ``current`` (the tensor at ``key``), or
    ``None`` when it fits. ``full``: ``value`` is a full tensor that
    ``set_model_state_dict`` distributes onto ``current``'s placements first. Pure: no
    communication, nothing copied."""
    if not isinstance(value, torch.Tensor):
        return _entry(key, f"expected a tensor, got {type(value).__name__}",
                      f'While copying the parameter named "{key}", expected torch.Tensor or '
                      f"Tensor-like object from checkpoint but received {type(value)}")
    if nn.parameter.is_lazy(current):
        return None
    shape, want = tuple(value.shape), tuple(current.shape)
    if shape != want and not (want == () and shape == (1,)):
        return _entry(key, f"shape {shape} in the state dict, {want} in the model",
                      f"size mismatch for {key}: copying a param with shape {value.shape} "
                      f"from checkpoint, the shape in current model is {current.shape}.")
    if _kind(value.dtype) != _kind(current.dtype):
        return _entry(key, (
            f"dtype {value.dtype} ({_kind(value.dtype)}) cannot load into "
            f"{current.dtype} ({_kind(current.dtype)}); is the key mapped to the right tensor?"
        ))
    is_dt, want_dt = isinstance(value, DTensor), isinstance(current, DTensor)
    if want_dt and not is_dt and not full:
        return _entry(key, (
            "a plain tensor for a sharded (DTensor) parameter; load full state dicts "
            "with set_model_state_dict(model, sd, options=StateDictOptions("
            "full_state_dict=True)), or distribute_tensor() each value onto the model's mesh"
        ))
    if is_dt and not want_dt:
        return _entry(key, "a DTensor for a plain tensor; pass value.full_tensor() instead")
    if is_dt and value.device_mesh != current.device_mesh:
        return _entry(key, f"DTensor on mesh {value.device_mesh}, the model's is "
                           f"{current.device_mesh}")
    if assign:
        if value.dtype != current.dtype:
            return _entry(key, f"assign=True needs dtype {current.dtype}, got {value.dtype}")
        if is_dt and (
            value.placements != current.placements
            or value.to_local().shape != current.to_local().shape
        ):
            return _entry(key, (
                f"assign=True needs placements {current.placements} (local shape "
                f"{tuple(current.to_local().shape)}), got {value.placements} (local "
                f"{tuple(value.to_local().shape)}); load without assign to redistribute"
            ))
    return None


def problems_in(
    module: nn.Module,
    state_dict: Mapping[str, Any],
    prefix: str = "",
    strict: bool = True,
    assign: bool = False,
    full: bool = False,
) -> list[Problem]:
    """Everything ``module.load_state_dict(state_dict)`` would trip over below ``prefix``,
    on this rank (``full``: see :func:`check_entry`). Modules with their own
    ``_load_from_state_dict`` (e.g. batch norm, which fills in old checkpoints' missing
    counters) are not held to missing or unexpected keys, only to the entries they
    receive."""
    slots = _slots(module, prefix)
    problems = []
    for key, slot in slots.items():
        if key not in state_dict:
            if strict and slot.custom_prefix is None:
                problems.append(Problem(key, "missing", "", f"{key}: missing from the state dict"))
        elif slot.current is not None:
            problem = check_entry(key, state_dict[key], slot.current, assign, full)
            if problem is not None:
                problems.append(problem)
    if strict:
        custom = {s.custom_prefix for s in slots.values() if s.custom_prefix is not None}
        for key in state_dict:
            if key.startswith(prefix) and key not in slots:
                if not any(key.startswith(p) for p in custom):
                    problems.append(Problem(
                        key, "unexpected", "",
                        f"{key}: unexpected key (the model has no such entry)"))
    return problems


def torch_load_error(model_name: str, problems: Iterable[Problem]) -> str:
    """The message torch's ``load_state_dict`` raises for ``problems`` on a model of class
    ``model_name``: missing keys, then unexpected keys, then one line per entry."""
    problems = list(problems)
    lines = [
        f"{label} key(s) in state_dict: "
        + ", ".join(f'"{k}"' for k in dict.fromkeys(p.key for p in problems if p.kind == kind))
        + ". "
        for kind, label in (("missing", "Missing"), ("unexpected", "Unexpected"))
        if any(p.kind == kind for p in problems)
    ]
    lines += [p.torch for p in problems if p.kind == "entry"]
    return f"Error(s) in loading state_dict for {model_name}:\n\t" + "\n\t".join(lines)

