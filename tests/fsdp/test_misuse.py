"""Misuse gets a clear exception (type + a message naming the problem) on every rank,
never a hang.  Cases upstream ``fully_shard`` does not catch are checked for fsdp_ref
only (``impl`` parametrized to ``["fsdp_ref"]``); the harness timeout bounds them."""

from __future__ import annotations

import re

import pytest

MISUSE = "tests.fsdp.scenarios_misuse:"


def assert_raised(info, types, pattern, what):
    """``info``: exc_info() dict from one rank; ``types``: accepted exception class
    names (matched against the MRO); ``pattern``: regex the message must match."""
    assert info is not None, f"{what}: no exception was raised"
    assert set(types) & set(info["mro"]), (
        f"{what}: raised {info['type']} ({info['msg'][:300]!r}); expected one of {types}"
    )
    assert re.search(pattern, info["msg"], re.IGNORECASE | re.DOTALL), (
        f"{what}: message {info['msg'][:500]!r} does not match {pattern!r}"
    )


def test_fully_shard_twice(pool2, impl):
    """Upstream raises AssertionError('... can only be applied to a module once ...
    already been applied ...')."""
    for rank, res in enumerate(pool2.run(MISUSE + "shard_twice", impl=impl)):
        assert_raised(
            res["twice"],
            ("AssertionError", "ValueError", "RuntimeError"),
            r"already|once",
            f"rank {rank}: fully_shard applied twice",
        )


def test_same_module_twice_in_list(pool2, impl):
    for rank, res in enumerate(pool2.run(MISUSE + "overlapping_list", impl=impl)):
        assert_raised(
            res["dup"],
            ("AssertionError", "ValueError", "RuntimeError"),
            r"already|once|duplicate|more than once|twice",
            f"rank {rank}: fully_shard([m, m])",
        )


@pytest.mark.parametrize("impl", ["fsdp_ref"])
def test_list_with_overlapping_parameters(pool2, impl):
    """fully_shard([module, module.child]): the child's parameters belong to both list
    entries.  Upstream silently accepts it (fsdp_ref only).  Siblings that merely share
    (tie) a parameter are *not* misuse: one group holds the tied parameter once."""
    for rank, res in enumerate(pool2.run(MISUSE + "overlapping_list", impl=impl)):
        assert_raised(
            res["nested"],
            ("ValueError", "RuntimeError", "AssertionError"),
            r"overlap|share|shared|more than one|same param|duplicate|already|twice",
            f"rank {rank}: fully_shard([module, module.child])",
        )


def test_parent_sharded_before_its_child(pool2, impl):
    """torch 2.13 refuses fully_shard(child) after fully_shard(parent) by accident (its
    mesh concatenation fails: TypeError, or RuntimeError with named meshes); fsdp_ref
    with a TypeError that names the order to use, before changing the child. Bottom-up
    calls, including a container whose parameters are all below it, are accepted."""
    for rank, res in enumerate(pool2.run(MISUSE + "parent_first", impl=impl)):
        if impl == "fsdp_ref":
            assert_raised(res["error"], ("TypeError",), r"already sharded.*bottom-up",
                          f"rank {rank}: fully_shard(child) after its parent")
            assert res["child_left_plain"], "the refused call changed the child"
        else:
            assert_raised(res["error"], ("TypeError", "RuntimeError"), r".",
                          f"rank {rank}: fully_shard(child) after its parent")


def test_mesh_with_three_dims(pool2, impl):
    for rank, res in enumerate(pool2.run(MISUSE + "mesh_3d", impl=impl)):
        assert_raised(res, ("ValueError",), r"mesh", f"rank {rank}: 3-D mesh")
        assert re.search(r"1D or 2D|1-D|2-D|ndim|dimension|3D|3-D", res["msg"], re.I), res["msg"]


@pytest.mark.parametrize(
    ("ws", "value"),
    [
        pytest.param(4, 3, id="ws4-3"),
        pytest.param(4, 8, id="ws4-8"),
        pytest.param(4, 0, id="ws4-0"),
        pytest.param(4, -2, id="ws4-neg2"),
        pytest.param(2, 3, id="ws2-3"),
        pytest.param(2, "yes", id="ws2-str"),
    ],
)
def test_invalid_reshard_after_forward(pool, impl, value):
    """An int that does not divide the shard world size (or is < 1 / > world size), or
    a non bool/int value, raises ValueError naming reshard_after_forward."""
    for rank, res in enumerate(pool.run(MISUSE + "bad_reshard_int", impl=impl, value=value)):
        assert_raised(
            res, ("ValueError",), r"reshard_after_forward", f"rank {rank}: value {value!r}"
        )


@pytest.mark.parametrize(
    ("ws", "value"),
    [
        pytest.param(4, 1, id="ws4-1"),
        pytest.param(4, 4, id="ws4-4"),
        pytest.param(2, 2, id="ws2-2"),
    ],
)
def test_trivial_int_reshard_after_forward_accepted(pool, impl, value):
    """Upstream accepts 1 (warns, behaves like False) and the world size (like True);
    the parity tests check the training behaviour."""
    for rank, res in enumerate(pool.run(MISUSE + "bad_reshard_int", impl=impl, value=value)):
        assert res is None, f"rank {rank}: reshard_after_forward={value} raised {res}"


def test_forward_with_meta_parameters(pool2, impl):
    for rank, res in enumerate(pool2.run(MISUSE + "meta_forward", impl=impl)):
        assert_raised(
            res["err"], ("RuntimeError",), r"meta", f"rank {rank}: forward on meta params"
        )


@pytest.mark.parametrize("impl", ["fsdp_ref"])
@pytest.mark.parametrize("where", ["root", "nested"])
def test_ranks_with_different_parameter_shapes(pool, impl, where):
    """Rank 0 builds a model of other shapes than the other ranks.  Upstream crashes the
    gloo process (abort on a size mismatch) or hangs; fsdp_ref must raise on every rank
    (at fully_shard, lazy init or the first forward) with a message about the shapes."""
    results = pool.run(MISUSE + "mismatched_shapes", impl=impl, where=where, timeout_s=60)
    for rank, res in enumerate(results):
        assert_raised(
            res["err"],
            ("ValueError", "RuntimeError"),
            r"shape",
            f"rank {rank}: mismatched parameter shapes ({where}), raised at {res['stage']}",
        )
