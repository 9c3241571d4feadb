"""``indexgen.run.fanout.fork_map``: shards computed in forked processes that see the calling
process's memory as it is (nothing pickled on the way in), results back in order, failures
raised here."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
from indexgen.errors import IndexgenError
from indexgen.run import fanout

pytestmark = pytest.mark.skipif(not fanout.can_fork(), reason="needs fork (POSIX)")


def test_results_come_back_in_order_from_other_processes():
    table = {"lock": threading.Lock(), "base": 10}  # a lock does not pickle: inherited only

    def shard(part: list[int]) -> tuple[int, list[int]]:
        with table["lock"]:
            return os.getpid(), [table["base"] + x for x in part]

    found = fanout.fork_map(shard, [[1, 2], [3], [], [4, 5, 6]])
    assert [values for _pid, values in found] == [[11, 12], [13], [], [14, 15, 16]]
    pids = {pid for pid, _values in found}
    assert os.getpid() not in pids and len(pids) == 4


def test_one_shard_runs_here():
    assert fanout.fork_map(lambda part: (os.getpid(), part), [[1]]) == [(os.getpid(), [1])]


def test_an_exception_in_a_shard_is_raised_here():
    def shard(x: int) -> int:
        if x == 2:
            raise KeyError("shard two")
        return x

    with pytest.raises(KeyError, match="shard two"):
        fanout.fork_map(shard, [1, 2, 3])


def test_a_process_that_dies_is_reported():
    def shard(x: int) -> int:
        if x == 1:
            os.kill(os.getpid(), signal.SIGKILL)
        return x

    with pytest.raises(IndexgenError, match="stopped before it sent its result"):
        fanout.fork_map(shard, [0, 1])


def test_unpicklable_results_are_reported():
    with pytest.raises(IndexgenError, match="pickle"):
        fanout.fork_map(lambda x: threading.Lock(), [0, 1])


def test_shard_count_is_one_process_a_core_the_calling_process_among_them():
    assert [fanout.shard_count(jobs, cores=2) for jobs in (1, 2, 16)] == [1, 2, 2]
    assert fanout.shard_count(16, cores=16) == 16
    assert fanout.shard_count(4, cores=16) == 4  # no more than the workers asked for
    assert fanout.shard_count(16, cores=1) == 1


def test_the_last_shard_is_computed_in_the_calling_process_with_here():
    found = fanout.fork_map(lambda part: (os.getpid(), part), [[1], [2], [3]], here=True)
    assert [part for _pid, part in found] == [[1], [2], [3]]
    pids = [pid for pid, _part in found]
    assert pids[2] == os.getpid() and os.getpid() not in pids[:2] and pids[0] != pids[1]


def test_a_failure_of_the_shard_computed_here_stops_the_forked_ones():
    def shard(x):
        if x == 1:
            raise ValueError("here")
        time.sleep(60)

    started = time.monotonic()
    with pytest.raises(ValueError, match="here"):
        fanout.fork_map(shard, [0, 1], here=True)
    assert time.monotonic() - started < 30  # the forked process was terminated


def test_the_calling_process_forks_one_process_which_forks_the_others():
    found = fanout.fork_map(lambda part: (os.getpid(), os.getppid(), part),
                            [[i] for i in range(9)], here=True)
    assert [part for _pid, _parent, part in found] == [[i] for i in range(9)]
    forked = found[:-1]
    assert len({pid for pid, _parent, _part in forked}) == 8
    assert sum(parent == os.getpid() for _pid, parent, _part in forked) == 1


def test_a_process_that_dies_in_the_middle_of_the_tree_is_reported():
    def shard(x: int) -> int:
        if x == 2:  # a process that forked the processes of shard 3
            os.kill(os.getpid(), signal.SIGKILL)
        return x

    with pytest.raises(IndexgenError, match=r"shard 3 of 4"):
        fanout.fork_map(shard, [0, 1, 2, 3])


def test_forked_gives_what_its_function_returned_in_another_process():
    table = {"lock": threading.Lock()}  # inherited, never pickled
    made = fanout.Forked(lambda: (os.getpid(), sorted(table)))
    pid, names = made.result()
    assert pid != os.getpid() and names == ["lock"]


def test_forked_raises_what_its_function_raised():
    def fail():
        raise KeyError("in the forked process")

    with pytest.raises(KeyError, match="in the forked process"):
        fanout.Forked(fail).result()


def test_a_cancelled_forked_process_is_stopped():
    started = time.monotonic()
    made = fanout.Forked(lambda: time.sleep(60))
    made.cancel()
    assert time.monotonic() - started < 30
    made.cancel()  # twice: nothing more to stop


def test_the_calling_process_works_meanwhile_once_whatever_the_shards():
    done = []
    found = fanout.fork_map(lambda x: (os.getpid(), x), [1, 2, 3], here=True,
                            meanwhile=lambda: done.append(os.getpid()))
    assert [x for _pid, x in found] == [1, 2, 3] and done == [os.getpid()]
    assert fanout.fork_map(lambda x: x, [4], meanwhile=lambda: done.append(0)) == [4]
    assert done == [os.getpid(), 0]


def test_where_no_process_can_be_forked_everything_is_computed_here(monkeypatch):
    def no_fork():
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(fanout.os, "fork", no_fork)
    done = []
    found = fanout.fork_map(lambda x: (os.getpid(), x), [1, 2, 3], here=True,
                            meanwhile=lambda: done.append(1))
    assert found == [(os.getpid(), 1), (os.getpid(), 2), (os.getpid(), 3)] and done == [1]
    assert fanout.Forked(lambda: os.getpid()).result() == os.getpid()


def test_a_process_of_the_tree_that_cannot_fork_computes_the_shards_it_kept(monkeypatch):
    real_fork, calling = os.fork, os.getpid()

    def fork_once():  # the calling process forks; the processes it forked cannot
        if os.getpid() != calling:
            raise OSError(11, "Resource temporarily unavailable")
        return real_fork()

    monkeypatch.setattr(fanout.os, "fork", fork_once)
    found = fanout.fork_map(lambda x: (os.getpid(), x), [1, 2, 3, 4, 5], here=True)
    assert [x for _pid, x in found] == [1, 2, 3, 4, 5]
    assert len({pid for pid, _x in found[:-1]}) == 1 and found[0][0] != calling
