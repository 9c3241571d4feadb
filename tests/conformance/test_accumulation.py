"""Gradient accumulation with sync off is torch's, bitwise, under bf16/fp32 mixed precision:
gradients summed in ``reduce_dtype`` after each backward that does not reduce, with CPU
offload, HSDP (all-reduce on or off), ``reshard_after_backward=False`` and
``set_reduce_scatter_unused_params`` (issue 30 item 1). The scenarios are in
``scenarios_accumulation``."""

from __future__ import annotations

import pytest

from tests.conformance import harness

S = "tests.conformance.scenarios_accumulation:accumulate"


@pytest.mark.parametrize("ws", [2], ids=["ws2"])
@pytest.mark.parametrize("microbatches", [1, 2, 8])
def test_bf16_accumulation_equals_torch(pool, microbatches):
    """The issue's reproduction: sync off, then on; 1, 2 and 8 microbatches."""
    results = harness.run(pool, S, microbatches=microbatches)
    harness.assert_same_results(results)
    if microbatches > 1:  # what is held between backwards: an fp32 accumulator, no bf16 grad
        held = harness.result_of(results[0]["fsdp_ref"], "fsdp_ref", 0)["held"]
        assert all(acc is not None and acc[0] == "torch.float32" and not grad
                   for step in held for _, acc, grad in step), held


@pytest.mark.parametrize("ws", [2], ids=["ws2"])
@pytest.mark.parametrize("options", [
    {"offload": True},
    {"reshard_after_backward": False},
], ids=["offload", "keep-unsharded"])
def test_bf16_accumulation_with_options_equals_torch(pool, options):
    harness.assert_same_results(harness.run(pool, S, microbatches=3, **options))


@pytest.mark.parametrize("ws", [4], ids=["ws4"])
@pytest.mark.parametrize("all_reduce_every", [True, False], ids=["all-reduce", "no-all-reduce"])
def test_bf16_accumulation_under_hsdp_equals_torch(pool, all_reduce_every):
    harness.assert_same_results(harness.run(pool, S, microbatches=3, hsdp=True,
                                            all_reduce_every=all_reduce_every))


@pytest.mark.parametrize("ws", [2], ids=["ws2"])
def test_bf16_accumulation_with_unused_params(pool):
    """``set_reduce_scatter_unused_params(True)``, sync off, bf16/fp32: torch 2.13 raises an
    internal AssertionError (the unused layer's zero gradient is bf16, the others were
    accumulated in fp32); fsdp_ref reduces all of them in fp32, deliberately. Truth: torch
    without the unused layer (bitwise), and a zero gradient for that layer."""
    refused = harness.run(pool, "tests.conformance.scenarios_accumulation:accumulate_unused",
                          libs=("torch", "fsdp_ref"))
    for per_lib in refused:
        status, err = per_lib["torch"]
        assert status == "raised" and "expects uniform gradient dtype" in err["msg"], (
            "torch 2.13 no longer refuses: compare fsdp_ref with torch directly", err)
    truth = harness.run(pool, "tests.conformance.scenarios_accumulation:"
                        "accumulate_without_unused", libs=("torch",))
    for rank, (ours, theirs) in enumerate(zip(refused, truth)):
        ours = harness.result_of(ours["fsdp_ref"], "fsdp_ref", rank)
        theirs = harness.result_of(theirs["torch"], "torch", rank)
        start = theirs.pop("start")
        unused = ours.pop("unused")
        problems = harness.differences(theirs, ours, "", 0.0, 0.0)
        problems += harness.differences(start, unused["params"], ".unused", 0.0, 0.0)
        assert unused["grads"] and all(not g.any() for g in unused["grads"].values()), unused
        assert not problems, f"rank {rank}: " + "\n".join(problems[:20])
