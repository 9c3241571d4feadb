"""What one process of a :class:`~indexgen.run.team.Team` holds and does: extract files, keep their
full summaries, render their pages, and prepare renders ahead while it waits.

A worker answers each message ``(op, batch)`` of the calling process with the results of
:meth:`Store.run`.  Between messages it is idle: above all while the calling process runs the
global pass, which every render waits for (about a second of a cold build of torch, with the
workers' cores free).  A worker spends that time on the part of each held file's render that no
context changes (:func:`indexgen.run.jobs.prepare`: the source listing, the identifier index, the
docstrings), largest file first, checking for a message after each file; the render of a
file then only adds what depends on its context.

The workers prepare in turns.  The global pass runs in the calling process while the
workers wait for it; were both workers of a two-core machine to prepare meanwhile, three
processes would share two cores, and the pass, which every render waits for, would get about
two thirds of one.  The workers take turns instead, one file at a time, each holding a
semaphore the team shares (``token`` of :func:`worker_main`; as many turns at once as there
are cores besides the calling process's): the pass keeps a whole core and the others are as
busy as before.  (The
workers used to run five ``nice`` steps lower for the same end; lower, they also lost their
cores to every other program on the machine, a test suite or another build, for the whole
build.)
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any, NamedTuple

from indexgen.errors import IndexgenError
from indexgen.extract.discover import SourceFile
from indexgen.extract.enrich import Later
from indexgen.extract.model import FileSummary
from indexgen.extract.runtime import tune_worker
from indexgen.render.page import Page
from indexgen.run import manifest as mf
from indexgen.run.jobs import RenderSetup, extract, prepare, render

PREPARE_WAIT_S = 0.01
"""How long a worker waits for its turn to prepare before it looks for a message again."""


class Setup(NamedTuple):
    """What every worker needs, given once when it starts.

    Attributes:
        sources: Every file the build may extract; work names them by index.
        max_bytes: Size limit of analysis.
        time_budget: Seconds one file's analysis may take (0: no limit).
        render: What every render shares.
    """

    sources: Sequence[SourceFile]
    max_bytes: int
    time_budget: float
    render: RenderSetup


class Store:
    """The full and compact summaries one process extracted, and the work it does on them.

    Args:
        setup: What every worker needs.
    """

    def __init__(self, setup: Setup) -> None:
        self.setup = setup
        self.held: dict[int, FileSummary] = {}
        self.data: dict[int, bytes | None] = {}  # bytes analyzed, until prepared or rendered
        self.prepared: dict[int, Page] = {}  # made ahead of the render (jobs.prepare)
        self.later: dict[int, Later] = {}  # what extraction left for prepare, until prepared
        self.unprepared: deque[int] = deque()  # held files, largest first
        self.texts: dict[int, str] = {}  # compact summaries as sent, for the context hash

    def extract(self, index: int) -> str:
        """Extract a source, keep its full summary and return its compact one as the
        manifest writes it (:func:`indexgen.run.manifest.summary_json`): the calling process
        decodes that text and writes it into the manifest as it is, and a string crosses
        the pipe at the cost of a copy, where the summary's records would be pickled one
        by one."""
        text = self.texts[index] = mf.summary_json(mf.encode_compact(self._hold(index)))
        return text

    def _hold(self, index: int) -> FileSummary:
        """Extract a source and keep its full summary and bytes for its render."""
        s = self.setup
        later: Later = []
        full, self.data[index] = extract(s.sources[index], s.max_bytes, s.time_budget, later)
        self.held[index] = full
        if later:
            self.later[index] = later
        self.unprepared.append(index)
        return full

    def full(self, index: int) -> FileSummary:
        """A full summary not kept (test files: the global pass reads all of it)."""
        s = self.setup
        return extract(s.sources[index], s.max_bytes, s.time_budget)[0]

    def prepare_next(self) -> None:
        """Prepare the render of the next held file not yet rendered or prepared.

        A failure is left for the render of the file to meet again and report to the calling
        process.
        """
        while self.unprepared:
            index = self.unprepared.popleft()
            if index in self.held and index not in self.prepared:
                try:
                    self.prepared[index] = prepare(self.held[index], self.setup.render,
                                                   self.data[index], self.later.get(index))
                    del self.data[index]
                    self.later.pop(index, None)
                except Exception:  # noqa: BLE001 - raised again by the render, and reported
                    pass
                return

    def render(self, index: int, packed: bytes) -> tuple[str, list]:
        """Render both pages of a source (extracted first if this process does not hold it)
        from its packed :class:`~indexgen.run.jobs.RenderInput`: its context's hash and its
        pages' results (:func:`~indexgen.run.jobs.render`)."""
        if index not in self.held:  # its summary is not needed: the caller has it
            self._hold(index)
        return render(self.held.pop(index), packed, self.setup.render, self.data.pop(index, None),
                      self.prepared.pop(index, None), self.later.pop(index, None),
                      self.texts.pop(index, None))

    def run(self, op: str, batch: list) -> list:
        """The results of one message: ``extract``, ``full`` or ``render`` a batch."""
        if op == "extract":
            return [self.extract(i) for i in batch]
        if op == "full":
            return [self.full(i) for i in batch]
        return [self.render(i, job) for i, job in batch]


def worker_main(conn: Any, setup: Setup, token: Any = None) -> None:
    """A worker's loop: answer each ``(op, batch)`` with ``("ok", results)`` or
    ``("error", exception)`` until told to stop (None); prepare renders while no message
    waits, one file at a time, each while holding ``token`` (a semaphore the team's workers
    share, so that they leave the calling process a core; None: no turns)."""
    tune_worker()
    store = Store(setup)
    while True:
        if store.unprepared and not conn.poll():
            if token is None:
                store.prepare_next()
            elif token.acquire(timeout=PREPARE_WAIT_S):
                try:
                    store.prepare_next()
                finally:
                    token.release()
            continue
        try:
            message = conn.recv()
        except EOFError:
            return
        if message is None:
            return
        try:
            conn.send(("ok", store.run(*message)))
        except Exception as exc:  # noqa: BLE001 - every failure goes back to the caller
            try:
                conn.send(("error", exc))
            except Exception:  # noqa: BLE001 - an exception that does not pickle
                conn.send(("error", IndexgenError(f"{type(exc).__name__}: {exc}")))
