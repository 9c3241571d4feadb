"""transformers' Trainer with FSDP2 (and PEFT LoRA through it): fsdp_ref after
``install()`` against torch's ``fully_shard``, bitwise (losses, parameters after every
step, logged gradient norms, the saved model). See scenarios_transformers.py."""

from __future__ import annotations

import pytest

from tests.frameworks.common import run_both
from tests.frameworks.scenarios_transformers import MAX_NORM

TARGET = "tests.frameworks.scenarios_transformers:train"
SHARDED = ["model.embed_tokens", "model.layers.0", "model.layers.1", "model.norm", "lm_head"]


@pytest.mark.parametrize("peft", [False, True], ids=["llama-tied", "peft-lora"])
def test_trainer_matches_torch(pools, tmp_path, peft):
    out = run_both(pools, TARGET, out_dir=str(tmp_path), peft=peft)
    for rank, r in enumerate(out["fsdp_ref"]):
        # accelerate's wrap: the decoder layers, the tied embedding and head, and the final
        # norm unless it is frozen (PEFT)
        expected = [("base_model.model." if peft else "") + n for n in SHARDED
                    if not (peft and n == "model.norm")]
        assert r["fsdp_modules"] == [""] + expected
        assert r["tied"]
        assert len(r["losses"]) == 6 and len(r["params"]) == 3 and len(r["grad_norms"]) == 3
        # clipping acted at every step: the logged norms (before clipping) exceed MAX_NORM
        assert min(float(g) for g in r["grad_norms"]) > MAX_NORM
        if peft:
            assert r["trainable"] and all("lora_" in n for n in r["trainable"])
        if rank == 0:
            assert r["saved"], "save_model wrote no safetensors file"
