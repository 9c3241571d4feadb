"""Memory accounting of default ``fully_shard`` through the stream-protocol recorder.

With default settings the root keeps its parameters unsharded from forward to the end of
backward and every block reshards after forward, so at most two groups (the root and the
block computing) hold unsharded parameters at once in forward. In backward the root
stays unsharded until the final callback; a prefetched block's all-gather is only copied
out when its backward starts, after the block before it resharded in its post-backward,
so the bound is two there as well. After the optimizer step nothing unsharded may remain.
"""

from __future__ import annotations

import pytest

TARGET = "tests.bench.scenarios_memory:unsharded_groups"


@pytest.fixture(scope="module")
def results(dist_pools):
    return dist_pools.get(2).run(TARGET, n_layers=4)


def test_at_most_two_groups_unsharded_in_forward(results):
    for rank, r in enumerate(results):
        assert r["peak"]["forward"] <= 2, (rank, r["peak_groups"]["forward"])
        # the bound is reached: the root and one block
        assert r["peak"]["forward"] == 2, (rank, r["peak_groups"])


def test_at_most_two_groups_unsharded_in_backward(results):
    for rank, r in enumerate(results):
        assert r["peak"]["backward"] <= 2, (rank, r["peak_groups"]["backward"])


def test_nothing_unsharded_after_the_step(results):
    for rank, r in enumerate(results):
        assert r["live_at_end"] == [], rank
        held = {name: size for name, size in r["unsharded_storage_bytes"].items() if size}
        assert held == {}, rank


def test_recorder_saw_the_whole_protocol(results):
    kinds = set(results[0]["kinds"])
    assert {"copy_in", "collective", "copy_out", "forward", "backward", "free"} <= kinds


def test_no_all_gather_output_held_after_the_step(results):
    """The final callback drops the last all-gather output (it used to stay alive until
    the next step's first copy-in)."""
    for rank, r in enumerate(results):
        assert r["pending_all_gather_bytes"] == 0, rank
