"""A failed load leaves the model as it was, on every rank (2 gloo ranks).

Side by side with torch's ``fully_shard`` where the two differ: torch's
``load_state_dict`` copies every entry that fits before raising (or, for a problem on one
rank only, loads on the other ranks without any error). The torch cases assert what
``docs/design/reliability.md`` says torch does; if torch changes, update the page.
"""

from __future__ import annotations

import pytest

S = "tests.reliability.scenarios_loading:"


def _refused_everywhere(results, *patterns):
    for rank, res in enumerate(results):
        err = res["err"]
        assert err is not None, f"rank {rank}: the bad load was accepted"
        assert err["type"] == "StateDictLoadError", f"rank {rank}: {err}"
        assert "nothing was copied" in err["msg"]
        for pattern in patterns:
            assert pattern in err["msg"], f"rank {rank}: {pattern!r} not in {err['msg']!r}"
        assert res["changed"] == [], f"rank {rank}: a refused load changed {res['changed']}"


def test_wrong_shape_changes_nothing(pool2):
    _refused_everywhere(
        pool2.run(S + "wrong_shape_last", impl="fsdp_ref"),
        "out_proj.bias: shape (5,) in the state dict, (8,) in the model",
        "ranks [0, 1]",
    )


def test_wrong_shape_with_torch_copies_the_rest(pool2):
    for res in pool2.run(S + "wrong_shape_last", impl="torch"):
        assert res["err"] is not None and "size mismatch" in res["err"]["msg"]
        assert len(res["changed"]) == res["n_keys"] - 1, res["changed"]


@pytest.mark.parametrize(
    ("problem", "says"),
    [
        ("dtype", "dtype torch.int64 (integer/bool) cannot load into torch.float32"),
        ("missing", "missing from the state dict"),
        ("plain", "a plain tensor for a sharded (DTensor) parameter"),
    ],
)
def test_problem_on_one_rank_stops_every_rank(pool2, problem, says):
    """Only rank 1's state dict is bad: rank 0 must not load either, and both name rank 1."""
    _refused_everywhere(
        pool2.run(S + "bad_on_one_rank", impl="fsdp_ref", problem=problem),
        f"ranks [1]: blocks.1.mlp.in_proj.weight: {says}",
    )


@pytest.mark.parametrize("problem", ["dtype", "missing", "plain"])
def test_problem_on_one_rank_with_torch_diverges(pool2, problem):
    """torch: rank 0 loads everything; rank 1 loads (int64 cast silently) or raises after
    copying the other entries. Either way the ranks now hold different models."""
    r0, r1 = pool2.run(S + "bad_on_one_rank", impl="torch", problem=problem)
    assert r0["err"] is None and len(r0["changed"]) == r0["n_keys"]
    assert (r1["err"] is None) == (problem == "dtype"), r1["err"]
    assert len(r1["changed"]) >= r1["n_keys"] - 1


def test_strict_keys_checked_before_copying(pool2):
    _refused_everywhere(
        pool2.run(S + "strictness", impl="fsdp_ref", strict=True, extra=True),
        "in_proj.bias: missing from the state dict",
        "blocks.0.nonexistent: unexpected key",
    )


def test_non_strict_load_copies_what_is_there(pool2):
    for res in pool2.run(S + "strictness", impl="fsdp_ref", strict=False, extra=True):
        assert res["err"] is None, res["err"]
        assert len(res["changed"]) == res["n_keys"] - 1 and "in_proj.bias" not in res["changed"]


def test_precision_casts_load_kind_changes_refused(pool2):
    for res in pool2.run(S + "dtype_kinds", impl="fsdp_ref", dtype="bfloat16"):
        assert res["err"] is None and len(res["changed"]) == res["n_keys"]
        assert res["dtypes"] == ["torch.float32"]  # copied into the fp32 shards
    _refused_everywhere(
        pool2.run(S + "dtype_kinds", impl="fsdp_ref", dtype="int32"),
        "dtype torch.int32 (integer/bool) cannot load into torch.float32",
    )


def test_assign_needs_the_sharded_layout(pool2):
    _refused_everywhere(
        pool2.run(S + "assign_other_placement", impl="fsdp_ref"),
        "assign=True needs placements (Shard(dim=0),)",
    )
    for res in pool2.run(S + "assign_other_placement", impl="torch"):
        assert res["err"] is not None and res["changed"], res  # torch: fails mid-way


