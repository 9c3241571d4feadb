"""torchtitan's Trainer (llama3 debug-model defaults: bf16 parameters / fp32 reduce,
selective AC, chunked loss): fsdp_ref after ``install()`` against torch's ``fully_shard``,
bitwise (logged loss and gradient norm, parameters after every step). See
scenarios_torchtitan.py, whose ``cpu_shims`` lists what changes for CPU."""

from __future__ import annotations

from tests.frameworks.common import run_both, unpack

TARGET = "tests.frameworks.scenarios_torchtitan:train"


def test_trainer_matches_torch(pools, tmp_path):
    out = run_both(pools, TARGET, out_dir=str(tmp_path))
    for r in out["fsdp_ref"]:
        assert r["fsdp_modules"][0] == "" and "layers.0" in r["fsdp_modules"], r["fsdp_modules"]
        assert r["mp"] == "bfloat16"
        assert len(r["logged"]) == 3 and len(r["params"]) == 3


def test_default_spmd_backend_torch_refuses_fsdp_ref_builds(pools, tmp_path):
    """torchtitan 0.3's default ``spmd_backend="spmd_types"`` gives ``fully_shard`` plain
    tensors and ``dp_mesh_dims``: torch 2.13 refuses (its parameters must already be
    DTensors on the SPMD mesh). fsdp_ref accepts them deliberately, treating a plain tensor
    as ``Replicate()`` on the mesh's other dims (``tests/policies/test_mesh_placement.py::
    test_dp_mesh_dims`` trains like the one-process model on five layouts); the difference
    is on ``docs/design/errors.md``. Whether torchtitan's ``spmd_types`` backend then trains
    correctly is not checked here: torch cannot run it to compare."""
    kinds = {impl: [unpack(r) for r in pools[impl].run(
                 "tests.frameworks.scenarios_torchtitan:refusal", impl=impl,
                 out_dir=str(tmp_path / impl))]
             for impl in ("torch", "fsdp_ref")}
    for kind, message in kinds["torch"]:
        assert kind == "ValueError" and "must be DTensors on the full SPMD mesh" in message
    assert all(kind == "no error" for kind, _ in kinds["fsdp_ref"]), kinds["fsdp_ref"]
