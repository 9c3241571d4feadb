"""All-or-nothing ``load_state_dict`` into sharded modules.

``nn.Module.load_state_dict`` copies tensor by tensor and reports size mismatches,
missing and unexpected keys only at the end: a state dict with one wrong shape leaves the
model half old, half new. Under FSDP it is worse: each rank checks only what it sees, so
one rank may copy while another raises.

:func:`check_before_load` runs as a load-state-dict pre-hook of every module passed to
``fully_shard``, before anything is copied. The outermost such module of a load checks
every entry of its subtree (:func:`~fsdp_ref.load_checks.problems_in`), the ranks exchange what they found
(:func:`agree_across_ranks`), and if any rank found a problem every rank raises
(:func:`refuse`) :class:`StateDictLoadError`: torch's own error message first (as
:func:`~fsdp_ref.load_checks.torch_load_error` words it), then each problem and the ranks that saw it. Only
when all ranks agree that everything fits does ``load_state_dict`` go on to copy.

A second hook, :func:`adopt_assigned`, runs after a load: with ``assign=True`` the
module's parameters are new objects, which must become the group's sharded parameters.
The same checks and agreement guard DCP's loads in :mod:`fsdp_ref.staged_load`.

What each entry must satisfy, and the two wordings of each problem, are
:mod:`fsdp_ref.load_checks`'s.
"""

from __future__ import annotations

import sys
from collections.abc import Hashable, Iterable
from typing import Any

import torch.distributed as dist
import torch.nn as nn
from torch.distributed.tensor import DTensor

from .load_checks import problems_in, torch_load_error
from .module import FSDPModule
from .state import adopt_changes, get_state

__all__ = [
    "StateDictLoadError",
    "adopt_assigned",
    "agree_across_ranks",
    "check_before_load",
    "mesh_groups",
    "refuse",
    "register",
]

_MAX_LISTED = 20


class StateDictLoadError(RuntimeError):
    """Loading was refused on every rank before anything was copied. A
    ``RuntimeError``, as torch's ``load_state_dict`` raises, whose message starts with
    torch's (``Error(s) in loading state_dict for ...``) and goes on with the ranks that
    found each problem."""


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
