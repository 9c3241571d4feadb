"""torchtitan's Trainer (llama3 debug-model defaults: bf16 parameters / fp32 reduce,
selective AC, chunked loss): fsdp_ref after ``install()`` against torch's ``fully_shard``,
bitwise (logged loss and gradient norm, parameters after every step). See
scenarios_torchtitan.py, whose ``cpu_shims`` lists what changes for CPU."""

from __future__ import annotations

from tests.frameworks.common import run_both

TARGET = "tests.frameworks.scenarios_torchtitan:train"


def test_trainer_matches_torch(pools, tmp_path):
    out = run_both(pools, TARGET, out_dir=str(tmp_path))
    for r in out["fsdp_ref"]:
        assert r["fsdp_modules"][0] == "" and "layers.0" in r["fsdp_modules"], r["fsdp_modules"]
        assert r["mp"] == "bfloat16"
        assert len(r["logged"]) == 3 and len(r["params"]) == 3
