"""Worker processes that keep what they extract: each file is rendered where it was extracted.

A build extracts every file (:func:`indexgen.run.jobs.extract`), relates all of them in the calling
process, then renders the pages of every file (:func:`indexgen.run.jobs.render`).  A file's render
needs its *full* summary (identifiers, findings, docstrings: many objects), the global pass
only its compact one.  A :class:`Team` of worker processes therefore keeps each full summary in
the worker that made it and sends that worker the file's render: only compact summaries (to the
calling process, as the JSON text the manifest stores, which the worker makes anyway) and
contexts (to the workers, pickled by the process that made them, see
:meth:`~indexgen.run.plan.Plan.relate`) cross a pipe, instead of every full summary being
pickled, held and unpickled again.

Scheduling.  Work is sent largest file first (cost: bytes), in chunks of about a hundredth of a
worker's share (a large file is a chunk of its own), each worker kept a chunk ahead and fed as
it answers (:mod:`indexgen.run.dispatch`), so that every core stays busy to the end of extraction.  A worker renders
the files it extracted, which balances the render roughly as well; a file held by no worker (an
incremental build reusing its cached summary) goes to the least loaded worker, which extracts it
first.  The calling process runs ``meanwhile`` work (the folder pages) while the workers render;
a worker (:mod:`indexgen.run.worker`) prepares the context-free parts of its renders while it waits,
above all during the global pass.

Failures.  An exception in a worker is raised again in the calling process; a worker that dies
(killed, out of memory) raises :class:`~indexgen.errors.IndexgenError` with its exit code and
the files it was working on;
leaving the team stops every worker.  With ``jobs <= 1``, or while no batch has reached
:data:`MIN_BATCH` files, the calling process does the work itself, with the same results.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from multiprocessing.connection import wait
from typing import Any

from indexgen.errors import IndexgenError
from indexgen.extract.model import FileSummary
from indexgen.run import fanout
from indexgen.run.dispatch import Feeder, Helper, chunks
from indexgen.run.worker import Setup, Store, worker_main

Progress = Callable[[str, int, int], None]
"""A progress callback: ``progress(phase, done, total)``; phases are ``extract`` and ``render``."""

MIN_BATCH = 8
"""Smallest batch worth starting worker processes for."""
CHUNKS_PER_WORKER = 100
"""Chunks a worker's share of a batch is cut into (see :func:`indexgen.run.dispatch.chunks`)."""


