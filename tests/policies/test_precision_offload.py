"""MixedPrecisionPolicy and CPUOffloadPolicy at 2 and 4 gloo ranks.

Mixed precision: the implementation and torch's ``fully_shard`` train side by side with
the same policy (losses, grads and final params must agree bitwise; a fp32 single-process
reference must stay within the rounding bound of ``tests.tolerance.mixed_precision``), and
every dtype is checked where it is observable: sharded params stay fp32, modules see
``param_dtype`` weights in forward, the all-gather input is ``param_dtype``, the
reduce-scatter input is ``reduce_dtype``, inputs/outputs are cast as configured and the
sharded grads are fp32.
"""

from __future__ import annotations

import pytest

from tests.fsdp.common import assert_reports_ok

SC = "tests.policies.scenarios_precision:"

POLICIES = [
    pytest.param({"param_dtype": "bfloat16", "reduce_dtype": "float32"}, id="bf16_reduce_fp32"),
    pytest.param(
        {"param_dtype": "bfloat16", "reduce_dtype": None, "output_dtype": "float32"},
        id="bf16_reduce_bf16_out_fp32",
    ),
    pytest.param(
        {"param_dtype": "float16", "reduce_dtype": "float32", "cast_forward_inputs": False},
        id="fp16_no_input_cast",
    ),
]


@pytest.mark.parametrize("policy", POLICIES)
def test_mixed_precision(pool2, impl, policy):
    assert_reports_ok(pool2.run(SC + "mixed_precision", impl=impl, **policy))


def test_mixed_precision_ws4(pool4, impl):
    assert_reports_ok(
        pool4.run(SC + "mixed_precision", impl=impl, param_dtype="bfloat16", reduce_dtype="bfloat16")
    )


@pytest.mark.parametrize("ws", [2, 4])
def test_per_group_policies(dist_pools, impl, ws):
    """bf16 blocks (fp32 reduce, fp32 outputs) under an fp32 root/head."""
    assert_reports_ok(dist_pools.get(ws).run(SC + "mixed_precision", impl=impl, per_group=True))


@pytest.mark.parametrize("ws", [1, 2, 4])
def test_cpu_offload(dist_pools, impl, ws):
    """Shards and grads are CPU DTensors; numbers equal no offload and torch with offload
    bitwise (on a CPU mesh offloading copies), and the single-process reference within
    the bound of ``tests.tolerance``."""
    assert_reports_ok(dist_pools.get(ws).run(SC + "cpu_offload", impl=impl))


@pytest.mark.parametrize(
    "kwargs",
    [{"offload": True}, {"hsdp": True}, {"hsdp": True, "offload": True, "per_group": True}],
    ids=["offload", "hsdp", "hsdp_offload_per_group"],
)
def test_mixed_precision_composes(pool4, impl, kwargs):
    """The same checks with CPU offload and/or an HSDP (2, 2) mesh."""
    assert_reports_ok(
        pool4.run(SC + "mixed_precision", impl=impl, param_dtype="bfloat16", reduce_dtype="float32",
                  **kwargs)
    )
