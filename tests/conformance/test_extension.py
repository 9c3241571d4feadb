"""The all-gather extension found on the tensor instance (issue 23 item 6): hooks
attached to a sharded parameter's local tensor object after ``fully_shard`` are used as
torch uses them, and the pre hook gets the mesh torch passes (FSDP, HSDP, and replicate
with ``dp_mesh_dims``)."""

from __future__ import annotations

import pytest

from tests.conformance import harness

EXT = "tests.conformance.scenarios_extension:"


@pytest.mark.parametrize("ws", [2, 4], ids=["ws2", "ws4"])
@pytest.mark.parametrize("hsdp", [False, True], ids=["fsdp", "hsdp"])
def test_extension_on_the_tensor_instance(pool, hsdp):
    results = harness.run(pool, EXT + "instance_extension", libs=("torch", "fsdp_ref"), hsdp=hsdp)
    harness.assert_same_results(results, "torch", "fsdp_ref")
    control = harness.run(pool, EXT + "class_extension_control", libs=("torch",))
    with pytest.raises(AssertionError):  # the hooks change training: ignoring them shows
        harness.assert_same_results([{"a": c["torch"], "b": r["torch"]}
                                     for c, r in zip(control, results)], "a", "b",
                                    keys=("losses",))


@pytest.mark.parametrize("ws", [2], ids=["ws2"])
def test_extension_on_the_instance_at_an_unshard_before_forward(pool):
    """``unshard()`` before the first forward looks the hooks up too (torch's group lazy
    init runs there): the hooks are called from the first all-gather on."""
    results = harness.run(pool, EXT + "instance_extension", libs=("torch", "fsdp_ref"),
                          unshard_first=True)
    harness.assert_same_results(results, "torch", "fsdp_ref")
    assert harness.result_of(results[0]["fsdp_ref"], "fsdp_ref", 0)["pre_hook_ran_at_unshard"]


@pytest.mark.parametrize("ws", [2], ids=["ws2"])
def test_extension_mesh_under_replicate_with_dp_mesh_dims(pool):
    """``replicate`` over the ``rep`` dim of a ``(rep, tp)`` mesh: torch hands the pre hook
    the 1-D ``rep`` mesh, not the whole mesh; so does fsdp_ref."""
    results = harness.run(pool, EXT + "replicate_extension", libs=("torch", "fsdp_ref"))
    harness.assert_same_results(results, "torch", "fsdp_ref")


@pytest.mark.parametrize("ws", [2], ids=["ws2"])
def test_extension_under_inference_mode(pool):
    """An extension's all-gather outputs made under ``torch.inference_mode()`` have no
    version counter: torch leaves them out when it preserves versions at the copy-out, and
    so does fsdp_ref (it raised "Inference tensors do not track version counter")."""
    results = harness.run(pool, EXT + "extension_under_inference_mode")
    harness.assert_same_results(results, "torch", "fsdp_ref")
