"""All-or-nothing ``load_state_dict`` into sharded modules.

``nn.Module.load_state_dict`` copies tensor by tensor and reports size mismatches,
missing and unexpected keys only at the end: a state dict with one wrong shape leaves the
model half old, half new. Under FSDP it is worse: each rank checks only what it sees, so
one rank may copy while another raises.

:func:`check_before_load` runs as a load-state-dict pre-hook of every module passed to
``fully_shard``, before anything is copied. The outermost such module of a load checks
every entry of its subtree (:func:`problems_in`), the ranks exchange what they found
(:func:`agree_across_ranks`), and if any rank found a problem every rank raises
(:func:`refuse`) :class:`StateDictLoadError`: torch's own error message first (as
:func:`torch_load_error` words it), then each problem and the ranks that saw it. Only
when all ranks agree that everything fits does ``load_state_dict`` go on to copy.

What each entry must satisfy (the rules ``load_state_dict`` would otherwise discover
mid-copy, plus two it does not check):

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

A second hook, :func:`adopt_assigned`, runs after a load: with ``assign=True`` the
module's parameters are new objects, which must become the group's sharded parameters.
The same checks and agreement guard DCP's loads in :mod:`fsdp_ref.staged_load`.

Why it is longer than the house's ~300 lines: each check (key, shape, dtype, placement)
has the error text a user reads in two wordings, torch's (which code written for torch
matches) and fsdp_ref's (what to do), and the texts are the feature.
"""

from __future__ import annotations

import sys
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.tensor import DTensor

from .module import FSDPModule
from .state import adopt_changes, get_state

__all__ = [
    "Problem",
    "StateDictLoadError",
    "adopt_assigned",
    "agree_across_ranks",
    "check_before_load",
    "check_entry",
    "mesh_groups",
    "problems_in",
    "refuse",
    "register",
    "torch_load_error",
]

_MAX_LISTED = 20


class StateDictLoadError(RuntimeError):
    """Loading was refused on every rank before anything was copied. A
    ``RuntimeError``, as torch's ``load_state_dict`` raises, whose message starts with
    torch's (``Error(s) in loading state_dict for ...``) and goes on with the ranks that
    found each problem."""


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


def mesh_groups(module: nn.Module) -> list[dist.ProcessGroup]:
    """The process groups of every mesh a DTensor of ``module`` lives on, in a rank-
    independent order (first appearance), without duplicates or single-rank groups."""
    groups: list[dist.ProcessGroup] = []
    seen_meshes: set[int] = set()
    for t in list(module.parameters()) + list(module.buffers()):
        if not isinstance(t, DTensor) or id(t.device_mesh) in seen_meshes:
            continue
        seen_meshes.add(id(t.device_mesh))
        for group in t.device_mesh.get_all_groups():
            if group.size() > 1 and all(g is not group for g in groups):
                groups.append(group)
    return groups


def agree_across_ranks(
    problems: Iterable[Hashable], groups: Iterable[dist.ProcessGroup]
) -> dict[Any, list[int]]:
    """Share each rank's problems over ``groups`` (one mesh dim after another, so every
    rank of a multi-dim mesh ends up with all of them); returns problem -> global ranks,
    in the order the ranks found them (the same order on every rank).

    Every rank must call it with the same groups in the same order. Fake process groups
    (single-process tests) carry no data and are skipped.
    """
    rank = dist.get_rank() if dist.is_initialized() else 0
    known = [(p, rank) for p in dict.fromkeys(problems)]
    for group in groups:
        if dist.get_backend(group) == "fake":
            continue
        gathered: list[Any] = [None] * group.size()
        dist.all_gather_object(gathered, known, group=group)
        known = list(dict.fromkeys(pair for other in gathered for pair in other))
    by_problem: dict[Any, list[int]] = {}
    for problem, r in known:
        by_problem.setdefault(problem, []).append(r)
    return {problem: sorted(ranks) for problem, ranks in by_problem.items()}


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


