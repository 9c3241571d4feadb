"""PEFT LoRA on a transformers Llama (frozen base, trainable adapters, same groups) at 2
gloo ranks: fsdp_ref against torch's ``fully_shard`` in the same process."""

from __future__ import annotations

from tests.fsdp.common import assert_reports_ok


def test_lora_llama_matches_upstream(pool2):
    results = pool2.run("tests.extensions.scenarios_peft:lora_llama_vs_torch", steps=3,
                        timeout_s=300)
    assert_reports_ok(results)
    for r in results:
        info = r["info"]
        assert info["n_trainable"] == 8 and info["n_frozen"] > 8, info
        # Only the adapters are reduce-scattered: their padded shards, every step.
        assert info["rs_bytes"] == [info["expected_rs_bytes"]] * 3, info
        assert info["torch_rs_bytes"] == info["rs_bytes"], info
        assert info["losses"][-1] < info["losses"][0], info["losses"]
