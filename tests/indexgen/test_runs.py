"""``indexgen.analyze.runs.fan_runs``: how the global pass's rounds are cut into runs of
files for the processes of a fan-out, and that both rounds are spread on two cores."""

from __future__ import annotations

from functools import partial

import pytest
from ig_helpers import SAMPLE
from indexgen.analyze.project import Project, compact
from indexgen.analyze.runs import HERE_SHARE, WARM_UP, cut, fan_runs
from indexgen.extract.discover import discover
from indexgen.extract.pipeline import extract_file
from indexgen.run import fanout


def _runs_of(shards: int, n: int = 400) -> list[list[str]]:
    """The runs ``fan_runs`` makes of ``n`` files of one call each, with ``shards``."""
    keys = [f"f{i:03}" for i in range(n)]
    seen: list[list[str]] = []

    def fan(func, parts, meanwhile=None):
        return [func(p) for p in parts]

    def record(run):
        seen.append(run)
        return run

    fan_runs(fan, record, keys, dict.fromkeys(keys, 1), shards)
    return seen


@pytest.mark.parametrize("shards", [2, 3, 4])
def test_with_few_processes_the_run_before_the_fork_is_a_small_share(shards):
    """The run computed before any process is forked keeps the other cores idle: with few
    processes it is an eighth of the work, not a ``shards + 1``-th; the rest is cut one run
    a process, the calling process's (the last) larger, since a forked process works
    slower on the memory it shares."""
    runs = _runs_of(shards)
    assert [k for run in runs for k in run] == [f"f{i:03}" for i in range(400)]
    assert len(runs) == shards + 1
    assert abs(len(runs[0]) - 400 / WARM_UP) <= 1
    forked, here = [len(r) for r in runs[1:-1]], len(runs[-1])
    assert max(forked) - min(forked) <= 1
    assert abs(here / (sum(forked) / len(forked)) - HERE_SHARE) < 0.05


def test_cut_by_shares():
    keys = [str(i) for i in range(100)]
    assert [len(r) for r in cut(keys, [1] * 100, [1.0, 3.0])] == [25, 75]
    assert [len(r) for r in cut(keys, [1] * 100, 4)] == [25, 25, 25, 25]
    assert [len(r) for r in cut(keys[:2], [1, 1], 3)] == [1, 1]  # never an empty run


def test_with_many_processes_the_run_before_the_fork_is_a_share_like_the_others():
    runs = _runs_of(16, 340)
    assert len(runs) == 17 and len(runs[0]) == 20
    forked = [len(r) for r in runs[1:-1]]
    assert max(forked) - min(forked) <= 1
    assert abs(len(runs[-1]) / (sum(forked) / len(forked)) - HERE_SHARE) < 0.1


@pytest.mark.skipif(not fanout.can_fork(), reason="needs fork (POSIX)")
def test_on_two_cores_both_rounds_are_spread_and_give_the_serial_contexts():
    """With two pass processes the second round (the calls asked again with what call sites
    hand) is forked too, after a first run here; the contexts are the serial pass's."""
    fans: list[int] = []

    def fan(func, parts, meanwhile=None):
        fans.append(len(parts))
        return fanout.fork_map(func, parts, here=True, meanwhile=meanwhile)

    summaries = [compact(extract_file(s.path, s.root, s.relpath, s.module, 10**6))
                 for s in discover(SAMPLE / "src")]
    serial = Project(summaries, {}).contexts()
    sharded = Project(summaries, {}).contexts(fan=fan, shards=2)
    assert repr(sharded) == repr(serial)
    assert fans[:2] == [2, 2], fans  # the first round, then the second, in two processes


def test_without_a_fan_everything_is_one_run():
    seen = []
    fan_runs(None, seen.append, ["a", "b"], {"a": 1, "b": 1}, 4, partial(seen.append, "m"))
    assert seen == [["a", "b"], "m"]
