"""Debug mode: ranks that diverge or stall get a named error on every rank, within the
watchdog timeout, instead of a gloo abort or a hang (2 gloo ranks; HSDP at 4).

The watchdog timeout here is 3 s; the process group's own timeout in the worker pool is
90 s (30 minutes by default), so "within the timeout plus slack" means "no hang".
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

S = "tests.reliability.scenarios_debug:"
WATCHDOG_S = 3.0
SLACK_S = 15.0  # a loaded machine; still far below the process group's 90 s


def _err(res, type_name):
    assert res["err"] is not None, f"no error: {res}"
    assert res["err"]["type"] == type_name, res["err"]
    return res["err"]["msg"]


def test_one_rank_raises_and_stops(pool2):
    """Rank 1 raises in forward and runs no more FSDP collectives: rank 0 is told, within
    the watchdog time, where it waits and what rank 1 reached last."""
    r0, r1 = pool2.run(S + "one_rank_raises", watchdog_s=WATCHDOG_S, then="stop")
    assert r1["err"]["msg"] == "injected failure in ResBlock.forward"
    msg = _err(r0, "CollectiveTimeoutError")
    assert "rank 0 waited" in msg and "ranks [1] did not reach it" in msg
    assert "in all_gather #" in msg and "of group 'blocks.2'" in msg
    assert "Last FSDP collective each rank reached:" in msg and "  rank 1: all_gather #" in msg
    assert WATCHDOG_S <= r0["elapsed"] < WATCHDOG_S + SLACK_S


def test_one_rank_raises_and_continues(pool2):
    """Rank 1 catches its exception and starts the next step: both ranks raise a
    mismatch naming what each was about to run."""
    r0, r1 = pool2.run(S + "one_rank_raises", watchdog_s=WATCHDOG_S, then="continue")
    assert r1["err"]["msg"] == "injected failure in ResBlock.forward"
    for msg in (_err(r0, "CollectiveMismatchError"), _err(r1["next"], "CollectiveMismatchError")):
        assert "rank 0 is about to run all_gather" in msg and "'blocks.2' (backward)" in msg
        assert "rank 1 is about to run all_gather" in msg and "'root' (forward)" in msg


def test_different_models_named_on_every_rank(pool2):
    for res in pool2.run(S + "different_models", impl="fsdp_ref", debug=True):
        msg = _err(res, "CollectiveMismatchError")
        assert "rank 0 is about to run all_gather #1 of group 'blocks.0' (forward)" in msg
        assert "rank 1 is about to run all_gather #1 of group 'blocks.2' (forward)" in msg


@pytest.mark.parametrize("impl", ["fsdp_ref", "torch"])
def test_different_models_without_debug_train_silently(pool2, impl):
    """Same shapes in another order: nothing detects it without debug mode (the fault
    table's "trains on silently")."""
    for res in pool2.run(S + "different_models", impl=impl, debug=False):
        assert res["err"] is None


def test_different_reshard_settings_named(pool2):
    """One rank all-gathers in backward, the other goes straight to its reduce-scatter:
    without debug mode, gloo aborts the process on the size mismatch."""
    for res in pool2.run(S + "different_reshard"):
        msg = _err(res, "CollectiveMismatchError")
        assert "rank 0 is about to run all_gather" in msg and "(pre_backward)" in msg
        assert "rank 1 is about to run reduce_scatter" in msg


def test_stalled_peer_named_then_refused(pool2):
    """Rank 1 sleeps 2x the watchdog time: rank 0 reports it within the watchdog time;
    rank 1, when it arrives, raises instead of starting a collective nobody joins."""
    stall = 2 * WATCHDOG_S
    r0, r1 = pool2.run(S + "stalled_peer", watchdog_s=WATCHDOG_S, stall_s=stall)
    msg0 = _err(r0, "CollectiveTimeoutError")
    assert "ranks [1] did not reach it" in msg0 and "  rank 1: reduce_scatter #" in msg0
    assert WATCHDOG_S <= r0["elapsed"] < WATCHDOG_S + SLACK_S
    msg1 = _err(r1, "CollectiveTimeoutError")
    assert "after rank 0 gave up waiting for it" in msg1
    assert stall <= r1["elapsed"] < stall + SLACK_S


def _same_shards(a, b):
    assert a.keys() == b.keys() and len(a) == 22
    for key in a:
        assert a[key] == b[key], f"{key} differs bit for bit with debug mode on"


def test_debug_mode_changes_nothing_in_a_correct_program(pool2):
    for off, on in zip(
        pool2.run(S + "clean_training", debug=False), pool2.run(S + "clean_training", debug=True)
    ):
        _same_shards(off, on)


def test_debug_mode_hsdp_all_reduce(pool4):
    """HSDP (2 replicas x 2 shards): reduce-scatter and all-reduce on different process
    groups, each with its own sequence numbers; no false alarm, same numbers."""
    for off, on in zip(
        pool4.run(S + "clean_training", debug=False, hsdp=True),
        pool4.run(S + "clean_training", debug=True, hsdp=True),
    ):
        _same_shards(off, on)


def test_environment_variable_and_off_path():
    """``FSDP_REF_DEBUG=1`` turns it on at import with ``FSDP_REF_DEBUG_TIMEOUT_S``; off,
    the hook returns before touching its group argument."""
    code = (
        "import fsdp_ref.debug as d; print(d.is_enabled(), d._debug.timeout_s); "
        "d.set_debug(False); d.before_collective('all_gather', object(), 'x'); print('ok')"
    )
    env = dict(os.environ, FSDP_REF_DEBUG="1", FSDP_REF_DEBUG_TIMEOUT_S="7.5")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.split() == ["True", "7.5", "ok"], out.stderr
    env.pop("FSDP_REF_DEBUG")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.split()[0] == "False", out.stderr


def test_explicit_phase_is_part_of_the_fingerprint(pool2):
    for res in pool2.run(S + "explicit_phase"):
        msg = _err(res, "CollectiveMismatchError")
        assert "rank 0 is about to run all_gather #0 of group 'blocks.0' (pre_backward)" in msg
        assert "rank 1 is about to run all_gather #0 of group 'blocks.0' (forward)" in msg
