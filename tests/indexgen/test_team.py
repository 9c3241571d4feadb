"""The build's worker processes (indexgen.run.team): same pages as one process, failures raised in
the caller, no worker left behind, work cut largest first; the paused collector (collector)."""

from __future__ import annotations

import gc
import multiprocessing
import os
import time

import pytest
from ig_helpers import read_tree, sample_config
from indexgen import IndexgenError, build
from indexgen.analyze import project as analyze
from indexgen.extract.discover import discover
from indexgen.extract.runtime import collector_paused
from indexgen.run import dispatch, jobs, team, worker


@pytest.fixture
def workers_for_any_batch(monkeypatch):
    """Workers start for batches of one file (the sample project is smaller than the usual
    threshold); the forked workers inherit the setting."""
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("the workers only see monkeypatched code when they are forked")
    monkeypatch.setattr(team, "MIN_BATCH", 1)


def test_workers_write_the_bytes_one_process_writes(sample, tmp_path, workers_for_any_batch):
    alone = sample_config(sample, jobs=1)
    build(alone)
    together = sample_config(sample, jobs=2)
    together.out = tmp_path / "together"
    report = build(together)
    assert report.extracted == 7 and report.rendered == 7
    assert read_tree(together.out) == read_tree(alone.out)
    assert multiprocessing.active_children() == []


def test_files_held_nowhere_are_extracted_where_they_are_rendered(sample, tmp_path,
                                                                  monkeypatch):
    """One changed file is extracted in the calling process (a batch too small for workers);
    the files whose context it changes are rendered by workers that extract them first."""
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("needs forked workers")
    monkeypatch.setattr(team, "MIN_BATCH", 2)
    config = sample_config(sample, jobs=2)
    build(config)
    (sample / "src/shop/payments/gateway.py").write_text(
        '"""Gateway."""\nfrom shop.cart import Cart\nfrom shop.ledger import Ledger\n'
        "from shop.orders import Order\n")
    report = build(config)
    assert report.extracted > 1 and report.rendered == report.extracted
    fresh = sample_config(sample, jobs=1)
    fresh.out = tmp_path / "fresh"
    build(fresh)
    assert read_tree(config.out) == read_tree(fresh.out)


def test_an_error_in_a_worker_is_raised_in_the_caller(sample, monkeypatch,
                                                      workers_for_any_batch):
    real = worker.render

    def failing(summary, *args):
        if summary.relpath == "shop/ledger.py":
            raise IndexgenError("render failed on purpose")
        return real(summary, *args)

    monkeypatch.setattr(worker, "render", failing)
    with pytest.raises(IndexgenError, match="render failed on purpose"):
        build(sample_config(sample, jobs=2))
    assert multiprocessing.active_children() == []


def test_a_worker_that_dies_is_named_not_waited_for(sample, monkeypatch,
                                                    workers_for_any_batch):
    real = worker.extract

    def dying(src, *args):
        if src.relpath == "shop/cart.py":
            os._exit(3)
        return real(src, *args)

    monkeypatch.setattr(worker, "extract", dying)
    with pytest.raises(IndexgenError, match=r"worker process stopped \(exit code 3\) .*cart\.py"):
        build(sample_config(sample, jobs=2))
    assert multiprocessing.active_children() == []


def test_chunks_start_with_the_largest_and_cover_everything_once():
    costs = [1, 50, 2, 2, 30, 1, 1, 3]
    found = dispatch.chunks(range(len(costs)), costs, parts=4)  # about 22.5 per chunk
    assert found[0] == [1] and found[1] == [4]  # each larger than a share: alone
    flat = [i for chunk in found for i in chunk]
    assert sorted(flat) == list(range(len(costs)))
    assert [costs[i] for i in flat] == sorted(costs, reverse=True)


def test_chunks_hold_at_most_64_items():
    found = dispatch.chunks(range(200), [1.0] * 200, parts=1)
    assert [len(c) for c in found] == [64, 64, 64, 8]


def test_collector_is_paused_in_the_block_and_restored_after():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # a caller that had it off keeps it off
    finally:
        gc.enable()


def test_what_a_paused_block_keeps_goes_to_the_oldest_generation():
    # Left in the young generation, it would all be walked by the next young pass.
    with collector_paused():
        kept = [[i] for i in range(1000)]
    assert not any(o is kept for o in gc.get_objects(generation=0))
    assert any(o is kept for o in gc.get_objects(generation=2))
    assert gc.get_count()[0] < 100
    assert gc.get_freeze_count() == 0


def test_a_worker_runs_without_the_collector_and_freezes_nothing():
    # What a worker makes is acyclic; the collector's passes only walked the summaries it
    # holds (see collector.tune_worker).
    def child(conn):
        from indexgen.extract.runtime import tune_worker
        tune_worker()
        with collector_paused():
            pass
        conn.send((gc.get_freeze_count(), gc.isenabled()))

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("needs a forked child")
    ctx = multiprocessing.get_context("fork")
    mine, theirs = ctx.Pipe()
    proc = ctx.Process(target=child, args=(theirs,))
    proc.start()
    assert mine.recv() == (0, False)
    proc.join()


