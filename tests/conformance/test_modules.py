"""World size 1, containers with a forward, in-place ops on outputs (issue 23 items 3, 4
and 9); a group's parameter order (issue 30)."""

from __future__ import annotations

import pytest

from tests.conformance import harness

S = "tests.conformance.scenarios_modules:"


@pytest.mark.parametrize("ws", [1], ids=["ws1"])
@pytest.mark.parametrize("reshard_after_forward", [None, False])
def test_world_size_one_trains_like_unsharded(pool, reshard_after_forward):
    results = harness.run(pool, S + "one_rank", libs=("torch", "fsdp_ref", "plain"),
                          reshard_after_forward=reshard_after_forward)
    harness.assert_same_results(results, "torch", "fsdp_ref", keys=("losses", "params"))
    harness.assert_same_results(results, "plain", "fsdp_ref", keys=("losses", "params"))
    for per_lib in results:  # (test_world_size_one_issues_no_collective holds fsdp_ref to it)
        assert harness.result_of(per_lib["torch"], "torch", 0)["collectives"] == 0


@pytest.mark.parametrize("ws", [1], ids=["ws1"])
@pytest.mark.parametrize("gpu_path", [True, False], ids=["gpu_path", "cpu_path"])
def test_world_size_one_under_the_race_detector(pool, gpu_path):
    results = harness.run(pool, "tests.conformance.harness:under_detector",
                          libs=("plain", "fsdp_ref"), target=S + "one_rank",
                          gpu_path=gpu_path)
    races = harness.result_of(results[0]["fsdp_ref"], "fsdp_ref", 0)["races"]
    assert races == [], races
    harness.assert_same_results(results, "plain", "fsdp_ref", keys=("losses", "params"))


@pytest.mark.parametrize("kind", ["list", "dict"])
def test_container_with_forward_is_sharded(pool, kind):
    """A ModuleList / ModuleDict subclass with its own forward gets its own group."""
    results = harness.run(pool, S + "container", libs=("torch", "fsdp_ref", "plain"), kind=kind)
    harness.assert_same_results(results, "torch", "fsdp_ref")
    harness.assert_same_results(results, "plain", "fsdp_ref", keys=("losses", "params"))


@pytest.mark.parametrize("ws", [2], ids=["ws2"])
def test_in_place_op_on_a_block_output(pool):
    """``y = block(x); y += 1`` on a view output of the first of two blocks: the hook on
    ``y`` is lost, but the second block's backward prefetches the first, so both
    libraries still train like the plain model."""
    results = harness.run(pool, S + "in_place_on_output", libs=("torch", "fsdp_ref", "plain"))
    harness.assert_same_results(results, "torch", "fsdp_ref")
    harness.assert_same_results(results, "plain", "fsdp_ref")


@pytest.mark.parametrize("ws", [1], ids=["ws1"])
def test_world_size_one_issues_no_collective(pool):
    """A one-rank mesh: torch's CommDebugMode counts no collective, for both libraries."""
    results = harness.run(pool, S + "one_rank", libs=("torch", "fsdp_ref"))
    harness.assert_same_results(results, "torch", "fsdp_ref")


@pytest.mark.parametrize("ws", [2], ids=["ws2"])
def test_in_place_op_on_root_output(pool):
    """``out += 1`` on the root's (view) output: torch 2.13 drops its pre-backward hook
    and trains on freed parameters; fsdp_ref's pre-backward is an autograd node, which the
    in-place op cannot drop, so it trains like the unsharded model."""
    results = harness.run(pool, S + "in_place_on_root_output", libs=("plain", "fsdp_ref"))
    harness.assert_same_results(results, "plain", "fsdp_ref")


@pytest.mark.parametrize("ws", [4], ids=["ws4"])
def test_group_parameter_order_is_torchs(pool):
    """A root's own parameter before its child's: fsdp_ref orders the group as torch 2.13
    does (children first), so the reduce-scatter buffer has torch's layout and gloo sums
    every element in torch's order: gradients bitwise equal at 4 ranks (in
    ``named_modules`` order they differed by ulps)."""
    results = harness.run(pool, S + "parent_parameter_first")
    harness.assert_same_results(results, "torch", "fsdp_ref")


@pytest.mark.parametrize("ws", [2], ids=["ws2"])
def test_inference_mode_forward_equals_torch(pool):
    """Forwards under ``torch.inference_mode()`` as a model's first ones: bitwise torch's
    outputs (fsdp_ref raised torch's "Inference tensors do not track version counter"
    when it preserved the version of every all-gather output; torch skips those)."""
    results = harness.run(pool, S + "inference_mode_first", train=False)
    harness.assert_same_results(results, "torch", "fsdp_ref")


#: torch 2.13's refusal, by world size: on one rank its copy into the unsharded
#: parameter always preserves the version counter, which an inference tensor lacks.
TORCH_INFERENCE_ERROR = {1: "Inference tensors do not track version counter",
                         2: "Inplace update to inference tensor"}


@pytest.mark.parametrize("ws", [1, 2], ids=["ws1", "ws2"])
def test_training_after_inference_mode_first(pool, ws):
    """Training after the first forwards ran under ``torch.inference_mode()``: fsdp_ref
    trains like the unsharded model. torch 2.13 raises: on one rank already in the first
    forward; on two, at the training forward, whose all-gather copy-out cannot write the
    unsharded parameters it made as inference tensors (a documented difference:
    docs/using/inference.md#inference-mode)."""
    results = harness.run(pool, S + "inference_mode_first", libs=("torch", "fsdp_ref", "plain"))
    harness.assert_same_results(results, "plain", "fsdp_ref", keys=("losses", "params"))
    for rank, per_lib in enumerate(results):
        status, info = per_lib["torch"]
        assert status == "raised" and TORCH_INFERENCE_ERROR[ws] in info["msg"], (
            rank, status, str(info)[:300])


@pytest.mark.parametrize("ws", [2], ids=["ws2"])
def test_managed_modules_marked_like_torch(pool):
    """``_is_fsdp_managed_module`` / ``_fsdp_use_orig_params`` on the modules torch marks:
    what ``fully_shard`` manages, not what ``replicate`` does. torch.compile treats the
    parameters of marked modules as graph inputs, and transformers' ``generate()`` turns
    ``synced_gpus`` on for them (fsdp_ref set neither)."""
    results = harness.run(pool, S + "marked_managed")
    harness.assert_same_results(results, "torch", "fsdp_ref")
    marked = harness.result_of(results[0]["fsdp_ref"], "fsdp_ref", 0)
    assert "" in marked["model"] and marked["replicated"] == [], marked
