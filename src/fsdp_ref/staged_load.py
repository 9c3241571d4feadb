"""Load a DCP checkpoint into a sharded model only if every rank read all of it.

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
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn as nn

from .loading import mesh_groups, refuse

__all__ = ["load_checkpoint_staged"]


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
