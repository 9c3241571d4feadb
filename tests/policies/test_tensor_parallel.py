"""FSDP on tensor-parallel (DTensor) parameters: 2-D and 3-D meshes of 4 gloo ranks.

Every training check compares with a single-process model on the full batch and with
torch's ``fully_shard`` on the same mesh (placements, local shards, numbers).
"""

from __future__ import annotations

import pytest

from tests.fsdp.common import assert_reports_ok

SC = "tests.policies.scenarios_tp:"
ST = "tests.policies.scenarios_tp_state:"

LAYOUTS = ["tp", "hsdp_tp", "spmd", "spmd_tp_first", "spmd_hsdp", "spmd_flat", "spmd_ddp"]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_train_2d(pool4, impl, layout):
    """Placements and local shards equal torch's; 3 SGD steps match the reference."""
    assert_reports_ok(pool4.run(SC + "train", impl=impl, layout=layout))


def test_clip_grad_norm_2d(pool4, impl):
    """clip_grad_norm_ over the DTensor grads of an SPMD-mesh model = the reference's
    norm. (With a separate tp mesh, plain parameters live on the dp mesh and TP ones on
    (dp, tp): torch.nn.utils.clip_grad_norm_ cannot stack norms across meshes, in torch's
    fully_shard as here.)"""
    assert_reports_ok(pool4.run(SC + "train", impl=impl, layout="spmd", steps=1, clip=True))


@pytest.mark.parametrize("layout", ["tp", "spmd"])
def test_grad_accumulation_2d(pool4, impl, layout):
    assert_reports_ok(pool4.run(SC + "grad_accumulation", impl=impl, layout=layout))


@pytest.mark.parametrize("layout", ["tp", "spmd"])
def test_mixed_precision_2d(pool4, layout):
    assert_reports_ok(pool4.run(SC + "mixed_precision", layout=layout))


@pytest.mark.parametrize(
    ("save_impl", "load_impl", "load_layout"),
    [
        ("fsdp_ref", "fsdp_ref", "tp"),
        ("fsdp_ref", "torch", "tp"),
        ("torch", "fsdp_ref", "tp"),
        ("fsdp_ref", "fsdp_ref", "fsdp"),
    ],
    ids=["self", "to_upstream", "from_upstream", "reshard_to_1d"],
)
def test_checkpoint_2d(pool4, tmp_path, save_impl, load_impl, load_layout):
    """DCP checkpoints of 2-D models load back exactly, across implementations and
    into a model without tensor parallelism; the full state dict is on rank 0 only."""
    assert_reports_ok(
        pool4.run(ST + "checkpoint", save_impl=save_impl, load_impl=load_impl,
                  tmpdir=str(tmp_path), load_layout=load_layout)
    )


def test_errors_2d(pool4):
    res = pool4.run(ST + "errors")[0]
    for key, words in {
        "partial": ["Partial", "weight"],
        "overlapping": ["one named mesh", "weight"],
        "same_mesh": ["weight"],
        "spmd_other_mesh": ["same", "weight"],
        "uneven_local_dim1": ["local (tensor-parallel) shape", "(8, 3)", "Shard(0)"],
    }.items():
        err = res[key]
        assert err is not None, f"{key}: no error raised"
        want = {"uneven_local_dim1": "NotImplementedError",  # torch's types
                "overlapping": "RuntimeError", "same_mesh": "RuntimeError"}.get(key, "ValueError")
        assert err["type"] == want, (key, err)
        for word in words:
            assert word in err["msg"], (key, word, err["msg"])


@pytest.mark.parametrize("layout", ["tp", "spmd"])
def test_meta_init_2d(pool4, impl, layout):
    """Meta-device model, to_empty, full state dict broadcast from rank 0, train."""
    assert_reports_ok(pool4.run(ST + "meta_init", impl=impl, layout=layout))
