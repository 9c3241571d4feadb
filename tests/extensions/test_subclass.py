"""FSDP2's all-gather extension, rule by rule, with the subclass of
:mod:`tests.extensions.subclass` at 2 gloo ranks: torch's ``fully_shard`` and fsdp_ref
side by side against one process training on the same quantized weight."""

from __future__ import annotations

import pytest

from tests.fsdp.common import IMPLS, assert_reports_ok

SCEN = "tests.extensions.scenarios_subclass"
STEPS = 3


@pytest.fixture(params=IMPLS)
def impl(request) -> str:
    return request.param


def _train(pool, impl, **kw):
    results = pool.run(f"{SCEN}:quant_training", impl=impl, steps=STEPS, **kw)
    assert_reports_ok(results)
    return results


@pytest.mark.parametrize(
    "kw",
    [
        pytest.param({}, id="long_form-int8-even"),
        pytest.param({"rows": 21, "mode": "float8"}, id="long_form-float8-uneven"),
        pytest.param({"cls": "ShortForm"}, id="short_form"),
        pytest.param({"mode": "float8"}, id="float8-with-bias"),
    ],
)
def test_training_matches_reference(pool2, impl, kw):
    """Losses and every shard match the one-process reference; the post hook is called
    once without ``out=`` and then with it on every later unshard (the first linear
    reshards after forward: two unshards a step), re-gathering into the same storages
    (the subclass asserts it)."""
    results = _train(pool2, impl, **kw)
    pre = "pre_short" if kw.get("cls") == "ShortForm" else "pre"
    for r in results:
        calls = r["info"]["calls"]
        assert calls[pre] == 2 * STEPS, calls
        assert calls["post_first"] == 1, calls
        assert calls["post_out"] == 2 * STEPS - 1, calls


def test_float8_group_is_moved_as_bytes(pool2):
    """A group whose only all-gather input is float8 (no bias): gloo has no float8, so
    fsdp_ref moves the bytes; torch's fully_shard fails there (see the next test)."""
    _train(pool2, "fsdp_ref", mode="float8", bias=False)


def test_gloo_refuses_float8(pool2):
    """Why float8 travels as uint8: gloo refuses the dtype, the same bits as bytes arrive."""
    results = pool2.run(f"{SCEN}:gloo_float8")
    for r in results:
        assert "Invalid scalar type" in (r["float8_error"] or ""), r
        assert r["as_bytes"] == [1.0] * 4 + [2.0] * 4


def test_offload_pre_hook_reads_the_device_copy(pool2):
    """Under CPU offload the pre hook runs on the copy moved to the compute device, never
    on the offloaded shard itself (on a CPU mesh the copy is a host copy)."""
    results = _train(pool2, "fsdp_ref", offload=True)
    for r in results:
        flags = r["info"]["pre_read_the_shard"]
        assert flags and not any(flags), flags


ERRORS = {
    "OnlyPre": "defines fsdp_pre_all_gather but not fsdp_post_all_gather",
    "OnlyPost": "defines fsdp_post_all_gather but not fsdp_pre_all_gather",
    "BadSignature": "fsdp_pre_all_gather(self, mesh) or fsdp_pre_all_gather(self, mesh, "
    "outer_size",
    "NoOut": "add a keyword argument out=None",
    "int_reshard": "cannot be combined with parameters that define fsdp_pre_all_gather",
    "no_pad": "must return inputs of the padded shard size",
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_malformed_extension_fails_on_every_rank(dist_pools, case):
    """Every rank raises the same clear error (no rank is left waiting in a collective:
    the pool would time out). An int ``reshard_after_forward`` needs 4 ranks to keep a
    post-forward shard over 2 (at 2 ranks, 1 and 2 act as ``False`` and ``True``)."""
    pool = dist_pools.get(4 if case == "int_reshard" else 2)
    results = pool.run(f"{SCEN}:bad_extension", impl="fsdp_ref", case=case, timeout_s=60)
    errors = [r["error"] for r in results]
    assert all(e is not None and ERRORS[case] in e for e in errors), errors
    assert len(set(errors)) == 1, errors
