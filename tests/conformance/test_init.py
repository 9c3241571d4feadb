"""Meta-device initialisation (issue 23 item 5): rank 0's full state dict broadcast with
DCP into a sharded meta-initialised model whose parameters and buffers have every shape
(0-dim and 1-element included), all or nothing; and a parameter replaced after
``fully_shard`` is the one sharded and trained."""

from __future__ import annotations

import pytest

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


@pytest.mark.parametrize("ws", [2, 4], ids=["ws2", "ws4"])
def test_broadcast_from_rank0_is_all_or_nothing(pool):
    """A wrong-shaped buffer: torch raises after DCP wrote the good entries into the live
    shards; fsdp_ref raises torch's error (then its own) before anything was written."""
    for rank, per_lib in enumerate(harness.run(pool, S + "broadcast_load", bad=True)):
        ours = harness.result_of(per_lib["fsdp_ref"], "fsdp_ref", rank)
        theirs = harness.result_of(per_lib["torch"], "torch", rank)
        changed = [k for k, v in ours["state"].items() if v.abs().sum() > 0]
        assert ours["raised"] and not changed, f"rank {rank}: refused after writing {changed}"
        assert ours["msg"].startswith(theirs["msg"]), (ours["msg"], theirs["msg"])
        assert [k for k, v in theirs["state"].items() if v.abs().sum() > 0], \
            "torch no longer writes before it raises: update docs/design/checkpointing.md"


@pytest.mark.parametrize("ws", [2, 4], ids=["ws2", "ws4"])
def test_parameter_replaced_before_first_forward(pool):
    results = harness.run(pool, S + "meta_replaced_param", libs=("torch", "fsdp_ref", "plain"))
    harness.assert_same_results(results, "torch", "fsdp_ref")
    harness.assert_same_results(results, "plain", "fsdp_ref", keys=("losses", "params"))


@pytest.mark.parametrize("ws", [2], ids=["ws2"])
def test_adopted_parameter_stays_with_its_group_when_a_parent_is_sharded(pool):
    """A parameter adopted by ``unshard()`` before the parent's ``fully_shard`` is marked
    as managed like the one it replaced: the parent leaves it alone and training equals
    the plain model's."""
    results = harness.run(pool, S + "adopted_then_parent_sharded", libs=("fsdp_ref", "plain"))
    harness.assert_same_results(results, "plain", "fsdp_ref", keys=("losses", "params"))


@pytest.mark.parametrize("ws", [2], ids=["ws2"])
def test_replacement_that_cannot_be_adopted_is_refused(pool):
    for rank, per_lib in enumerate(harness.run(pool, S + "replaced_by_plain_tensor",
                                               libs=("fsdp_ref",))):
        status, err = per_lib["fsdp_ref"]
        assert status == "raised" and err["type"] == "RuntimeError", (rank, err)
        assert err["msg"].startswith("scale of FSDPScaledBlock was replaced by a Parameter"), err


@pytest.mark.parametrize("ws", [2, 4], ids=["ws2", "ws4"])
def test_meta_on_some_ranks_raises_everywhere(pool):
    """Rank 0 materialised, the others did not: every rank raises (none waits in the
    first all-gather), naming the parameters that differ."""
    for rank, per_lib in enumerate(harness.run(pool, S + "meta_on_some_ranks",
                                               libs=("fsdp_ref",), timeout_s=60)):
        status, err = per_lib["fsdp_ref"]
        assert status == "raised" and "ranks built different models" in err["msg"], (rank, err)
        assert "0.proj.weight" in err["msg"] and "on meta" in err["msg"], err
