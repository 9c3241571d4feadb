"""Post-accumulate-grad hooks run on sharded parameters as torch runs them: an optimizer
stepped in backward trains like torch's, bitwise (issue 30 item 5)."""

from __future__ import annotations

import pytest

from tests.conformance import harness

S = "tests.conformance.scenarios_grad_hooks:optimizer_in_backward"


@pytest.mark.parametrize("ws", [2], ids=["ws2"])
@pytest.mark.parametrize("options", [{}, {"offload": True}, {"accumulate": 2}],
                         ids=["plain", "offload", "accumulate"])
def test_optimizer_in_backward_equals_torch(pool, options):
    results = harness.run(pool, S, **options)
    harness.assert_same_results(results)
    ours = harness.result_of(results[0]["fsdp_ref"], "fsdp_ref", 0)
    # Every parameter stepped once per step, with its gradient, then zeroed by its hook.
    per_step = [c for c in ours["calls"] if c[0] != "end of step"]
    assert len(per_step) == 3 * 6 and all(had for _, had in per_step), ours["calls"]
    assert ours["grads_left"] == []
