"""The happens-before engine: PyTorch's CUDA sanitizer (CSAN) plus a caching-allocator model.

This is the one module that touches CSAN's private engine (``torch.cuda._sanitizer``).
CSAN's :class:`EventHandler` is plain Python over integer ids: it keeps, per stream, a
vector clock (the newest kernel of every other stream it is ordered after), moves those
clocks on event records and waits, and checks each kernel's reads and writes against the
last write and the reads since. We feed it what it would get from the CUDA trace, with
ids of our own:

* **streams** are small integers: ``0`` is the compute stream, :data:`HOST` the host
  thread (ops whose every tensor is host memory, e.g. the optimizer under CPU offload),
  side streams count up from ``1``;
* **memory** is keyed by *storage*, not by tensor: every view of a buffer is the same
  memory (CSAN keys by ``tensor.data_ptr()``, so two views at different offsets look
  unrelated to it). A :class:`Buffer` gets a fresh id (``uid``) whenever new memory
  appears, so a CPU address reused by ``malloc`` never mixes two buffers' histories.

One step past CSAN, the **caching allocator**: on a GPU, memory freed by its last Python
reference goes back to the pool of the stream it was allocated on and may be handed to
that stream's *next* allocation, with no wait at all. So at that next allocation, every
access to the freed buffer from another stream must already be ordered before the
allocating stream's current point; otherwise the new owner's kernels may overwrite data
another stream still reads (or have their data overwritten). CSAN cannot see this (CUDA's
trace reports the free, not the reuse); :meth:`Engine.allocate` checks it.
"""

from __future__ import annotations

import itertools
import re
import traceback
from dataclasses import dataclass
from typing import Any

import torch
from torch.cuda import _sanitizer as csan
from torch.multiprocessing.reductions import StorageWeakRef

__all__ = ["COMPUTE", "HOST", "Buffer", "Conflict", "Engine", "zip_arguments", "is_factory"]

COMPUTE = csan.DEFAULT_STREAM_ID
"""Stream id of the compute stream (CSAN's default stream)."""
HOST = -1
"""Stream id of the host thread: ops whose every tensor is host memory run there."""

zip_arguments = csan.zip_arguments
"""Pair an op's schema arguments with the values it was called with (CSAN's helper)."""


def is_factory(op_name: str) -> bool:
    """Whether an op only reads the *metadata* of its tensor inputs (``empty_like``...)."""
    return bool(csan.FACTORY_FUNCTION_REGEX.match(op_name))


@dataclass
class Buffer:
    """One piece of memory the engine tracks (a storage while it holds that memory).

    Attributes:
        uid: the engine's id for this memory (CSAN's "data pointer").
        ptr: the storage's data pointer.
        cdata: the storage's identity (its ``StorageImpl`` address).
        ref: weak reference telling whether the storage still exists.
        stream: the stream it was allocated on (compute for memory that existed before
            the engine started).
        host: (pinned) host memory: not managed by a stream's pool.
        what: what FSDP says it is ("all-gather buffer", "unsharded w", ...), or ``""``.
        group: the FSDP group it belongs to, when known.
        context: the protocol step during which it was allocated.
        cross_stream: accessed by a stream other than ``stream``: its reuse is checked.
    """

    uid: int
    ptr: int
    cdata: int
    ref: Any
    stream: int
    host: bool = False
    what: str = ""
    group: str = ""
    context: str = ""
    cross_stream: bool = False

    def describe(self, stream_name: str) -> str:
        """A readable name for reports."""
        what = self.what or "tensor"
        if self.group:
            what += f" of group {self.group}"
        where = "host memory" if self.host else f"allocated on stream {stream_name}"
        during = f" during {self.context}" if self.context else ""
        return f"{what} ({where}{during})"


@dataclass
class Conflict:
    """A raw finding: two accesses to ``buffer`` not ordered by happens-before.

    ``kind`` is ``"unordered"`` (CSAN's finding) or ``"reuse"`` (the allocator model's:
    ``current`` is the allocation that may reuse the freed ``buffer``).
    """

    kind: str
    buffer: Buffer
    current: csan.Access
    previous: csan.Access
    current_context: str = ""
    previous_context: str = ""


