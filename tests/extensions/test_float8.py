"""torchao float8 training with float8 all-gather at 2 gloo ranks (it runs on the CPU):
fsdp_ref against torch's ``fully_shard`` in the same process."""

from __future__ import annotations

from tests.fsdp.common import assert_reports_ok

SCEN = "tests.extensions.scenarios_float8:float8_vs_torch"


def test_float8_all_gather_matches_upstream(pool2):
    """With biases every group holds float8 weights and fp32 biases: one byte all-gather
    under both, identical losses and shards, the weights still float8 wrappers."""
    results = pool2.run(SCEN, bias=True, steps=3)
    assert_reports_ok(results)
    for r in results:
        assert r["info"]["torch_err"] is None
        assert r["info"]["gather_dtypes"] == ["torch.uint8"]
        losses = r["info"]["losses"]
        assert losses[-1] < losses[0], losses


def test_float8_only_groups_travel_as_bytes(pool2):
    """Without biases a group's only input is float8, which gloo refuses: torch's
    fully_shard fails on gloo, fsdp_ref moves the same bits as uint8 and trains."""
    results = pool2.run(SCEN, bias=False, steps=3)
    assert_reports_ok(results)
    for r in results:
        err = r["info"]["torch_err"]
        assert err is not None and "Invalid scalar type" in err["msg"], err  # gloo's words
        assert r["info"]["gather_dtypes"] == ["torch.uint8"], r["info"]
        losses = r["info"]["losses"]
        assert losses[-1] < losses[0], losses
