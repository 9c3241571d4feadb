"""Lightning's ModelParallelStrategy: fsdp_ref after ``install()`` against torch's
``fully_shard``, bitwise (losses, parameters after every step, the full checkpoint's
model and optimizer state). See scenarios_lightning.py."""

from __future__ import annotations

from tests.frameworks.common import run_both

TARGET = "tests.frameworks.scenarios_lightning:train"


def test_model_parallel_strategy_matches_torch(pools, tmp_path):
    out = run_both(pools, TARGET, out_dir=str(tmp_path))
    for rank, r in enumerate(out["fsdp_ref"]):
        assert r["fsdp_modules"] == ["", "blocks.0", "blocks.1"]
        assert len(r["losses"]) == 3 and len(r["params"]) == 3
        if rank == 0:  # the full checkpoint: every parameter, and AdamW's state of each
            sd = r["saved"]["state_dict"]
            assert sd.keys() == {f"model.{n}" for n in r["params"][-1]}
            state = r["saved"]["optimizer_states"][0]["state"]
            assert len(state) == len(sd) and all(s["step"] == 3 for s in state.values())
        else:
            assert r["saved"] == {}
