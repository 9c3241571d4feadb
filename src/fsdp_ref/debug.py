"""Debug mode: ranks that diverge or stall get an error naming the group, phase and collective.

Without it, ranks that disagree show up as gloo's ``Connection reset by peer``, ``Received
data size doesn't match``, or nothing at all until the process group's timeout (30 minutes
by default). With it, every FSDP collective (all-gather, reduce-scatter, all-reduce; they
all go through :mod:`fsdp_ref.collectives`) is preceded by an exchange through the process
group's store:

1. each rank publishes a :class:`Fingerprint` of the collective it is about to run (the
   FSDP group, the phase, the collective, its sizes and dtype, and the sequence number of
   FSDP collectives on that process group) and, for reports, the last collective it
   reached;
2. it waits, at most ``timeout_s``, for every other rank of the process group to publish
   the same sequence number;
3. the first rank to finish waiting decides for all, through the store's
   ``compare_set``: ``go`` if it saw every fingerprint, ``abort`` if it timed out. So no
   rank starts a collective that another rank gave up on;
4. on ``go``, every rank compares the fingerprints; any difference raises
   :class:`CollectiveMismatchError` on every rank, listing what each rank was about to do;
   on ``abort``, every rank raises :class:`CollectiveTimeoutError`, and the ranks that
   waited print which collective they wait in and the last collective each other rank
   reached.

The timeout is the watchdog: a rank that never arrives (it raised, exited, hangs in its
own code or took another code path) is named within ``timeout_s``, and when it does
arrive later it raises too instead of entering a collective nobody else will join.

Turn it on with ``FSDP_REF_DEBUG=1`` (``FSDP_REF_DEBUG_TIMEOUT_S`` sets the timeout) or
:func:`set_debug`. Off, :func:`before_collective` returns after one global read. On, each
collective costs a few store round trips and makes ranks wait for each other at every
collective's launch. Limits: only FSDP's own collectives are checked (not a model's, nor
DTensor redistributions of tensor-parallel gradients); a peer that dies or freezes *inside*
a collective every rank has started is left to the process group.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import asdict, dataclass
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist

__all__ = [
    "CollectiveMismatchError",
    "CollectiveTimeoutError",
    "ENV",
    "ENV_TIMEOUT",
    "Fingerprint",
    "before_collective",
    "is_enabled",
    "set_debug",
]

ENV = "FSDP_REF_DEBUG"
"""Environment variable that turns debug mode on at import (``1``) or leaves it off."""

ENV_TIMEOUT = "FSDP_REF_DEBUG_TIMEOUT_S"
"""Environment variable for the watchdog timeout in seconds (default 300)."""

_KEEP = 2  # sequence numbers a rank may still read behind the newest


class CollectiveMismatchError(RuntimeError):
    """Ranks were about to run different FSDP collectives (raised on every rank)."""


class CollectiveTimeoutError(RuntimeError):
    """Some rank did not reach an FSDP collective within the debug timeout."""


@dataclass(frozen=True)
class Fingerprint:
    """What one rank is about to run. Equal on every rank of a correct program."""

    group: str
    phase: str
    collective: str
    sizes: tuple[int, ...]
    dtype: str
    seq: int

    def describe(self) -> str:
        """One line for error messages."""
        return (
            f"{self.collective} #{self.seq} of group {self.group!r} ({self.phase}), "
            f"sizes {list(self.sizes)} {self.dtype}"
        )


class _Debug:
    """Process-wide settings and per-process-group sequence numbers."""

    def __init__(self) -> None:
        self.enabled = os.environ.get(ENV, "0") not in ("", "0")
        self.timeout_s = float(os.environ.get(ENV_TIMEOUT, "300"))
        self.epoch = 0
        self.seq: dict[str, int] = {}


_debug = _Debug()


def set_debug(enabled: bool = True, timeout_s: float | None = None) -> None:
    """Turn debug mode on or off; call it on every rank at the same point.

    Each call starts a new epoch (fresh sequence numbers and store keys), so a program
    may turn it on again after a :class:`CollectiveTimeoutError` (with ``reset_iter_state``
    on every rank) or between independent runs in one process.

    Args:
        enabled: check every FSDP collective.
        timeout_s: how long a rank waits for the others before every rank raises
            (``None`` keeps the current value, 300 s or ``FSDP_REF_DEBUG_TIMEOUT_S``).
    """
    _debug.enabled = enabled
    if timeout_s is not None:
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s}")
        _debug.timeout_s = float(timeout_s)
    _debug.epoch += 1
    _debug.seq.clear()


def is_enabled() -> bool:
    """Whether FSDP collectives are checked."""
    return _debug.enabled


def before_collective(
    collective: str,
    group: dist.ProcessGroup | None,
    label: str,
    *tensors: torch.Tensor,
    phase: str | None = None,
) -> None:
    """Check, with every rank of ``group``, that all are about to run the same collective.

    Called first thing in each function of :mod:`fsdp_ref.collectives`. A no-op when debug
    mode is off, for ``group=None`` (nothing is communicated) and for fake process groups.
    ``phase`` names the group's training state when the caller knows it; otherwise it is
    ``"backward"`` inside an autograd backward pass and ``"forward"`` outside.

    Raises:
        CollectiveMismatchError: ranks are about to run different collectives.
        CollectiveTimeoutError: a rank did not arrive within the timeout.
    """
    if not _debug.enabled or group is None or dist.get_backend(group) == "fake":
        return
    name = group.group_name
    seq = _debug.seq.get(name, 0)
    _debug.seq[name] = seq + 1
    if phase is None:
        phase = "backward" if torch._C._current_graph_task_id() != -1 else "forward"
    sizes = tuple(t.numel() for t in tensors)
    dtype = str(tensors[0].dtype).removeprefix("torch.") if tensors else ""
    mine = Fingerprint(label, phase, collective, sizes, dtype, seq)
    _Exchange(group, seq).run(mine)


class _Exchange:
    """One fingerprint exchange on the store of ``group`` (keys scoped by epoch)."""

    def __init__(self, group: dist.ProcessGroup, seq: int) -> None:
        base = dist.distributed_c10d._get_default_store()
        root = f"fsdp_ref_debug/{_debug.epoch}/"
        self.store = dist.PrefixStore(f"{root}pg/{group.group_name}/", base)
        self.progress = dist.PrefixStore(f"{root}progress/", base)
        self.group = group
        self.seq = seq
        self.ranks = dist.get_process_group_ranks(group)
        self.me = group.rank()

    def _key(self, seq: int, group_rank: int) -> str:
        return f"fp/{seq}/{group_rank}"

    def run(self, mine: Fingerprint) -> None:
        now = time.time()
        self.progress.set(str(self.ranks[self.me]), json.dumps([mine.describe(), now]))
        self.store.set(self._key(self.seq, self.me), json.dumps(asdict(mine)))
        keys = [self._key(self.seq, r) for r in range(len(self.ranks))]
        try:
            self.store.wait(keys, timedelta(seconds=_debug.timeout_s))
            proposal = "go"
        except RuntimeError:  # the store's wait timed out
            proposal = f"abort {self.ranks[self.me]}"
        decision = self.store.compare_set(f"decision/{self.seq}", "", proposal).decode()
        self._forget(self.seq - _KEEP)
        if decision != "go":
            self._timed_out(mine, keys, int(decision.split()[1]), time.time() - now)
        found = [Fingerprint(**_tuples(json.loads(v))) for v in self.store.multi_get(keys)]
        if any(f != mine for f in found):
            raise CollectiveMismatchError(self._mismatch(found))

    def _forget(self, seq: int) -> None:
        """Delete keys every rank has read (all ranks passed ``seq + 1``'s exchange)."""
        if seq < 0:
            return
        self.store.delete_key(self._key(seq, self.me))
        if self.me == 0:
            self.store.delete_key(f"decision/{seq}")

    def _where(self) -> str:
        return f"process group {self.group.group_name!r} (ranks {self.ranks})"

    def _last_reached(self) -> list[str]:
        lines, now = [], time.time()
        for r in self.ranks:
            if self.progress.check([str(r)]):
                what, when = json.loads(self.progress.get(str(r)))
                lines.append(f"  rank {r}: {what}, {now - when:.1f} s ago")
            else:
                lines.append(f"  rank {r}: no FSDP collective yet")
        return lines

    def _timed_out(self, mine: Fingerprint, keys: list[str], aborter: int, waited: float):
        missing = [self.ranks[i] for i, k in enumerate(keys) if not self.store.check([k])]
        me = self.ranks[self.me]
        if aborter == me or missing:
            head = (
                f"[fsdp_ref debug] rank {me} waited {waited:.1f} s in {mine.describe()} on "
                f"{self._where()}; ranks {missing} did not reach it (they raised, exited, "
                "are stuck in their own code, or took another code path)."
            )
        else:
            head = (
                f"[fsdp_ref debug] rank {me} reached {mine.describe()} on {self._where()} "
                f"after rank {aborter} gave up waiting for it ({_debug.timeout_s:.0f} s)."
            )
        report = "\n".join([head, "Last FSDP collective each rank reached:", *self._last_reached()])
        print(report, file=sys.stderr, flush=True)
        raise CollectiveTimeoutError(report)

    def _mismatch(self, found: list[Fingerprint]) -> str:
        lines = [
            f"[fsdp_ref debug] ranks disagree at FSDP collective #{self.seq} of "
            f"{self._where()}; every rank raises instead of running mismatched collectives:"
        ]
        lines += [f"  rank {self.ranks[i]} is about to run {f.describe()}" for i, f in
                  enumerate(found)]
        lines.append(
            "Ranks must build the same model, call fully_shard on the same modules with the "
            "same arguments, and run the same forward/backward path (no rank-dependent "
            "branches, no exception caught on one rank only)."
        )
        return "\n".join(lines)


def _tuples(fields: dict[str, Any]) -> dict[str, Any]:
    """JSON turned the sizes tuple into a list; make it comparable again."""
    return {k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()}