def test_loads_that_fit_still_load(pool2):
    """Shifted values, replicated DTensors (redistributed by the copy), a nested
    fully_shard module loaded on its own; and a bad nested load is refused."""
    for res in pool2.run(S + "good_loads", impl="fsdp_ref"):
        for case in ("shifted", "replicated", "nested"):
            assert res[case]["err"] is None, (case, res[case]["err"])
            assert len(res[case]["changed"]) == res[case]["n_keys"], case
        _refused_everywhere([res["nested_bad"]], "norm.weight: shape (3,)")


def test_set_model_state_dict_full_is_all_or_nothing(pool2):
    _refused_everywhere(
        pool2.run(S + "set_model_state_dict_full", impl="fsdp_ref", bad=True, broadcast=False),
        "out_proj.bias: shape (5,)",
    )
    for res in pool2.run(
        S + "set_model_state_dict_full", impl="fsdp_ref", bad=False, broadcast=False
    ):
        assert res["err"] is None and len(res["changed"]) == res["n_keys"]
    for res in pool2.run(S + "set_model_state_dict_full", impl="torch", bad=True, broadcast=False):
        assert res["err"] is not None and len(res["changed"]) == res["n_keys"] - 1


def test_broadcast_from_rank0_is_all_or_nothing(pool2):
    """``broadcast_from_rank0`` copies into the live shards inside torch, before
    ``load_state_dict`` (and its hooks) run: torch's model is partly written when a wrong
    shape makes it raise. fsdp_ref checks rank 0's shapes on every rank before the first
    write (``staged_load.guard_broadcast_load``): refused, nothing written; a good state
    dict loads."""
    _refused_everywhere(
        pool2.run(S + "set_model_state_dict_full", impl="fsdp_ref", bad=True, broadcast=True),
        "out_proj.bias: shape (5,)",
    )
    for res in pool2.run(
        S + "set_model_state_dict_full", impl="fsdp_ref", bad=False, broadcast=True
    ):
        assert res["err"] is None and len(res["changed"]) == res["n_keys"]
    for res in pool2.run(S + "set_model_state_dict_full", impl="torch", bad=True, broadcast=True):
        assert res["err"] is not None and 0 < len(res["changed"]) < res["n_keys"]


def test_dcp_truncated_file_in_place_leaves_ranks_apart(pool2):
    """What DCP itself does (documented on the checkpointing page): every rank raises,
    the intact rank has loaded everything, the damaged one only part."""
    r0, r1 = pool2.run(S + "dcp_damaged", impl="fsdp_ref", how="truncate", staged=False)
    assert r0["victim"] == "__1_0.distcp"
    for res in (r0, r1):
        assert res["err"] is not None and res["err"]["type"] == "CheckpointException"
    assert len(r0["equal_saved"]) == r0["n_keys"]
    assert 0 <= len(r1["equal_saved"]) < r1["n_keys"]


def test_dcp_flipped_byte_loads_silently(pool2):
    r0, r1 = pool2.run(S + "dcp_damaged", impl="fsdp_ref", how="flip", staged=False)
    assert r0["err"] is None and r1["err"] is None
    assert len(r0["equal_saved"]) == r0["n_keys"] - 1  # one tensor holds a wrong value
    assert len(r1["equal_saved"]) == r1["n_keys"]


def test_staged_load_keeps_the_model_on_a_truncated_file(pool2):
    _refused_everywhere(
        pool2.run(S + "dcp_damaged", impl="fsdp_ref", how="truncate", staged=True),
        "checkpoint load refused",
        "reader rank 1 failed: EOFError",
    )


def test_staged_load_of_a_good_checkpoint_is_exact(pool2):
    assert pool2.run(S + "dcp_staged_roundtrip") == [[], []]


def test_assign_with_the_sharded_layout_is_used(pool2):
    """``assign=True`` swaps the parameter objects; the next forward must gather the new
    ones (it used the old ones until fsdp_ref adopted them in a post-hook), as torch does."""
    ours = pool2.run(S + "assign_same_layout", impl="fsdp_ref")
    theirs = pool2.run(S + "assign_same_layout", impl="torch")
    for mine, ref in zip(ours, theirs):
        assert mine["out"] == ref["out"]
        assert mine["values"] == [0.5]