class Team:
    """The worker processes of one build (a context manager: leaving it stops them).

    Args:
        jobs: Worker processes to use (1 or less: none).
        setup: What every worker needs.
        progress: Progress callback, or None.
    """

    def __init__(self, jobs: int, setup: Setup, progress: Progress | None) -> None:
        self.jobs, self.setup, self.progress = jobs, setup, progress
        self.local = Store(setup)
        self.workers: list[tuple[multiprocessing.process.BaseProcess, Any]] = []
        self.owner: dict[int, int] = {}  # source index -> worker holding its full summary
        self.turns: Any = None  # the workers' turns to prepare (a semaphore), once started
        self.turn_count = 0

    def __enter__(self) -> Team:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop every worker (asked first, then terminated)."""
        for _proc, conn in self.workers:
            try:
                conn.send(None)
            except OSError:
                pass
        for proc, conn in self.workers:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.terminate()
                proc.join()
            conn.close()
        self.workers = []

    def _start(self) -> None:
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        ctx = multiprocessing.get_context(method)
        # While the calling process runs the global pass, the workers preparing leave it a
        # core (see indexgen.run.worker): as many at a time as there are other cores.
        self.turn_count = max(1, min(self.jobs, (os.cpu_count() or 1) - 1))
        self.turns = token = ctx.Semaphore(self.turn_count)
        for _ in range(self.jobs):
            mine, theirs = ctx.Pipe()
            proc = ctx.Process(target=worker_main, args=(theirs, self.setup, token),
                               daemon=True)
            proc.start()
            theirs.close()
            self.workers.append((proc, mine))

    @contextmanager
    def turns_taken(self, n: int) -> Iterator[None]:
        """Hold ``n`` of the workers' turns to prepare (at most all of them) for the block:
        the processes the calling process forks for the global pass
        (:func:`indexgen.run.fanout.fork_map`) then have the cores those turns would take.
        Each turn is taken when a worker's current file is prepared; none without workers."""
        taken = 0
        try:
            if self.turns is not None:
                for _ in range(min(n, self.turn_count)):
                    self.turns.acquire()
                    taken += 1
            yield
        finally:
            for _ in range(taken):
                self.turns.release()

    def fan_out(self, func: Callable[[Any], Any], runs: list,
                meanwhile: Callable[[], None] | None = None) -> list:
        """``[func(run) for run in runs]``, the last run in the calling process (and then
        ``meanwhile()``), the others each in a process forked now
        (:func:`indexgen.run.fanout.fork_map`), which take the turns the workers would
        prepare in meanwhile: three processes on two cores would slow the global pass, which
        every render waits for."""
        with self.turns_taken(len(runs) - 1):
            return fanout.fork_map(func, runs, here=True, meanwhile=meanwhile)

    def _use_workers(self, n: int) -> bool:
        if not self.workers and self.jobs > 1 and n >= MIN_BATCH:
            self._start()
        return bool(self.workers)

    # -- the operations ------------------------------------------------------------------
    def extract(self, indices: Sequence[int], costs: Sequence[float],
                on_result: Callable[[int, str], None] | None = None) -> list[str]:
        """The compact summaries of the given sources as the manifest writes them
        (:meth:`indexgen.run.worker.Store.extract`), in order, each also given to
        ``on_result(position, text)`` as it arrives; their full summaries are kept where they
        were made, for :meth:`render`."""
        if not self._use_workers(len(indices)):
            return self._local("extract", list(enumerate(indices)), self.local.extract,
                               on_result)
        return self._dispatch("extract", list(indices), costs, [], shared=True,
                              on_result=on_result)

    def full_summaries(self, indices: Sequence[int], costs: Sequence[float]
                       ) -> list[FileSummary]:
        """Full summaries of the given sources, in order, not kept."""
        if not self._use_workers(len(indices)):
            return self._local("extract", list(enumerate(indices)), self.local.full)
        return self._dispatch("full", list(indices), costs, [], shared=True)

    def render(self, work: Sequence[tuple[int, bytes]], costs: Sequence[float],
               meanwhile: Callable[[], None] | None = None,
               on_result: Callable[[int, Any], None] | None = None) -> list[tuple]:
        """Render the pages of the given ``(source index, packed input)`` (see
        :meth:`indexgen.run.jobs.RenderInput.pack`), each where its full
        summary is kept, and return the results of :func:`indexgen.run.jobs.render` in order;
        ``meanwhile`` runs in the calling process while the workers render, and
        ``on_result(position, result)`` as each result arrives (so that the caller's work on
        it overlaps the renders still running)."""
        results: list[Any] = [None] * len(work)
        helper = Helper(meanwhile)
        use_workers = self._use_workers(len(work))
        remote = []
        for pos, (index, job) in enumerate(work):
            if index in self.local.held or not use_workers:
                results[pos] = self.local.render(index, job)
                if on_result:
                    on_result(pos, results[pos])
                if self.progress:
                    self.progress("render", pos + 1 - len(remote), len(work))
            else:
                remote.append(pos)
        if remote:
            per_worker: list[list[int]] = [[] for _ in self.workers]
            load = [0.0] * len(self.workers)
            unowned = []
            for pos in remote:
                w = self.owner.get(work[pos][0])
                if w is None:
                    unowned.append(pos)
                else:
                    per_worker[w].append(pos)
                    load[w] += costs[pos]
            for pos in sorted(unowned, key=lambda p: -costs[p]):  # extracted where rendered
                w = min(range(len(self.workers)), key=lambda k: load[k])
                per_worker[w].append(pos)
                load[w] += costs[pos]
            helper.start()
            found = self._dispatch("render", list(work), costs, per_worker, shared=False,
                                   done=len(work) - len(remote), on_result=on_result)
            for pos in remote:
                results[pos] = found[pos]
        helper.finish()
        return results

    # -- how work is run -----------------------------------------------------------------
    def _local(self, phase: str, items: list, func: Callable,
               on_result: Callable[[int, Any], None] | None = None) -> list:
        results = []
        for n, (pos, arg) in enumerate(items, 1):
            results.append(func(arg))
            if on_result:
                on_result(pos, results[-1])
            if self.progress:
                self.progress(phase, n, len(items))
        return results

    def _dispatch(self, op: str, items: list, costs: Sequence[float],
                  per_worker: list[list[int]], shared: bool, done: int = 0,
                  on_result: Callable[[int, Any], None] | None = None) -> list:
        """Send ``items`` (by position) to the workers in chunks and gather the answers
        (each also given to ``on_result(position, answer)`` as it arrives).

        With ``shared`` any worker takes the next chunk of one common queue; otherwise each
        worker gets the chunks of its own list of positions, and a worker whose list is done
        takes the last (smallest) chunk of the worker with the most work left: it extracts
        those files again to render them (:meth:`indexgen.run.worker.Store.render`), which costs
        less than waiting for the other worker to finish alone (the render of a torch build
        ended 0.3 s apart on the two workers).  A feeder thread per worker
        sends (pickling there), so that the calling process always reads answers: a worker
        blocked on a large answer never waits for a caller blocked on a large send.
        """
        phase = "render" if op == "render" else "extract"
        if shared:
            common = chunks(range(len(items)), costs, CHUNKS_PER_WORKER * len(self.workers))
            queues = [common] * len(self.workers)
        else:
            queues = []
            for positions in per_worker:
                sub = chunks(positions, [costs[p] for p in positions], CHUNKS_PER_WORKER)
                queues.append([[positions[i] for i in c] for c in sub])
        expected = len(common) if shared else sum(len(q) for q in queues)
        lock = threading.Lock()

        def take(w: int) -> list[int] | None:
            with lock:
                if queues[w]:
                    chunk = queues[w].pop(0)
                elif shared:
                    return None
                else:  # its own work is done: take the smallest chunk of the most loaded
                    left = [(sum(costs[p] for c in q for p in c), v)
                            for v, q in enumerate(queues) if q]
                    if not left:
                        return None
                    chunk = queues[max(left)[1]].pop()
            if op == "extract":
                for p in chunk:
                    self.owner[items[p]] = w
            return chunk

        feeders = [Feeder(conn, op, items, lambda w=w: take(w))
                   for w, (_proc, conn) in enumerate(self.workers)]
        for feeder in feeders:
            feeder.start()
        results: list[Any] = [None] * len(items)
        answered = 0
        conns = {conn: w for w, (_proc, conn) in enumerate(self.workers)}
        sentinels = {proc.sentinel: w for w, (proc, _conn) in enumerate(self.workers)}
        try:
            while answered < expected:
                for ready in wait([*conns, *sentinels]):
                    if ready in sentinels:
                        self._stopped(sentinels[ready], phase, feeders, items)
                    w = conns[ready]
                    try:
                        status, answer = ready.recv()
                    except (EOFError, OSError):  # it ended: its sentinel says how
                        self._stopped(w, phase, feeders, items)
                    if status == "error":
                        raise answer
                    chunk = feeders[w].answered()
                    for p, result in zip(chunk, answer):
                        results[p] = result
                        if on_result:
                            on_result(p, result)
                    answered += 1
                    done += len(chunk)
                    if self.progress:
                        self.progress(phase, done, len(items))
        finally:
            for feeder in feeders:
                feeder.stop()
        return results


    def _stopped(self, w: int, phase: str, feeders: list[Feeder], items: list) -> None:
        """Raise the error of a worker that ended while it had work, naming that work."""
        proc = self.workers[w][0]
        proc.join(timeout=5)
        files = [str(self.setup.sources[items[p] if phase == "extract" else items[p][0]].path)
                 for chunk in list(feeders[w].sent) for p in chunk]
        raise IndexgenError(
            f"a worker process stopped (exit code {proc.exitcode}) during {phase}, with "
            f"one of these files: {', '.join(files)}; a crash or a lack of memory ends a "
            "worker this way")
