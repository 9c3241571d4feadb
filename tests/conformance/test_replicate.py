"""``replicate`` (issue 23 item 2) against torch's ``replicate_with_fsdp.replicate``,
``DistributedDataParallel`` and the unsharded model, at 1, 2 and 4 gloo ranks.

Every comparison is per rank: losses (averaged over ranks) and full parameters after
SGD steps; bitwise against torch, within the bound of ``tests.tolerance`` against DDP and the
unsharded fp32 model, and within bf16 rounding of it where parameters are gathered in
bf16.
"""

from __future__ import annotations

import pytest
import torch

from tests.conformance import harness

S = "tests.conformance.scenarios_replicate:"
BF16 = {"mixed": torch.bfloat16}


def test_replicate_per_block_matches_torch_and_unsharded(pool):
    """One group per block and the root: same losses, parameters, ``Replicate()``
    placements and classes (instances of ReplicateModule and FSDPModule) as torch."""
    results = harness.run(pool, S + "replicated", libs=("torch", "fsdp_ref", "plain"))
    harness.assert_same_results(results, "torch", "fsdp_ref")
    harness.assert_same_results(results, "plain", "fsdp_ref", keys=("losses", "params"))


def test_replicate_root_matches_ddp(pool):
    """The root replicated alone: torch, DDP and fsdp_ref train identically."""
    results = harness.run(pool, S + "replicated", libs=("torch", "ddp", "fsdp_ref"),
                          per_block=False)
    harness.assert_same_results(results, "torch", "fsdp_ref")
    harness.assert_same_results(results, "ddp", "fsdp_ref", keys=("losses", "params"))


@pytest.mark.parametrize("ws", [2, 4], ids=["ws2", "ws4"])
def test_replicate_mixed_precision_matches_torch(pool):
    """bf16 parameters, fp32 reduction: the same numbers as torch's replicate (exactly
    the same ops), and the unsharded fp32 model within bf16 rounding."""
    results = harness.run(pool, S + "replicated", libs=("torch", "fsdp_ref", "plain"), mp=True)
    harness.assert_same_results(results, "torch", "fsdp_ref")
    harness.assert_same_results(results, "plain", "fsdp_ref", keys=("losses", "params"),
                                **BF16)


@pytest.mark.parametrize("ws", [2, 4], ids=["ws2", "ws4"])
@pytest.mark.parametrize("root", ["replicate", "fully_shard"])
@pytest.mark.parametrize("mp", [False, True], ids=["fp32", "bf16"])
def test_fully_shard_and_replicate_composed(pool, root, mp):
    """Blocks given to one API, the root to the other, as torch allows: classes,
    placements, losses and parameters as torch's; fp32 also as the unsharded model."""
    results = harness.run(pool, S + "composed", libs=("torch", "fsdp_ref", "plain"),
                          root=root, mp=mp)
    harness.assert_same_results(results, "torch", "fsdp_ref")
    harness.assert_same_results(results, "plain", "fsdp_ref", keys=("losses", "params"),
                                **(BF16 if mp else {}))


@pytest.mark.parametrize("ws", [2], ids=["ws2"])
@pytest.mark.parametrize("gpu_path", [True, False], ids=["gpu_path", "cpu_path"])
@pytest.mark.parametrize(("scenario", "kwargs"), [
    ("replicated", {}), ("composed", {"root": "replicate"}),
    ("composed", {"root": "fully_shard", "mp": True})], ids=["replicate", "fs_in_rep", "rep_in_fs"])
def test_replicate_under_the_race_detector(pool, gpu_path, scenario, kwargs):
    """The stream protocol on replicate's path (and composed with fully_shard): zero races
    on the accelerator code path (virtual streams) and on the CPU one, same numbers."""
    results = harness.run(pool, "tests.conformance.harness:under_detector",
                          libs=("plain", "fsdp_ref"), target=S + scenario,
                          gpu_path=gpu_path, **kwargs)
    for per_lib in results:
        races = harness.result_of(per_lib["fsdp_ref"], "fsdp_ref", 0)["races"]
        assert races == [], races
    keys = ("losses", "params")
    harness.assert_same_results(results, "plain", "fsdp_ref", keys=keys,
                                **(BF16 if kwargs.get("mp") else {}))
