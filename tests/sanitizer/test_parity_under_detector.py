"""The parity scenarios, run under the race detector: zero reports, and the numbers still
match the single-process reference (the detector changes the code path, not the math).

On the GPU path fsdp_ref runs its accelerator code (virtual side streams, events, the
GPU's buffer lifetimes); on the CPU path it keeps gloo's ``Work`` handles, each
asynchronous collective a stream of its own.
"""

from __future__ import annotations

import pytest

from tests.fsdp.common import assert_reports_ok

UNDER = "tests.sanitizer.scenarios:under_detector"
REF = "tests.fsdp.scenarios_parity:vs_reference"
PREC = "tests.policies.scenarios_precision:"
MESH = "tests.policies.scenarios_mesh:"
EXT = "tests.extensions."

CASES = [
    # (id, world size, scenario, kwargs)
    ("reshard_true", 2, REF, {"reshard_after_forward": True}),
    ("reshard_false", 2, REF, {"reshard_after_forward": False}),
    ("reshard_none", 2, REF, {}),
    ("reshard_int2", 4, REF, {"reshard_after_forward": 2}),
    ("explicit_prefetch", 2, REF, {"prefetch": True}),
    ("implicit_prefetch_gpt", 2, REF, {"model": "gpt"}),
    ("accumulate_sync", 2, REF, {"accum": "sync", "microbatches": 2}),
    ("accumulate_no_sync", 2, REF, {"accum": "no_sync", "microbatches": 2}),
    ("accumulate_not_last", 2, REF, {"accum": "no_sync_last", "microbatches": 2}),
    ("recover_after_exception", 2, REF, {"fail_at_step": 1}),
    ("mixed_precision", 2, PREC + "mixed_precision", {"per_group": True}),
    ("cpu_offload", 2, PREC + "cpu_offload", {}),
    ("hsdp_offload_mp", 4, PREC + "mixed_precision",
     {"hsdp": True, "offload": True, "per_group": True}),
    ("hsdp_hook", 4, MESH + "hsdp", {"hook": True}),
    ("hsdp_accumulate", 4, MESH + "hsdp", {"accum": True}),
    ("unshard_async", 2, "tests.policies.scenarios_compose:unshard_handle", {}),
    ("tp_fsdp", 4, "tests.policies.scenarios_tp:train", {"layout": "tp"}),
    ("tp_spmd_mesh", 4, "tests.policies.scenarios_tp:train", {"layout": "spmd"}),
    # the all-gather extension (issue 11): hooks on the copy-in stream and on compute,
    # subclass inner tensors checked through the detector's dispatch
    ("extension_bytes", 2, EXT + "scenarios_subclass:quant_training", {}),
    ("extension_uneven_float8", 2, EXT + "scenarios_subclass:quant_training",
     {"mode": "float8", "rows": 21, "bias": False}),
    ("extension_offload", 2, EXT + "scenarios_subclass:quant_training",
     {"offload": True}),
    ("qlora_nf4", 2, EXT + "scenarios_qlora:qlora_vs_torch", {}),
    ("mixed_dtype_group", 2, EXT + "scenarios_mixed:mixed_group", {}),
]
CPU_PATH = {"reshard_none", "accumulate_no_sync", "recover_after_exception", "cpu_offload",
            "hsdp_accumulate", "unshard_async", "extension_offload", "qlora_nf4"}


def _params():
    for name, ws, target, kwargs in CASES:
        yield pytest.param(ws, target, kwargs, True, id=f"{name}-gpu")
        if name in CPU_PATH:
            yield pytest.param(ws, target, kwargs, False, id=f"{name}-cpu")


@pytest.mark.parametrize(("ws", "target", "kwargs", "gpu_path"), list(_params()))
def test_parity_without_races(dist_pools, ws, target, kwargs, gpu_path):
    kwargs = {"steps": 2, **kwargs} if target == REF else kwargs
    results = dist_pools.get(ws).run(
        UNDER, target=target, gpu_path=gpu_path, impl="fsdp_ref", **kwargs
    )
    assert_reports_ok([res["result"] for res in results])
    for res in results:
        assert res["races"] == [], "\n".join(res["reports"])


def test_unshard_async_op_setting(pool2):
    """``_set_unshard_async_op(True)`` (upstream's private switch) issues the forward and
    backward all-gathers with ``async_op=True`` and waits on their ``Work``; still race-free."""
    target = "tests.sanitizer.scenarios:unshard_async_setting"
    for on, off in zip(pool2.run(target, enable=True), pool2.run(target, enable=False)):
        assert on["races"] == [] and off["races"] == []
        assert off["work_waits"] == 0
        assert on["work_waits"] >= 2 * 4  # 4 groups, every step, forward at least
