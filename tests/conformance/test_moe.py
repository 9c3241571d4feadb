"""Per-parameter meshes through ``shard_placement_fn`` (issue 23 item 1), what passes today.

fsdp_ref accepts a ``ShardPlacementResult`` (its own or torch's, with torch's
``FSDPMeshInfo``) and shards on the placement it names. A placement result on the very
mesh given to ``fully_shard`` (another mesh-info object for the same process group) is
refused by torch ("Params sharing the same process group must use the same FSDPMeshInfo
object") and accepted by fsdp_ref: trained against the one-process model here. Expert
weights on a mesh of their own form a second group of the block, compared with torch's.
"""

from __future__ import annotations

import pytest

from tests.conformance import harness

MOE = "tests.conformance.scenarios_moe:moe"


@pytest.mark.parametrize("ws", [2, 4], ids=["ws2", "ws4"])
@pytest.mark.parametrize("result_cls", ["lib", "torch", "mesh"])
def test_placement_result_on_the_fully_shard_mesh(pool, result_cls):
    """Experts placed ``Shard(1)`` through a placement result on fully_shard's own mesh:
    fsdp_ref trains like the unsharded model and the experts are ``Shard(1)``; torch
    refuses the second mesh-info object for the same process group."""
    results = harness.run(pool, MOE, libs=("torch", "fsdp_ref", "plain"), experts="same",
                          result_cls=result_cls, dim=1)
    harness.assert_same_results(results, "plain", "fsdp_ref", keys=("losses", "params"))
    for per_lib in results:
        layout = harness.result_of(per_lib["fsdp_ref"], "fsdp_ref", 0)["layout"]
        assert layout and {p for _, _, p in layout.values()} == {"(Shard(dim=1),)"}, layout
        status, info = per_lib["torch"]
        assert status == "raised" and info["type"] == "ValueError", per_lib["torch"]
        assert info["msg"].startswith("Params sharing the same process group must use the same")


@pytest.mark.parametrize("ws", [2, 4], ids=["ws2", "ws4"])
@pytest.mark.parametrize("result_cls", ["lib", "torch"])
@pytest.mark.parametrize("experts", ["efsdp", "hsdp"])
def test_moe_experts_on_their_own_mesh(pool, experts, result_cls):
    """Expert weights on a mesh of their own (``efsdp``, or HSDP over ``(ep, efsdp)``):
    a second group in the block, all-gathered and reduced over that mesh; the same
    numbers as torch's, and as the unsharded model's when the experts are reduced over
    every rank."""
    results = harness.run(pool, MOE, libs=("torch", "fsdp_ref", "plain"), experts=experts,
                          result_cls=result_cls)
    harness.assert_same_results(results, "torch", "fsdp_ref")
    if experts == "hsdp":  # experts reduced over every rank: the unsharded model's numbers
        harness.assert_same_results(results, "plain", "fsdp_ref", keys=("losses", "params"))


@pytest.mark.parametrize("ws", [4], ids=["ws4"])
def test_moe_experts_on_their_own_mesh_mixed_precision(pool):
    """The same with a bf16 gather and an fp32 reduction."""
    results = harness.run(pool, MOE, libs=("torch", "fsdp_ref"), experts="hsdp", mp=True)
    harness.assert_same_results(results, "torch", "fsdp_ref")


@pytest.mark.parametrize("ws", [4], ids=["ws4"])
@pytest.mark.parametrize("gpu_path", [True, False], ids=["gpu_path", "cpu_path"])
def test_moe_under_the_race_detector(pool, gpu_path):
    """Two groups per block on two meshes (dense over dp, experts HSDP over
    ``(ep, efsdp)``) run the stream protocol without a race, on the accelerator code path
    (virtual streams) and on the CPU one, and train like the unsharded model."""
    results = harness.run(pool, "tests.conformance.harness:under_detector",
                          libs=("plain", "fsdp_ref"), target=MOE, gpu_path=gpu_path,
                          experts="hsdp")
    for per_lib in results:
        races = harness.result_of(per_lib["fsdp_ref"], "fsdp_ref", 0)["races"]
        assert races == [], races
    harness.assert_same_results(results, "plain", "fsdp_ref", keys=("losses", "params"))
