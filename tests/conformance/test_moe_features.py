"""Per-parameter meshes with offload, accumulation, explicit prefetch, recovery after an
exception and DCP state dicts (issue 23 item 1), at 4 gloo ranks: each equals the
one-process model and torch's ``fully_shard`` (offload with ``pin_memory=False``, which
torch runs without an accelerator)."""

from __future__ import annotations

import pytest

from tests.conformance import harness

S = "tests.conformance.scenarios_moe_features:"


@pytest.mark.parametrize("ws", [4], ids=["ws4"])
@pytest.mark.parametrize("feature", ["offload", "prefetch", "accumulation", "reset"])
def test_moe_with_feature(pool, feature):
    results = harness.run(pool, S + "with_feature", libs=("torch", "fsdp_ref", "plain"),
                          feature=feature)
    rows = 4 * 4 if feature == "accumulation" else None  # (two microbatches of 2 per rank)
    harness.assert_same_results(results, "plain", "fsdp_ref", keys=("losses", "params"),
                                rows=rows)
    harness.assert_same_results(results, "torch", "fsdp_ref")


@pytest.mark.parametrize("ws", [4], ids=["ws4"])
@pytest.mark.parametrize(("saver", "save_layout", "loader", "load_layout"), [
    ("fsdp_ref", "hsdp", "fsdp_ref", "dp"),
    ("fsdp_ref", "hsdp", "torch", "efsdp"),
    ("torch", "dp", "fsdp_ref", "efsdp"),
    ("torch", "hsdp", "fsdp_ref", "hsdp"),
], ids=["ours-hsdp-to-ours-dp", "ours-hsdp-to-torch-efsdp", "torch-dp-to-ours-efsdp",
        "torch-hsdp-to-ours-hsdp"])
def test_moe_state_dict_across_layouts(pool, tmp_path, saver, save_layout, loader,
                                       load_layout):
    """Saved with one layout (and library), loaded into another: the same parameters.

    Saved only from layouts that reduce expert gradients over every rank: this model has
    no token dispatch over ``ep``, so with experts sharded over ``efsdp`` alone each ``ep``
    row trains an expert copy of its own, which no single checkpoint holds (the example
    with real expert parallelism, ``fsdp_ref.examples.moe``, shards experts over ``ep``)."""
    results = harness.run(pool, S + "dcp_across", libs=("fsdp_ref",), saver=saver,
                          save_layout=save_layout, loader=loader, load_layout=load_layout,
                          path=str(tmp_path / "ckpt"))
    for rank, per_lib in enumerate(results):
        out = harness.result_of(per_lib["fsdp_ref"], "fsdp_ref", rank)
        problems = harness.differences(out["saved"], out["loaded"], rtol=0.0, atol=0.0)
        assert not problems, f"rank {rank}: " + "\n".join(problems)
