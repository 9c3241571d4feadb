"""Which parameters one ``fully_shard`` / ``replicate`` call takes, and in what order.

A call takes every parameter of its modules' subtrees that no earlier call (on a
submodule) manages, with every ``(module, name)`` that holds it, in the order torch 2.13
collects them: children before their parent. That order is the layout of the group's
all-gather and reduce-scatter buffers, so it decides which gradient elements a gloo
reduce-scatter sums together. Parameters an earlier call manages are skipped, unless that
call was on a module *around* this one (a parent sharded before its child: refused) or
took the parameter through another module (a tied weight split across calls: refused).
"""

from __future__ import annotations

import torch.nn as nn
from torch.distributed.tensor import DTensor

from .param import MANAGED, ParamRef
from .state import get_state

__all__ = ["managed_modules", "unmanaged_params"]


def unmanaged_params(modules: list[nn.Module], ignored: set[int]):
    """``(param, refs, fqn)`` for every parameter no earlier call manages, in torch 2.13's
    order: children before their parent (:func:`_children_first`). The order lays out the
    group's all-gather and reduce-scatter buffers, and torch 2.13's gloo sums a buffer in
    segments that do not follow the ranks' chunks: another layout sums some elements of a
    reduce-scatter over 3 or more ranks in another order (gradients ulps apart).
    The fqn is the first path to it from the module given to ``fully_shard``."""
    found: dict[int, tuple[nn.Parameter, list[ParamRef], str]] = {}
    for root in modules:
        inner = _sharded_below(root)
        for prefix, sub in root.named_modules(remove_duplicate=False):
            for name, param in sub._parameters.items():
                if param is None or id(param) in ignored:
                    continue
                if getattr(param, MANAGED, False):
                    if not isinstance(param, DTensor):
                        raise ValueError(
                            f"Parameter '{prefix + '.' if prefix else ''}{name}' is shared "
                            "with a parameter already managed by another FSDP group. For "
                            "shared/tied parameters, use fully_shard([module_a, module_b]) "
                            "to place them in the same FSDP group. For example "
                            "fully_shard([embedding, lm_head]), or shard their common parent"
                        )
                    if id(sub) not in inner:
                        raise _parent_first_error(root, prefix, name)
                    continue
                fqn = f"{prefix}.{name}" if prefix else name
                entry = found.setdefault(id(param), (param, [], fqn))
                ref = ParamRef(sub, name)
                if ref not in entry[1]:
                    entry[1].append(ref)
    seen: set[nn.Module] = set()
    ids = (id(p) for root in modules for m in _children_first(root, seen)
           for p in m._parameters.values())
    position = {key: i for i, key in enumerate(dict.fromkeys(ids))}  # first occurrence
    return sorted(found.values(), key=lambda entry: position[id(entry[0])])


def _children_first(module: nn.Module, seen: set[nn.Module]):
    """``module`` and its submodules not in ``seen`` (which it fills), each after its
    children: the post-order walk in which torch 2.13's ``fully_shard`` collects a group's
    parameters (``_get_managed_modules``)."""
    if module not in seen:
        seen.add(module)
        for child in module.children():
            yield from _children_first(child, seen)
        yield module


def managed_modules(modules: list[nn.Module]) -> list[nn.Module]:
    """Every module inside ``modules`` whose parameters the call manages: all of their
    subtrees except what an earlier call (on a submodule) manages. ``fully_shard`` marks
    them as torch 2.13 does, for code that asks whether a module is FSDP-managed:
    torch.compile (``_is_fsdp_managed_module``: its parameters are graph inputs, not
    constants) and transformers' ``generate()`` (turns ``synced_gpus`` on)."""
    found: dict[int, nn.Module] = {}
    for root in modules:
        inner = _sharded_below(root)
        found.update((id(m), m) for m in root.modules() if id(m) not in inner)
    return list(found.values())


def _sharded_below(root: nn.Module) -> set[int]:
    """The ids of the modules inside ``root`` that an earlier call already manages: those
    under a submodule with FSDP state (``root`` itself has none yet)."""
    return {id(m) for sub in root.modules() if sub is not root and get_state(sub) is not None
            for m in sub.modules()}


def _parent_first_error(root: nn.Module, prefix: str, name: str) -> TypeError:
    """A sharded parameter inside ``root`` that no submodule's call manages: a module
    around ``root`` was sharded first. torch 2.13 fails here too, by accident (a
    ``TypeError`` or ``RuntimeError`` from concatenating its meshes)."""
    where = f"{prefix}.{name}" if prefix else name
    return TypeError(
        f"Parameter '{where}' of {type(root).__name__} is already sharded by fully_shard "
        "on a module that contains it: a parent was sharded before its child. Call "
        "fully_shard bottom-up, children first and the root last, e.g. "
        "for block in model.layers: fully_shard(block); fully_shard(model)"
    )
