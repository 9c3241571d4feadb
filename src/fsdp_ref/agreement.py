"""The check that every rank built the same model, before the first collective.

FSDP's collectives assume that every rank holds the same parameters in the same order:
a rank with one more parameter, another shape or another dtype would pack a different
buffer, and the collectives would hang or mix values. The root's lazy init therefore
compares, over every process group its groups use, a signature of what each rank built
(parameter names, shapes, dtypes, whether still on the meta device, and what the lazy
init itself raised), and fails on every rank with the differences instead of leaving
some waiting. Torch 2.13 has no such check (fsdp_ref alone).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

import torch.distributed as dist

if TYPE_CHECKING:
    from .param_group import FSDPParamGroup

__all__ = ["check_ranks_agree"]


def check_ranks_agree(groups: list[FSDPParamGroup], failure: Exception | None = None) -> None:
    """Fail on every rank, instead of hanging, if ranks built different models: the
    parameters of ``groups`` (their names, shapes, dtypes and whether they are still on
    the meta device) and what the lazy init raised (``failure``), compared over every
    process group of ``groups``.

    Raises:
        RuntimeError: naming up to five differences and the group rank that has them.
    """
    signature = [
        (p.fqn, tuple(p.layout.full_shape), str(p.param_dtype),
         "on meta" if p.on_meta else "materialized")
        for group in groups for p in group.fsdp_params
    ]
    if failure is not None:
        signature.append(("lazy init", f"raised {type(failure).__name__}: {failure}"))
    digest = hashlib.sha256(repr(signature).encode()).hexdigest()
    pgs: dict[int, dist.ProcessGroup] = {}
    for group in groups:
        for pg in (group.mesh_info.shard_group, group.mesh_info.replicate_group):
            if pg is not None:
                pgs.setdefault(id(pg), pg)
    for pg in pgs.values():
        if pg.size() == 1 or dist.get_backend(pg) == "fake":
            continue  # nobody to compare with, or fake groups that move no data
        gathered: list[Any] = [None] * pg.size()
        dist.all_gather_object(gathered, (digest, signature), group=pg)
        for other_rank, (other_digest, other_sig) in enumerate(gathered):
            if other_digest != digest:
                raise RuntimeError(
                    "ranks built different models; FSDP needs identical parameter names, "
                    "shapes and dtypes on every rank, all materialized (or none): "
                    + _describe_difference(signature, other_sig, other_rank)
                )


def _describe_difference(mine: list, theirs: list, other_rank: int) -> str:
    here = {name: rest for name, *rest in mine}
    there = {name: rest for name, *rest in theirs}
    diffs = [
        f"{name}: {here.get(name)} here vs {there.get(name)} on group rank {other_rank}"
        for name in sorted(set(here) | set(there))
        if here.get(name) != there.get(name)
    ]
    return "; ".join(diffs[:5]) or f"parameter order differs from group rank {other_rank}"
