"""QLoRA (torchao ``NF4Tensor`` base weights, LoRA adapters) at 2 gloo ranks: fsdp_ref
against torch's ``fully_shard`` in the same process, bit for bit."""

from __future__ import annotations

from tests.fsdp.common import assert_reports_ok


def test_qlora_matches_upstream(pool2):
    results = pool2.run("tests.extensions.scenarios_qlora:qlora_vs_torch", steps=3)
    assert_reports_ok(results)
    losses = results[0]["info"]["losses"]
    assert losses[-1] < losses[0], f"the adapters did not learn: {losses}"
