"""What a race report says: both accesses, the tensor, and where in the code.

A :class:`Race` is built from the engine's raw :class:`~fsdp_ref.sanitizer.engine.Conflict`:
stream ids become names, the buffer becomes what FSDP said it is (and its group), each
access carries the protocol step it ran in (from the recorder) and the Python stack
trimmed to the frames a reader can act on (torch internals, the detector itself, the
standard library and the test runner are left out).
"""

from __future__ import annotations

import os
import sysconfig
import traceback
from dataclasses import dataclass

import torch

from .engine import Conflict

__all__ = ["Access", "Race", "race_from"]

_HIDDEN = tuple(
    os.path.join(os.path.realpath(p), "")
    for p in (
        os.path.dirname(torch.__file__),
        os.path.dirname(__file__),
        sysconfig.get_paths()["stdlib"],
        sysconfig.get_paths()["purelib"] + os.sep + "_pytest",
        sysconfig.get_paths()["purelib"] + os.sep + "pluggy",
    )
)
_HIDDEN_FILES = ("dist_harness.py",)
_FRAMES = 8


@dataclass(frozen=True)
class Access:
    """One side of a race.

    Attributes:
        operator: the kernel (``aten::copy_.default``, ``c10d::_allgather_base_``) or the
            allocation that may reuse freed memory.
        stream: the stream's name.
        kind: ``"read"``, ``"write"`` or ``"allocation"``.
        arguments: the op's arguments that are the tensor.
        context: the FSDP protocol step it ran in (``copy_out unsharded_params (blocks.1)``).
        stack: ``file:line in function`` lines, innermost last.
    """

    operator: str
    stream: str
    kind: str
    arguments: tuple[str, ...]
    context: str
    stack: tuple[str, ...]

    def describe(self) -> str:
        """Several lines: what, where, while doing what, and the stack."""
        args = f" (argument {', '.join(self.arguments)})" if self.arguments else ""
        lines = [f"{self.kind} by stream {self.stream} in {self.operator}{args}"]
        if self.context:
            lines.append(f"  during: {self.context}")
        lines += [f"    {frame}" for frame in self.stack]
        return "\n".join(lines)


@dataclass(frozen=True)
class Race:
    """Two accesses to one buffer that no wait orders.

    Attributes:
        kind: ``"unordered"``: the ``current`` access may run concurrently with
            ``previous`` on another stream; ``"reuse"``: the buffer was freed and its
            memory may be handed to the ``current`` allocation while ``previous`` (on
            another stream) may still be running: a use after free.
        tensor: what the buffer is, its group, where and when it was allocated.
        current: the later access (or allocation).
        previous: the earlier access it is not ordered after.
    """

    kind: str
    tensor: str
    current: Access
    previous: Access

    @property
    def key(self) -> tuple:
        """What makes two findings the same race (each step repeats it)."""
        return (self.kind, self.tensor, self.current.operator, self.current.stream,
                self.previous.operator, self.previous.stream, self.current.context)

    def summary(self) -> str:
        """One line."""
        what = "use after free" if self.kind == "reuse" else "unordered access"
        return (
            f"{what} on {self.tensor}: {self.current.kind} by {self.current.stream} "
            f"({self.current.operator}) vs {self.previous.kind} by {self.previous.stream} "
            f"({self.previous.operator})"
        )

    def __str__(self) -> str:
        if self.kind == "reuse":
            why = (
                f"The buffer was freed while stream {self.previous.stream} may still use it, "
                f"and stream {self.current.stream}'s allocator pool may hand its memory to "
                "the allocation below: the freeing code must first make that stream wait "
                f"for {self.previous.stream}'s access (or keep the buffer alive longer)."
            )
        else:
            why = (
                f"Stream {self.current.stream} never waited for an event recorded after the "
                f"access by {self.previous.stream}: the two kernels may run concurrently."
            )
        return "\n".join([
            "=" * 60,
            f"fsdp_ref.sanitizer: {self.summary()}",
            "Access: " + self.current.describe(),
            "Previous access: " + self.previous.describe(),
            why,
        ])


def _frames(stack: traceback.StackSummary) -> tuple[str, ...]:
    kept = []
    for frame in stack:
        path = os.path.realpath(frame.filename)
        if path.startswith(_HIDDEN) or os.path.basename(path) in _HIDDEN_FILES:
            continue
        kept.append(f"{os.path.relpath(path)}:{frame.lineno} in {frame.name}")
    return tuple(kept[-_FRAMES:])


def _access(access, stream_names: dict[int, str], context: str, is_alloc: bool) -> Access:
    kind = "allocation" if is_alloc else str(access.type).split()[0]  # "reading from"
    kind = {"reading": "read", "writing": "write"}.get(kind, kind)
    return Access(
        operator=str(access.operator),
        stream=stream_names.get(access.stream, str(access.stream)),
        kind=kind,
        arguments=tuple(access.aliases),
        context=context,
        stack=_frames(access.stack_trace),
    )


def race_from(conflict: Conflict, stream_names: dict[int, str]) -> Race:
    """A readable :class:`Race` from the engine's raw finding."""
    buf = conflict.buffer
    return Race(
        kind=conflict.kind,
        tensor=buf.describe(stream_names.get(buf.stream, str(buf.stream))),
        current=_access(conflict.current, stream_names, conflict.current_context,
                        conflict.kind == "reuse"),
        previous=_access(conflict.previous, stream_names, conflict.previous_context, False),
    )
