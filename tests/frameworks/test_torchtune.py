"""torchtune's distributed full finetune (``training.shard_model``, its checkpointer) and its
``optimizer_in_bwd``: fsdp_ref after ``install()`` against torch's ``fully_shard``, bitwise.
See scenarios_torchtune.py."""

from __future__ import annotations

import torch

from tests.frameworks.common import run_both

TARGET = "tests.frameworks.scenarios_torchtune:finetune"
SHARDED = ["", "layers.0", "layers.1"]


def test_full_finetune_matches_torch(pools, tmp_path):
    out = run_both(pools, TARGET, out_dir=str(tmp_path))
    for rank, r in enumerate(out["fsdp_ref"]):
        assert r["fsdp_modules"] == SHARDED
        assert len(r["losses"]) == 3 and len(r["params"]) == 3 and len(r["grad_norms"]) == 3
        if rank == 0:  # the checkpointer's model file holds the trained parameters
            (saved,) = r["saved"].values()
            assert all(torch.equal(saved[n], p) for n, p in r["params"][-1].items())


def test_optimizer_in_backward_matches_torch(pools, tmp_path):
    """The optimizer steps from the sharded parameters' post-accumulate-grad hooks."""
    out = run_both(pools, TARGET, out_dir=str(tmp_path), optimizer_in_bwd=True)
    for r in out["fsdp_ref"]:
        assert r["fsdp_modules"] == SHARDED
        first, last = r["params"][0], r["params"][-1]
        assert all(not torch.equal(first[n], last[n]) for n in first), "no step was taken"
        assert all(s["state"] for s in r["optim_state"].values())
