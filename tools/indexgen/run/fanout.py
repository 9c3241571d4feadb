"""Run one function over shards of work in processes forked from the calling process.

The global pass runs in the calling process on tables built from every file (the resolver,
the type evaluator and their caches); a worker of the :class:`~indexgen.run.team.Team`,
started before those tables existed, would have to rebuild them.  A process forked *after*
they exist sees them as they are, without pickling anything: the pages of memory it only
reads stay shared (copy-on-write), and only its results come back, pickled.  That is what
:func:`fork_map` is for: the part of the global pass that is the same function over
independent files (the call edges of each file) can run on the cores the pass otherwise
leaves idle.  The build uses it for the call edges of each file, in the first round
(:func:`indexgen.analyze.callgraph.edges`, through
:meth:`indexgen.analyze.project.Project.contexts`); the results are the same as the serial
pass's, since the type evaluator gives each file the values its own queries find
(:mod:`indexgen.analyze.memo`).  ``docs/design/indexgen-speed.md`` has the measurements.

Every shard is computed in a process of its own (one per shard, started together; with
``here``, the last in the calling process meanwhile), and the results come back in the
order of the shards.  A shard that raises raises again here; a
process that dies (killed, out of memory) raises :class:`~indexgen.errors.IndexgenError`.
Without ``fork`` (Windows) or with at most one shard, the shards are computed here, one
after the other, with the same results.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from multiprocessing.connection import wait
from typing import Any, TypeVar

from indexgen.errors import IndexgenError
from indexgen.extract.runtime import tune_worker

T = TypeVar("T")
R = TypeVar("R")


def shard_count(jobs: int, cores: int | None = None) -> int:
    """How many processes the per-file work of the global pass runs in, the calling
    process's own among them, for a build with ``jobs`` worker processes on ``cores`` cores
    (default: this machine's): one per core, at most ``jobs``.  Each forked process costs
    more CPU than the work it takes (it touches, and so copies, pages of the calling
    process's heap, and finds again the values it reads that the calling process had not
    found before forking), but on two cores the other core is idle for half the pass
    (the workers prepare their renders on it in the other half): measured on torch, one
    forked process took about 0.7 CPU seconds off the calling process's part of the pass
    for about 1.4 of its own (``docs/design/indexgen-speed.md``)."""
    return max(1, min(jobs, cores or os.cpu_count() or 1))


def can_fork() -> bool:
    """Whether processes can be forked here (POSIX)."""
    return "fork" in multiprocessing.get_all_start_methods()


def fork_map(func: Callable[[T], R], shards: Sequence[T], here: bool = False) -> list[R]:
    """``[func(shard) for shard in shards]``, each computed in a forked process when there
    are several shards and ``fork`` exists; ``func`` and the shards are inherited, never
    pickled, so a closure over the calling process's tables works.  ``here``: the last
    shard is computed in the calling process meanwhile (which would otherwise only wait)."""
    if len(shards) <= 1 or not can_fork():
        return [func(shard) for shard in shards]
    ctx = multiprocessing.get_context("fork")
    running: dict[Any, tuple[int, Any]] = {}
    for i, shard in enumerate(shards[:-1] if here else shards):
        mine, theirs = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_child, args=(theirs, func, shard), daemon=True)
        proc.start()
        theirs.close()
        running[mine] = (i, proc)
    results: list[Any] = [None] * len(shards)
    try:
        if here:
            results[-1] = func(shards[-1])
        while running:
            for conn in wait(list(running)):
                i, proc = running.pop(conn)
                try:
                    status, value = conn.recv()
                except (EOFError, OSError):
                    proc.join(timeout=5)
                    raise IndexgenError(
                        f"a process of the global pass stopped (exit code {proc.exitcode}); a "
                        "crash or a lack of memory ends a process this way") from None
                finally:
                    conn.close()
                proc.join()
                if status == "error":
                    raise value
                results[i] = value
    finally:
        for conn, (_i, proc) in running.items():
            proc.terminate()
            proc.join()
            conn.close()
    return results


def _child(conn: Any, func: Callable[[Any], Any], shard: Any) -> None:
    """A forked process: compute one shard, send ``("ok", result)`` or ``("error", exc)``."""
    tune_worker()
    try:
        result = ("ok", func(shard))
    except Exception as exc:  # noqa: BLE001 - every failure goes back to the caller
        result = ("error", exc)
    try:
        conn.send(result)
    except Exception as exc:  # noqa: BLE001 - a result or exception that does not pickle
        conn.send(("error", IndexgenError(f"{type(exc).__name__}: {exc}")))
    conn.close()
