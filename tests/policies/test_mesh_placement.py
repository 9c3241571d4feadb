"""HSDP, dp_mesh_dims, shard_placement_fn, ignored_params and set_all_reduce_hook.

Numeric checks compare with a single-process model trained on the full batch (SGD) and,
where torch's ``fully_shard`` supports the same call, with torch trained alongside.
"""

from __future__ import annotations

import pytest

from tests.fsdp.common import assert_reports_ok

SC = "tests.policies.scenarios_mesh:"
SP = "tests.policies.scenarios_placement:"


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"accum": True}, {"separate_rs": True}],
    ids=["train", "requires_all_reduce_false_microbatches", "separate_reduce_scatter_group"],
)
def test_hsdp_2x2(pool4, impl, kwargs):
    """Mesh (replicate=2, shard=2): placements (Replicate(), Shard(0)); parity with the
    reference and torch; with set_requires_all_reduce(False) on all but the last
    microbatch the accumulated grads still match."""
    assert_reports_ok(pool4.run(SC + "hsdp", impl=impl, **kwargs))


def test_hsdp_all_reduce_hook(pool4, impl):
    """Under HSDP the hook gets the all-reduced gradient (torch: it runs after the native
    all-reduce); doubling it in place doubles the grads; once per group per step."""
    assert_reports_ok(pool4.run(SC + "hsdp", impl=impl, hook=True))


@pytest.mark.parametrize("ws", [2, 4])
def test_fsdp_all_reduce_hook(dist_pools, impl, ws):
    assert_reports_ok(dist_pools.get(ws).run(SC + "fsdp_all_reduce_hook", impl=impl))


@pytest.mark.parametrize(
    ("ws", "layout"),
    [(2, "1d"), (4, "1d"), (4, "dp_tp"), (4, "hsdp"), (4, "flat"), (2, "ddp")],
)
def test_dp_mesh_dims(dist_pools, ws, layout):
    """fsdp_ref accepts plain-tensor parameters on a named mesh with dp_mesh_dims
    (torch requires parameters that already are DTensors on that mesh, so there is no
    torch counterpart of this call): layout, and parity with the reference."""
    assert_reports_ok(
        dist_pools.get(ws).run(SC + "dp_mesh_dims", impl="fsdp_ref", layout=layout)
    )


def test_dp_mesh_dims_errors(pool2):
    res = pool2.run(SC + "dp_mesh_dims_errors", impl="fsdp_ref")[0]
    assert res["empty"] and res["empty"]["type"] == "ValueError", res
    assert "shard" in res["empty"]["msg"], res
    err = res["unknown_name"]
    assert err and err["type"] == "ValueError", res
    assert "nope" in err["msg"] and "dp" in err["msg"], err
    err = res["unnamed_mesh"]
    assert err and err["type"] == "ValueError", res
    assert "mesh_dim_names" in err["msg"] or "names" in err["msg"], err
    # a DTensor parameter sharded on a dim dp_mesh_dims names as data parallel: FSDP
    # shards there itself, so it must be Replicate() there (torch: ValueError too)
    err = res["dtensor_param"]
    assert err and err["type"] == "ValueError", res
    assert "Replicate()" in err["msg"] and "'dp'" in err["msg"] and "weight" in err["msg"], err


@pytest.mark.parametrize("ws", [2, 4])
def test_shard_placement_fn_dim1(dist_pools, impl, ws):
    assert_reports_ok(dist_pools.get(ws).run(SP + "shard_placement", impl=impl))


@pytest.mark.parametrize("ws", [2, 4])
def test_shard_placement_fn_uneven_dim_raises(dist_pools, ws):
    """Shard(1) on a (8, 7) weight: torch's NotImplementedError, whose message goes on to
    name the parameter (its path in the module, enc.weight) and say how to fix it
    (Shard(0) / shard_placement_fn)."""
    err = dist_pools.get(ws).run(SP + "shard_placement_uneven", impl="fsdp_ref")[0]
    assert err is not None, "fully_shard accepted Shard(1) on a dim of 7"
    assert err["type"] == "NotImplementedError", err
    msg = err["msg"]
    assert "enc.weight" in msg, f"error does not name the parameter enc.weight: {msg}"
    assert "(8, 7)" in msg and "Shard(0)" in msg, msg


@pytest.mark.parametrize("ws", [2, 4])
def test_ignored_params(dist_pools, impl, ws):
    assert_reports_ok(dist_pools.get(ws).run(SP + "ignored_params", impl=impl))