def test_a_failure_while_preparing_is_reported_by_the_render(sample, monkeypatch,
                                                             workers_for_any_batch):
    # Workers prepare renders while the calling process runs the global pass; a failure there
    # neither kills the worker nor vanishes: the render prepares again and reports it.
    real, real_contexts = jobs.prepare, analyze.Project.contexts

    def failing(summary, *args):
        if summary.relpath == "shop/ledger.py":
            raise RuntimeError("prepare failed on purpose")
        return real(summary, *args)

    def slow_contexts(self, *args, **kwargs):
        time.sleep(0.5)  # the workers prepare every file they hold meanwhile
        return real_contexts(self, *args, **kwargs)

    monkeypatch.setattr(worker, "prepare", failing)  # the ahead-of-time preparation
    monkeypatch.setattr(jobs, "prepare", failing)  # the render's own
    monkeypatch.setattr(analyze.Project, "contexts", slow_contexts)
    with pytest.raises(RuntimeError, match="prepare failed on purpose"):
        build(sample_config(sample, jobs=2))
    assert multiprocessing.active_children() == []



def test_workers_take_turns_to_prepare(sample, tmp_path, monkeypatch, workers_for_any_batch):
    # The global pass runs in the calling process while the workers prepare; on two cores it
    # must keep one, so the workers prepare one at a time (a semaphore of cpu_count - 1
    # turns), at the priority of the calling process.
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    log = tmp_path / "prepared.log"
    real = worker.prepare

    def noting(*args):
        start = time.monotonic()
        time.sleep(0.02)  # long enough for the two workers to meet if they did not take turns
        try:
            return real(*args)  # fails here (no render setup): the render would report it
        finally:
            with open(log, "a") as fh:
                fh.write(f"{os.getpid()} {start} {time.monotonic()} "
                         f"{os.getpriority(os.PRIO_PROCESS, 0)}\n")

    monkeypatch.setattr(worker, "prepare", noting)
    sources = discover(sample / "src")
    with team.Team(2, worker.Setup(sources, 10**6, 0, None), None) as t:
        t.extract(range(len(sources)), [1.0] * len(sources))
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and (
                not log.exists() or len(log.read_text().splitlines()) < len(sources)):
            time.sleep(0.05)
    rows = sorted((float(a), float(b), pid, prio) for pid, a, b, prio in
                  (line.split() for line in log.read_text().splitlines()))
    assert len(rows) == len(sources) and len({r[2] for r in rows}) == 2
    assert all(later[0] >= earlier[1] for earlier, later in zip(rows, rows[1:]))
    assert {r[3] for r in rows} == {str(os.getpriority(os.PRIO_PROCESS, 0))}


def test_no_worker_prepares_while_the_calling_process_holds_the_turns(sample, tmp_path,
                                                                     monkeypatch,
                                                                     workers_for_any_batch):
    # The processes forked for the global pass take the workers' turns (Team.turns_taken):
    # on two cores, one turn; no prepare starts while it is held, and the workers prepare
    # again once it is given back.
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    log = tmp_path / "prepared.log"
    real = worker.prepare

    def noting(*args):
        with open(log, "a") as fh:
            fh.write(f"{time.monotonic()}\n")
        time.sleep(0.05)  # slow enough for most files to be left when the turns are taken
        return real(*args)

    monkeypatch.setattr(worker, "prepare", noting)
    sources = discover(sample / "src")
    with team.Team(2, worker.Setup(sources, 10**6, 0, None), None) as t:
        t.extract(range(len(sources)), [1.0] * len(sources))  # the workers start preparing
        with t.turns_taken(5):  # more than there are: all of them, no deadlock
            held_from = time.monotonic()
            assert not t.turns.acquire(block=False)  # every turn is taken
            time.sleep(0.5)
            held_to = time.monotonic()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and (
                not log.exists() or len(log.read_text().splitlines()) < len(sources)):
            time.sleep(0.05)
    starts = [float(x) for x in log.read_text().split()]
    assert len(starts) == len(sources)
    assert any(start > held_to for start in starts)  # some were left for after
    assert all(not held_from <= start <= held_to for start in starts), (held_from, starts)


def test_a_worker_out_of_render_work_takes_the_rest_of_the_others(sample, monkeypatch,
                                                                   workers_for_any_batch):
    # Every file is routed to worker 0 for its render; worker 1 has nothing of its own and
    # takes chunks from the end of worker 0's list, extracting those files again.
    monkeypatch.setattr(worker, "render", lambda summary, *args: (os.getpid(), summary.key))
    sources = discover(sample / "src")
    indices = range(len(sources))
    with team.Team(2, worker.Setup(sources, 10**6, 0, None), None) as t:
        t.extract(indices, [1.0] * len(sources))
        t.owner = dict.fromkeys(indices, 0)
        found = t.render([(i, None) for i in indices], [1.0] * len(sources))
        pids = [proc.pid for proc, _conn in t.workers]
    assert sorted(key for _pid, key in found) == sorted(s.key for s in sources)
    assert {pid for pid, _key in found} == set(pids)  # both rendered