def refuse(problems: Iterable[Hashable], groups: Iterable[dist.ProcessGroup], what: str,
           model_name: str | None = None) -> None:
    """Agree on every rank's ``problems`` over ``groups`` (:func:`agree_across_ranks`)
    and, if any rank found one, raise :class:`StateDictLoadError` on every rank: torch's
    ``load_state_dict`` error for a model of class ``model_name`` (when given), then that
    ``what`` was refused and each problem with the ranks that found it (20 at most)."""
    by_problem = agree_across_ranks(problems, groups)
    if not by_problem:
        return
    lines = [torch_load_error(model_name, by_problem)] if model_name is not None else []
    lines.append(
        f"{what}: nothing was copied, the model is unchanged. "
        f"{len(by_problem)} problem(s), by the ranks that found them:"
    )
    for problem, ranks in list(by_problem.items())[:_MAX_LISTED]:
        lines.append(f"  ranks {ranks}: {getattr(problem, 'ours', problem)}")
    if len(by_problem) > _MAX_LISTED:
        lines.append(f"  ... and {len(by_problem) - _MAX_LISTED} more")
    raise StateDictLoadError("\n".join(lines))


def _load_call(module: nn.Module, default: bool) -> tuple[str, bool]:
    """The class name of the module ``load_state_dict`` was called on (what torch's error
    names) and the ``strict`` the user passed.

    Torch hands every module's ``_load_from_state_dict`` (and so its pre-hooks)
    ``strict=True`` and applies the caller's flag only after copying, so both are read
    from the innermost ``nn.Module.load_state_dict`` call on the stack; ``module``'s class
    and ``default`` (the hook's argument) when there is none (a direct
    ``_load_from_state_dict`` call).
    """
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code is nn.Module.load_state_dict.__code__:
            caller = frame.f_locals.get("self", module)
            return type(caller).__name__, bool(frame.f_locals.get("strict", default))
        frame = frame.f_back
    return type(module).__name__, default


_last_check: tuple[list[str], str] | None = None
"""``(error_msgs, prefix)`` of the last checked load: torch passes the same
``error_msgs`` list to every module of one load, so it identifies the load."""


def check_before_load(
    module: nn.Module,
    state_dict: dict[str, Any],
    prefix: str,
    local_metadata: dict[str, Any],
    strict: bool,
    missing_keys: list[str],
    unexpected_keys: list[str],
    error_msgs: list[str],
) -> None:
    """Load-state-dict pre-hook: check the whole subtree on every rank, agree, and raise
    :class:`StateDictLoadError` on every rank if anything would not load.

    Runs once per load: nested ``fully_shard`` modules of a subtree already checked skip.
    This is a collective over the module's meshes, like the load itself.
    """
    global _last_check
    if _last_check is not None and _last_check[0] is error_msgs:
        if prefix.startswith(_last_check[1]):
            return
    _last_check = (error_msgs, prefix)
    for sub in module.modules():  # state dicts hold the sharded parameters
        if isinstance(sub, FSDPModule):
            sub.reshard()
    assign = bool(local_metadata.get("assign_to_params_buffers", False))
    model_name, strict = _load_call(module, strict)
    where = f"{type(module).__name__}" + (f" at {prefix[:-1]!r}" if prefix else "")
    refuse(problems_in(module, state_dict, prefix, strict, assign), mesh_groups(module),
           f"load_state_dict into {where} refused", model_name)


def adopt_assigned(module: nn.Module, incompatible_keys: Any) -> None:
    """Load-state-dict post-hook: after ``load_state_dict(..., assign=True)`` the module
    holds the state dict's DTensors as parameters; make them the group's sharded
    parameters (:func:`fsdp_ref.state.adopt_changes`, as at the root's lazy init), or the
    next unshard would gather, and re-register, the old ones."""
    state = get_state(module)
    if state is not None:
        adopt_changes(state.groups)


def register(modules: Iterable[nn.Module]) -> None:
    """Install :func:`check_before_load` and :func:`adopt_assigned` on each module given
    to ``fully_shard``."""
    for module in modules:
        module.register_load_state_dict_pre_hook(check_before_load)
        module.register_load_state_dict_post_hook(adopt_assigned)
