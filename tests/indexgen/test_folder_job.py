"""The folder pages as one job (:mod:`indexgen.run.folder_job`): on two cores the build forks
it once the call edges are found, where the calling process works alone
(:meth:`indexgen.run.plan.Plan.relate`, the ``after_edges`` hook of
:func:`indexgen.analyze.assemble.contexts`)."""

from __future__ import annotations

import os
import shutil

import pytest
from ig_helpers import project_of, read_tree, sample_config
from indexgen import build
from indexgen.run import fanout, plan
from indexgen.run.folder_job import FolderJob

FILES = {
    "pkg/__init__.py": "",
    "pkg/a.py": "def helper():\n    return 1\n\n\ndef user():\n    return helper()\n",
}


def test_after_edges_runs_once_between_the_call_edges_and_the_finished_contexts():
    events: list[str] = []

    def seal(key, ctx):
        events.append("sealed " + key)
        return ctx

    contexts = project_of(FILES).contexts(seal=seal, after_edges=lambda: events.append("edges"))
    assert events[0] == "edges" and events.count("edges") == 1
    assert sorted(events[1:]) == sorted("sealed " + k for k in contexts)
    # the edges were found before it: user's call of helper is in its context
    calls = contexts["src/pkg/a.py"].calls
    assert [e.label for out in calls.values() for e in out] == ["helper"]


@pytest.mark.skipif(not fanout.can_fork(), reason="needs fork (POSIX)")
def test_a_forked_job_runs_once_in_another_process():
    job = FolderJob(lambda: {"pid": (str(os.getpid()), "missing")})
    job.fork()
    job.fork()  # started already: no second process
    made = job.result()
    assert made["pid"][0] != str(os.getpid())
    here = FolderJob(lambda: {"pid": (str(os.getpid()), "missing")})
    assert here.result()["pid"][0] == str(os.getpid())  # never forked: made by result()


@pytest.mark.skipif(not fanout.can_fork(), reason="needs fork (POSIX)")
@pytest.mark.parametrize("shards, forked", [(1, 0), (2, 1), (3, 1)])
def test_the_build_forks_its_folder_pages_on_two_cores_and_more(sample, monkeypatch, shards,
                                                                forked):
    config = sample_config(sample)
    build(config)
    serial = read_tree(config.out)
    shutil.rmtree(config.out)
    forks: list[int] = []

    class Counted(FolderJob):
        def fork(self):
            forks.append(1)
            super().fork()

    monkeypatch.setattr(plan, "FolderJob", Counted)
    monkeypatch.setattr(plan.fanout, "shard_count", lambda jobs, cores=None: shards)
    build(sample_config(sample, jobs=2))
    assert len(forks) == forked * (2 if shards > 2 else 1)  # from the start and after edges
    assert read_tree(config.out) == serial