class Engine:
    """Vector clocks, buffers and the allocator model for one detector session."""

    def __init__(self) -> None:
        self.handler = csan.EventHandler()
        self.handler._handle_stream_creation(HOST)
        self.stream_names: dict[int, str] = {COMPUTE: "compute", HOST: "host"}
        self._stream_ids = itertools.count(1)
        self._event_ids = itertools.count(1)
        self._uids = itertools.count(1)
        self.by_ptr: dict[int, Buffer] = {}
        self.freed: dict[int, list[Buffer]] = {}  # stream -> freed, awaiting its next alloc
        self.watched: dict[int, dict[int, Buffer]] = {}  # stream -> live cross-stream buffers
        self.conflicts: list[Conflict] = []
        self.contexts: dict[int, str] = {}  # kernel seq number -> protocol step
        self.context = ""
        self.in_collective_call = 0  # > 0 inside torch.distributed calls and Work.wait()

    # ---- streams and events -----------------------------------------------------------

    def new_stream(self, name: str) -> int:
        """Register a side stream; returns its id."""
        sid = next(self._stream_ids)
        self.handler._handle_stream_creation(sid)
        taken = sum(1 for n in self.stream_names.values() if n.split("#")[0] == name)
        self.stream_names[sid] = f"{name}#{taken + 1}" if taken else name
        return sid

    def record(self, stream: int) -> int:
        """Record a new event after the work queued on ``stream``; returns its id."""
        eid = next(self._event_ids)
        self.handler._handle_event_creation(eid)
        self._absorb_host(stream)
        self.handler._handle_event_record(eid, stream)
        return eid

    def wait(self, stream: int, event: int) -> None:
        """``stream`` waits for ``event``."""
        self.handler._handle_event_wait(event, stream)

    def wait_stream(self, stream: int, other: int) -> None:
        """``stream`` waits for everything queued on ``other`` (an event in between)."""
        event = self.record(other)
        self.wait(stream, event)
        self.delete_event(event)

    def delete_event(self, event: int) -> None:
        """Forget an event nobody can wait for any more."""
        if event in self.handler.syncs.recorded_sync_states:
            self.handler._handle_event_deletion(event)

    def host_waits_event(self, event: int) -> None:
        """The host blocked until ``event`` completed (``Event.synchronize``)."""
        self.handler._handle_event_synchronization(event)

    def host_waits_stream(self, stream: int) -> None:
        """The host blocked until ``stream`` drained (``.item()``, a stream sync)."""
        self.handler._handle_stream_synchronization(stream)

    def _absorb_host(self, stream: int) -> None:
        # Work the host finished is ordered before everything it issues afterwards.
        if stream != HOST:
            syncs = self.handler.syncs
            syncs._state_wait_for_other(
                syncs.current_sync_states[stream], syncs.current_sync_states[HOST]
            )

    # ---- memory -----------------------------------------------------------------------

    def lookup(self, storage: torch.UntypedStorage) -> Buffer | None:
        """The live buffer behind ``storage``, or ``None`` if its memory is new to us."""
        buf = self.by_ptr.get(storage.data_ptr())
        if buf is None:
            return None
        if buf.cdata == storage._cdata and not buf.ref.expired():
            return buf
        self._retire(buf)  # that memory was freed; this is a new storage at its address
        return None

    def allocate(
        self, storage: torch.UntypedStorage, stream: int, operator: str = "", *, seen: bool = True
    ) -> Buffer:
        """Track new memory allocated on ``stream`` by ``operator`` (``seen=False``: memory
        that existed before the engine saw it, attributed to the compute stream).

        First checks the buffers freed from ``stream``'s pool, which this allocation may
        reuse (the allocator model).
        """
        if seen:
            self._check_reuse(stream, operator)
        buf = Buffer(
            next(self._uids), storage.data_ptr(), storage._cdata, StorageWeakRef(storage),
            stream if seen else COMPUTE, context=self.context if seen else "",
        )
        self.by_ptr[buf.ptr] = buf
        self.handler._handle_memory_allocation(buf.uid)
        return buf

    def free(self, buf: Buffer) -> None:
        """``buf``'s memory was returned to its stream's pool (``storage.resize_(0)``)."""
        if self.by_ptr.get(buf.ptr) is buf:
            self._retire(buf)

    def mark_host(self, buf: Buffer) -> None:
        """``buf`` is host memory (CPU offload), as fsdp_ref says after creating it.

        Host memory is not in a stream's pool: no reuse check. The op that last wrote it
        ran on the host, unless it was a device-to-host transfer (``_to_copy``, a kernel
        on a stream that the host must synchronize with); the detector, on CPU, could not
        tell the two apart when the op ran, so such a write is moved to the host now.
        """
        if buf.host:
            return
        buf.host, buf.cross_stream = True, False
        self.watched.get(buf.stream, {}).pop(buf.uid, None)
        info = self.handler.tensors_accessed.accesses.get(buf.uid)
        last = info.write if info is not None else None
        if last is not None and last.stream != HOST and not last.operator.startswith(
            "aten::_to_copy"
        ):
            last.stream = HOST
            last.seq_num = self.handler.syncs.current_sync_states[HOST][HOST]

    def mark_cross_stream(self, buf: Buffer, stream: int) -> None:
        """Note an access from ``stream``; a buffer used across streams is checked on reuse."""
        if stream != buf.stream and not buf.host and not buf.cross_stream:
            buf.cross_stream = True
            self.watched.setdefault(buf.stream, {})[buf.uid] = buf

    def _retire(self, buf: Buffer) -> None:
        if self.by_ptr.get(buf.ptr) is buf:
            del self.by_ptr[buf.ptr]
        watched = self.watched.get(buf.stream, {})
        if buf.cross_stream and watched.pop(buf.uid, None) is not None:
            self.freed.setdefault(buf.stream, []).append(buf)
        else:
            self.handler._handle_memory_deallocation(buf.uid)

    def _check_reuse(self, stream: int, operator: str) -> None:
        watched = self.watched.get(stream, {})
        for buf in [b for b in watched.values() if b.ref.expired()]:
            self._retire(buf)
        freed = self.freed.pop(stream, [])
        if not freed:
            return
        accesses = self.handler.tensors_accessed.accesses
        syncs = self.handler.syncs
        here = None
        for buf in freed:
            info = accesses[buf.uid]
            for prev in ([info.write] if info.write else []) + info.reads:
                if prev.stream != stream and not syncs.is_ordered_after(
                    stream, prev.seq_num, prev.stream
                ):
                    here = here or self._allocation_point(stream, operator)
                    self._conflict("reuse", buf, here, prev)
                    break
            self.handler._handle_memory_deallocation(buf.uid)

    def _allocation_point(self, stream: int, operator: str) -> csan.Access:
        """An access record for an allocation on ``stream`` (not a kernel of its own)."""
        stack = traceback.StackSummary.extract(traceback.walk_stack(None), lookup_lines=False)
        stack.reverse()
        name = f"{_short(operator)} (allocating)" if operator else "allocation"
        return csan.Access(csan.AccessType.WRITE, -1, stream, name, [], True, stack)

    def _conflict(self, kind: str, buf: Buffer, current: csan.Access, prev: csan.Access) -> None:
        self.conflicts.append(
            Conflict(kind, buf, current, prev, self.context, self.contexts.get(prev.seq_num, ""))
        )

    # ---- kernels ----------------------------------------------------------------------

    def launch(
        self,
        stream: int,
        reads: dict[int, list[str]],
        writes: dict[int, list[str]],
        outputs: set[int],
        operator: str,
        buffers: dict[int, Buffer],
    ) -> None:
        """One kernel on ``stream``: ``reads`` / ``writes`` map buffer uids to argument
        names. Unordered accesses become :class:`Conflict` s."""
        self._absorb_host(stream)
        aliases = {uid: names for uid, names in {**reads, **writes}.items()}
        read_only = set(reads) - set(writes)
        errors = self.handler._handle_kernel_launch(
            stream, read_only, set(writes), outputs, _short(operator), aliases
        )
        self.contexts[self.handler.seq_num] = self.context
        for err in errors:
            self._conflict(
                "unordered", buffers[err.data_ptr], err.current_access, err.previous_access
            )


def _short(operator: Any) -> str:
    """``aten::add_.Tensor(Tensor(a!) self, ...)`` -> ``aten::add_.Tensor``."""
    return re.split(r"\(", str(operator), maxsplit=1)[0]
