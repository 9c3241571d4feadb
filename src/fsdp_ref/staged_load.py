"""All-or-nothing loads through ``torch.distributed.checkpoint`` (DCP).

``torch.distributed.checkpoint.load`` reads into the tensors it is given. Handed
``model.state_dict()``, it writes straight into the model's shards, and what a damaged
checkpoint leaves behind was measured (two gloo ranks, ``tests/reliability``):

* a data file cut short: every rank raises ``CheckpointException``, but the rank whose
  file was intact has loaded all of its shards and the other some of them: the model is
  now a mix of old and new values that differs across ranks;
* one flipped byte inside a tensor: the load succeeds and the value is wrong. DCP keeps no
  checksums; only a digest saved next to the checkpoint would catch it.

:func:`load_checkpoint_staged` reads into a staging copy instead, agrees across ranks
(:func:`fsdp_ref.loading.refuse`) that every read succeeded, and only then
loads the copy into the model, so a failed read leaves every rank's model unchanged.

``set_model_state_dict(model, full_sd, options=StateDictOptions(full_state_dict=True,
broadcast_from_rank0=True))`` writes too early as well: DCP broadcasts rank 0's tensors
one by one and copies each into the live shard it belongs to, and only then calls
``model.load_state_dict``, whose all-or-nothing check (:mod:`fsdp_ref.loading`) comes
after the good entries were written. :func:`guard_broadcast_load` wraps DCP's
``_broadcast_state_dict`` so that, for a model ``fully_shard`` manages, rank 0's shapes and
dtypes are broadcast and checked against the model on every rank before the first write.
"""

from __future__ import annotations

import contextvars
import functools
from typing import Any

import torch
import torch.distributed as dist
import torch.nn as nn

from .load_checks import problems_in
from .loading import mesh_groups, refuse
from .state import get_state

__all__ = ["check_broadcast", "guard_broadcast_load", "load_checkpoint_staged"]


def load_checkpoint_staged(model: nn.Module, checkpoint_id: Any, **load_kwargs: Any) -> None:
    """Load a DCP checkpoint into ``model`` only if every rank read it completely.

    ``torch.distributed.checkpoint.load`` reads into the tensors it is given; handed
    ``model.state_dict()``, it writes the model's own shards and a truncated file leaves
    them partly overwritten (and other ranks fully loaded). Here it reads into a staging
    copy (one extra copy of this rank's shards), the ranks agree that all reads succeeded,
    and only then is the copy loaded (checked again by
    :func:`fsdp_ref.loading.check_before_load`).

    Args:
        model: a module (usually the ``fully_shard`` root).
        checkpoint_id: the checkpoint directory (or any ``checkpoint_id`` DCP accepts).
        **load_kwargs: passed to ``torch.distributed.checkpoint.load`` (``storage_reader``,
            ``planner``, ``process_group``).

    Raises:
        StateDictLoadError: on every rank, when any rank failed to read; the model is
            unchanged everywhere.
    """
    import torch.distributed.checkpoint as dcp

    staging = {
        k: torch.empty_like(v) if isinstance(v, torch.Tensor) else v
        for k, v in model.state_dict().items()
    }
    try:
        dcp.load(staging, checkpoint_id=checkpoint_id, **load_kwargs)
        mine: list[str] = []
    except (Exception, dcp.CheckpointException) as e:  # reported on every rank below
        mine = _read_failures(e, checkpoint_id)
    refuse(mine, mesh_groups(model), "checkpoint load refused")
    model.load_state_dict(staging)


def _read_failures(e: BaseException, checkpoint_id: Any) -> list[str]:
    """One line per failed reader: DCP gathers every rank's exception into a
    ``CheckpointException`` (a ``BaseException``); anything else is this rank's own."""
    failures = getattr(e, "failures", None) or {None: (e, None)}
    lines = []
    for rank, (exc, _trace) in failures.items():
        who = "this rank" if rank is None else f"reader rank {rank}"
        first = str(exc).strip().splitlines()
        lines.append(
            f"reading {checkpoint_id}: {who} failed: {type(exc).__name__}: "
            f"{first[0] if first else ''}"
        )
    return lines


