"""A frozen bf16 base and fp32 adapters in one group: fsdp_ref trains it exactly as torch
trains it and the two-group split, in one all-gather per block through a byte buffer,
with the same bytes on the wire as two groups (and as torch). Trainable parameters of
two dtypes in one group, which torch refuses, are in ``tests/fsdp/test_validation.py``."""

from __future__ import annotations

from tests.fsdp.common import assert_reports_ok

WORLD = 2
# Bytes one rank contributes per block, counted from the model (not from the code):
# base weight 32x32 and bias 32 in bf16, adapters 4x32 and 32x4 in fp32, halved by the
# shard; the reduce-scatter carries only the trainable adapters. (An all-gather output
# holds every rank's bytes, a reduce-scatter output one rank's.)
BASE_BYTES = (32 * 32 + 32) * 2 // WORLD
ADAPTER_BYTES = (4 * 32 + 32 * 4) * 4 // WORLD


def test_mixed_group_matches_two_groups(pool2):
    results = pool2.run("tests.extensions.scenarios_mixed:mixed_group", steps=3)
    assert_reports_ok(results)
    for r in results:
        err = r["info"]["torch_err"]
        assert err is not None and "uniform original parameter dtype" in err["msg"], err
        step = r["info"]["steady_step"]
        one = [c for c in step["ref_one"] if c[0] == "AG"]
        assert one == [c for c in step["torch_one"] if c[0] == "AG"]
        two = [c for c in step["ref_two"] if c[0] == "AG"]
        # Two blocks, each unsharded in forward and again in backward.
        assert len(one) == 4 and len(two) == 8, (one, two)
        assert {c[1] for c in one} == {"torch.uint8"}, one
        assert all(c[2] == WORLD * (BASE_BYTES + ADAPTER_BYTES) for c in one), one
        assert sum(c[2] for c in one) == sum(c[2] for c in two)
        for run in step:
            rs = [c for c in step[run] if c[0] == "RS"]
            assert rs and all(c == ("RS", "torch.float32", ADAPTER_BYTES) for c in rs), (
                run, rs)
