"""Self-tests of the multi-rank harness (tests/dist_harness.py): results and kwargs come
back per rank, a raising rank's traceback becomes the failure, blocked/hung/crashed
ranks never hang the suite, the pool restarts after them, workers die with their parent,
and a broken FSDP setup makes the parity checks fail (negative control)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.dist_harness import PoolDied, RankError, ScenarioTimeout, WorkerPool
from tests.fsdp.common import assert_reports_ok

H = "tests.fsdp.scenarios_harness:"


def test_results_and_kwargs_per_rank(pool):
    results = pool.run(H + "echo", a=1, b=[2, 3])
    assert [r["rank"] for r in results] == list(range(pool.world_size))
    assert all(r["world_size"] == pool.world_size for r in results)
    assert all(r["kwargs"] == {"a": 1, "b": [2, 3]} for r in results)
    expected_sum = sum(range(pool.world_size))
    assert all(r["sum"] == expected_sum for r in results)
    assert all(r["threads"] == 1 for r in results)
    assert len({r["pid"] for r in results}) == pool.world_size


def test_all_ranks_raise_keeps_pool(pool2):
    starts = pool2.starts
    with pytest.raises(RankError, match="deliberate failure on rank 0") as exc:
        pool2.run(H + "raise_on", bad_rank=None)
    assert exc.value.exc_type == "ValueError"
    assert "Traceback" in exc.value.traceback
    assert pool2.run(H + "echo")[0]["sum"] == 1.0
    assert pool2.starts == starts, "a symmetric failure should not restart the pool"


def test_one_rank_raises_others_blocked(pool2):
    starts = pool2.starts
    t0 = time.monotonic()
    with pytest.raises(RankError, match="deliberate failure on rank 1") as exc:
        pool2.run(H + "raise_on", bad_rank=1)
    assert exc.value.rank == 1
    assert "blocked in a collective" in str(exc.value)
    assert time.monotonic() - t0 < 30
    assert pool2.run(H + "echo")[1]["sum"] == 1.0
    assert pool2.starts == starts + 1


def test_timeout_kills_and_restarts(pool2):
    starts = pool2.starts
    with pytest.raises(ScenarioTimeout, match="did not answer"):
        pool2.run(H + "sleep", seconds=60, timeout_s=2)
    assert pool2.run(H + "echo")[0]["world_size"] == 2
    assert pool2.starts == starts + 1


def test_crashed_rank(pool2):
    with pytest.raises(PoolDied, match="died"):
        pool2.run(H + "die", bad_rank=0)
    assert pool2.run(H + "echo")[0]["sum"] == 1.0


def test_unpicklable_result(pool2):
    with pytest.raises(RankError, match="could not send the result"):
        pool2.run(H + "unpicklable")
    assert pool2.run(H + "echo")[0]["sum"] == 1.0


def test_bad_target(pool2):
    with pytest.raises(RankError, match="ModuleNotFoundError|No module named"):
        pool2.run("tests.fsdp.no_such_module:fn")
    with pytest.raises(RankError, match="ValueError"):
        pool2.run("no_colon_here")


_PARENT = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
from tests.dist_harness import WorkerPool
pool = WorkerPool(2)
pool.start()
print(" ".join(str(w.process.pid) for w in pool._workers), flush=True)
time.sleep(120)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purpose
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_workers_die_with_parent():
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parent = subprocess.Popen(
        [sys.executable, "-c", _PARENT, repo], stdout=subprocess.PIPE, text=True
    )
    try:
        line = parent.stdout.readline()
        pids = [int(p) for p in line.split()]
        assert len(pids) == 2, f"unexpected output {line!r}"
        assert all(_alive(p) for p in pids)
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and any(_alive(p) for p in pids):
            time.sleep(0.2)
        assert not any(_alive(p) for p in pids), "workers outlived their parent"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def test_context_manager_closes():
    with WorkerPool(1) as pool:
        assert pool.run(H + "echo")[0]["world_size"] == 1
        procs = [w.process for w in pool._workers]
    assert all(p.poll() is not None for p in procs)


def test_parity_check_detects_unreduced_gradients(pool2):
    """Negative control: with gradient sync switched off for the whole run the grads are
    never reduced, and the reference comparison must report it."""
    results = pool2.run(
        "tests.fsdp.scenarios_parity:vs_reference",
        impl="torch",
        model="mlp",
        steps=1,
        sabotage_no_sync=True,
    )
    with pytest.raises(AssertionError, match="grad"):
        assert_reports_ok(results)