_loading_model: contextvars.ContextVar[nn.Module | None] = contextvars.ContextVar(
    "fsdp_ref_dcp_model", default=None)


def guard_broadcast_load() -> None:
    """Make DCP's ``broadcast_from_rank0`` model load all-or-nothing for fsdp_ref models.

    DCP's ``_load_model_state_dict(model, state_dict, info)`` hands rank 0's full state
    dict and the model's live tensors to ``_broadcast_state_dict``, which writes each
    broadcast tensor into its shard. Both are wrapped, in DCP's module only: the first
    remembers the model being loaded, the second runs :func:`check_broadcast` before any
    write when that model holds ``fully_shard`` modules. Other models, and DCP's optimizer
    loads (which broadcast too), run DCP's code unchanged. Installed once, when fsdp_ref
    is imported.
    """
    from torch.distributed.checkpoint import state_dict as dsd

    load = getattr(dsd, "_load_model_state_dict", None)
    broadcast = getattr(dsd, "_broadcast_state_dict", None)
    if load is None or broadcast is None or getattr(load, "_fsdp_ref_guard", False):
        return  # (another torch: the check in load_state_dict still runs, after the writes)

    @functools.wraps(load)
    def load_model(model, *args, **kwargs):
        token = _loading_model.set(model)
        try:
            return load(model, *args, **kwargs)
        finally:
            _loading_model.reset(token)

    @functools.wraps(broadcast)
    def broadcast_checked(full_state_dict, local_state_dict, device, pg=None, strict=False,
                          cpu_offload=False):
        model = _loading_model.get()
        if model is not None and any(get_state(m) for m in model.modules()):
            check_broadcast(model, full_state_dict, local_state_dict, pg, strict)
        return broadcast(full_state_dict, local_state_dict, device, pg=pg, strict=strict,
                         cpu_offload=cpu_offload)

    load_model._fsdp_ref_guard = True
    dsd._load_model_state_dict, dsd._broadcast_state_dict = load_model, broadcast_checked


def check_broadcast(model: nn.Module, full_state_dict: dict[str, Any],
                    local_state_dict: dict[str, Any], pg: dist.ProcessGroup | None = None,
                    strict: bool = True) -> None:
    """Before DCP broadcasts rank 0's ``full_state_dict`` into ``model``: every rank
    checks rank 0's shapes and dtypes against its own model, and the ranks agree.

    Rank 0 broadcasts each entry as a meta tensor of its shape and dtype (other values as
    they are, as DCP does) over ``pg`` (DCP's; ``None``: the default group). Every rank
    then runs :func:`fsdp_ref.load_checks.problems_in` on them (a full tensor for a sharded
    parameter is fine: DCP distributes it), and :func:`fsdp_ref.loading.refuse` raises
    on every rank if any rank found a problem, before DCP copied anything.

    Args:
        model: the module given to ``set_model_state_dict``.
        full_state_dict: rank 0's state dict, keys as the model's ``load_state_dict``
            sees them (DCP has added any wrapper's prefix); ignored on other ranks.
        local_state_dict: the model's tensors DCP is about to write into (their
            device decides, as in DCP, whether the load assigns: any on meta).
        pg: the process group DCP broadcasts over.
        strict: DCP's ``strict`` option.

    Raises:
        StateDictLoadError: on every rank, starting with the error torch's
            ``load_state_dict`` would raise after the writes.
    """
    meta = [None]
    if dist.get_rank() == 0:
        meta = [{k: torch.empty(v.shape, dtype=v.dtype, device="meta")
                 if isinstance(v, torch.Tensor) else v for k, v in full_state_dict.items()}]
    dist.broadcast_object_list(meta, src=0, group=pg)
    assign = any(isinstance(v, torch.Tensor) and v.dim() > 0 and v.is_meta
                 for v in local_state_dict.values())
    name = type(model).__name__
    refuse(problems_in(model, meta[0], strict=strict, assign=assign, full=True),
           mesh_groups(model),
           f"set_model_state_dict(broadcast_from_rank0=True) into {name} refused", name)


guard_broadcast_load()
