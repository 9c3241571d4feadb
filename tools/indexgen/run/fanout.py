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

Every shard is computed in a process of its own (with ``here``, the last in the calling
process meanwhile), and the results come back in the order of the shards.  The processes are
forked as a tree (:func:`_subtree`): the calling process forks one, which forks the others
by halves.  A fork copies the forking process's page tables, about 15 ms of CPU for the
800 MB of a build of torch; fifteen of them in the calling process were 0.4 CPU seconds of
the global pass on 16 cores, where now it pays one and the others are paid on idle cores.
A shard that raises raises again here; a process that dies (killed, out of memory) raises
:class:`~indexgen.errors.IndexgenError`; a failure here stops the others (they share a
process group).  Without ``fork`` (Windows) or with at most one shard, the shards are
computed here, one after the other, with the same results.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Sequence
from multiprocessing.connection import wait
from typing import Any, NoReturn, TypeVar

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


def fork_map(func: Callable[[T], R], shards: Sequence[T], here: bool = False,
             meanwhile: Callable[[], None] | None = None) -> list[R]:
    """``[func(shard) for shard in shards]``, each computed in a forked process when there
    are several shards and ``fork`` exists; ``func`` and the shards are inherited, never
    pickled, so a closure over the calling process's tables works.  ``here``: the last
    shard is computed in the calling process meanwhile (which would otherwise only wait);
    ``meanwhile()``: other work of the calling process, done after that (once in any case)."""
    if len(shards) <= 1 or not can_fork():
        return _here(func, shards, meanwhile)
    forked = list(range(len(shards) - 1 if here else len(shards)))
    pipes = [multiprocessing.Pipe(duplex=False) for _ in forked]  # (reader, writer) a shard
    try:
        root = os.fork()
    except OSError:  # no process to be had (a limit on processes, memory): all of it here
        for reader, writer in pipes:
            reader.close()
            writer.close()
        return _here(func, shards, meanwhile)
    if root == 0:
        _subtree(func, shards, pipes, forked)  # never returns
    try:
        os.setpgid(root, root)  # the child does the same: whichever runs first
    except OSError:
        pass
    for _reader, writer in pipes:
        writer.close()  # each is held by the process computing its shard alone
    running = {pipes[i][0]: i for i in forked}
    results: list[Any] = [None] * len(shards)
    try:
        if here:
            results[-1] = func(shards[-1])
        if meanwhile is not None:
            meanwhile()
        while running:
            for conn in wait(list(running)):
                i = running.pop(conn)
                try:
                    status, value = conn.recv()
                except (EOFError, OSError):
                    raise _stopped(f"a process of the global pass (shard {i + 1} of "
                                   f"{len(shards)})") from None
                finally:
                    conn.close()
                if status == "error":
                    raise value
                results[i] = value
    finally:
        for conn in running:
            conn.close()
        if running:  # a failure: stop the shards still computing
            try:
                os.killpg(root, signal.SIGTERM)
            except OSError:
                pass
        os.waitpid(root, 0)
    return results


def _here(func: Callable[[T], R], shards: Sequence[T],
          meanwhile: Callable[[], None] | None) -> list[R]:
    """What :func:`fork_map` returns, all of it computed in the calling process."""
    results = [func(shard) for shard in shards]
    if meanwhile is not None:
        meanwhile()
    return results


def _subtree(func: Callable[[Any], Any], shards: Sequence[Any], pipes: list,
             mine: list[int]) -> NoReturn:
    """A forked process computing the shards ``mine``: it forks a process for the second
    half of them (which does the same), keeps the first half, and so on down to one shard,
    which it computes and sends (``("ok", result)`` or ``("error", exc)``) on its pipe, the
    only one it still holds (where no process can be forked, it computes all it kept, one
    after the other); then it waits for the processes it forked and exits."""
    def compute() -> None:
        nonlocal mine
        if mine[0] == 0:  # the calling process's child: the others join its group
            os.setpgid(0, 0)
        for reader, _writer in pipes:
            reader.close()
        children = []
        while len(mine) > 1:
            keep, give = mine[:len(mine) // 2], mine[len(mine) // 2:]
            try:
                pid = os.fork()
            except OSError:  # no more processes to be had: this one computes them all
                break
            mine, drop = (give, keep) if pid == 0 else (keep, give)
            children = [] if pid == 0 else [*children, pid]
            for i in drop:
                pipes[i][1].close()
        for i in mine:
            _send(pipes[i][1], func, shards[i])
        for pid in children:
            os.waitpid(pid, 0)

    _exit_after(compute)


def _exit_after(body: Callable[[], None]) -> NoReturn:
    """End a forked process after ``body()``, never returning to the code it was forked
    from: exit status 1 when ``body`` raised (its pipes then close with nothing sent, which
    the calling process reports: :func:`_stopped`)."""
    code = 0
    try:
        tune_worker()
        body()
    except BaseException:  # noqa: BLE001 - the calling process sees the closed pipe
        code = 1
    finally:
        os._exit(code)


def _stopped(what: str) -> IndexgenError:
    """The error for a forked process whose pipe closed with no result."""
    return IndexgenError(f"{what} stopped before it sent its result; a crash or a lack of "
                         "memory ends a process this way")


def _send(conn: Any, func: Callable[[Any], Any], shard: Any) -> None:
    """Compute one shard and send ``("ok", result)`` or ``("error", exc)``."""
    try:
        result = ("ok", func(shard))
    except Exception as exc:  # noqa: BLE001 - every failure goes back to the caller
        result = ("error", exc)
    try:
        conn.send(result)
    except Exception as exc:  # noqa: BLE001 - a result or exception that does not pickle
        conn.send(("error", IndexgenError(f"{type(exc).__name__}: {exc}")))
    conn.close()


class Forked:
    """``func()`` computed in a process forked now, beside whatever the calling process does
    next (the build renders its folder pages so during the global pass where a core is free
    for them, :meth:`indexgen.run.plan.Plan.relate`): :meth:`result` waits for it, returns
    what it returned and raises what it raised; :meth:`cancel` stops it if it still runs."""

    def __init__(self, func: Callable[[], Any]) -> None:
        self._func: Callable[[], Any] | None = None
        self._reader, writer = multiprocessing.Pipe(duplex=False)
        try:
            self._pid = os.fork()
        except OSError:  # no process to be had: computed by result(), here
            self._pid, self._func = 0, func
            self._reader.close()
            writer.close()
            return
        if self._pid == 0:
            self._reader.close()
            _exit_after(lambda: _send(writer, lambda _none: func(), None))
        writer.close()

    def result(self) -> Any:
        """What ``func()`` returned, once it has (it raises here what it raised there)."""
        if self._func is not None:
            func, self._func = self._func, None
            return func()
        try:
            status, value = self._reader.recv()
        except (EOFError, OSError):
            raise _stopped("a process of the build") from None
        finally:
            self._end(stop=False)
        if status == "error":
            raise value
        return value

    def cancel(self) -> None:
        """Stop the process if it still runs (a build that failed before it needed the
        result); nothing when the result was taken."""
        self._func = None
        self._end(stop=True)

    def _end(self, stop: bool) -> None:
        if not self._pid:
            return
        self._reader.close()
        if stop:
            try:
                os.kill(self._pid, signal.SIGTERM)
            except OSError:
                pass
        os.waitpid(self._pid, 0)
        self._pid = 0
