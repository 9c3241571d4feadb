"""Reductions divide where torch 2.13's do: the same gradients and the same values seen
by an all-reduce hook, bitwise, for fp32/bf16 (torch averages in the collective), fp16
and forced sums (torch divides before and after a sum), a divide factor equal to the
reduce-scatter group's size, and HSDP (``fsdp_ref.division``)."""

from __future__ import annotations

import pytest

from tests.conformance import harness

S = "tests.conformance.scenarios_division:hooked"


@pytest.mark.parametrize("ws", [2], ids=["ws2"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("options", [{}, {"force_sum": True}, {"factor": 2.0}],
                         ids=["average", "force-sum", "factor=group"])
def test_hook_sees_what_torch_shows_it(pool, dtype, options):
    results = harness.run(pool, S, dtype=dtype, **options)
    harness.assert_same_results(results)
    seen = harness.result_of(results[0]["fsdp_ref"], "fsdp_ref", 0)["seen"]
    assert len(seen) == 4, len(seen)  # two groups, two steps


@pytest.mark.parametrize("ws", [4], ids=["ws4"])
@pytest.mark.parametrize("force_sum", [False, True], ids=["average", "force-sum"])
def test_hook_after_the_hsdp_all_reduce_sees_what_torch_shows_it(pool, force_sum):
    harness.assert_same_results(harness.run(pool, S, hsdp=True, force_sum=force_sum))
