"""Meta-device initialisation (issue 23 item 5), what passes today: rank 0's full state
dict broadcast with DCP into a sharded meta-initialised model whose parameters and
buffers have every shape (0-dim and 1-element included). Replacing a parameter after
``fully_shard`` and the all-or-nothing broadcast wait in ``pending.py``."""

from __future__ import annotations

from tests.conformance import harness

S = "tests.conformance.scenarios_init:"


def test_broadcast_from_rank0_every_shape(pool):
    results = harness.run(pool, S + "broadcast_load", libs=("torch", "fsdp_ref", "plain"))
    harness.assert_same_results(results, "torch", "fsdp_ref")
    harness.assert_same_results(results, "plain", "fsdp_ref", rtol=0, atol=0)  # copies
    state = harness.result_of(results[0]["fsdp_ref"], "fsdp_ref", 0)
    assert {k: tuple(v.shape) for k, v in state.items()} == {
        "w": (5, 3), "b": (3,), "one": (1,), "one_2d": (1, 1), "scalar": (),
        "step": (), "single": (1,), "table": (4, 2)}
    assert all(v.abs().sum() > 0 for v in state.values()), "a tensor kept its zeros"
