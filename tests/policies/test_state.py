"""Sharded state_dict, torch.distributed.checkpoint (across world sizes and between
fsdp_ref and torch's fully_shard, both directions), full state dicts and meta-device
initialization."""

from __future__ import annotations

import pytest

from tests.fsdp.common import assert_reports_ok

SC = "tests.policies.scenarios_state:"


@pytest.mark.parametrize("ws", [1, 2, 4])
def test_state_dict_sharded_no_comm_roundtrip(dist_pools, impl, ws):
    assert_reports_ok(dist_pools.get(ws).run(SC + "state_dict_roundtrip", impl=impl))


def _save_load(dist_pools, tmp_path, saver, save_ws, loader, load_ws):
    path = str(tmp_path / f"ckpt_{saver}{save_ws}")
    assert_reports_ok(dist_pools.get(save_ws).run(SC + "dcp_save", impl=saver, path=path))
    assert_reports_ok(dist_pools.get(load_ws).run(SC + "dcp_load", impl=loader, path=path))


@pytest.mark.parametrize(
    ("save_ws", "load_ws"), [(4, 2), (2, 4), (1, 4)], ids=["ws4_to_ws2", "ws2_to_ws4", "ws1_to_ws4"]
)
def test_dcp_reshard_world_size(dist_pools, tmp_path, impl, save_ws, load_ws):
    """dcp.save at one world size, dcp.load at another (same implementation)."""
    _save_load(dist_pools, tmp_path, impl, save_ws, impl, load_ws)


@pytest.mark.parametrize(
    ("saver", "save_ws", "loader", "load_ws"),
    [
        ("fsdp_ref", 2, "torch", 2),
        ("torch", 2, "fsdp_ref", 2),
        ("fsdp_ref", 4, "torch", 2),
        ("torch", 4, "fsdp_ref", 2),
    ],
    ids=["ref_to_upstream", "upstream_to_ref", "ref_ws4_to_upstream_ws2", "upstream_ws4_to_ref_ws2"],
)
def test_dcp_interchangeable_with_upstream(dist_pools, tmp_path, saver, save_ws, loader, load_ws):
    """Checkpoints written by fsdp_ref load into torch's fully_shard and vice versa."""
    _save_load(dist_pools, tmp_path, saver, save_ws, loader, load_ws)


@pytest.mark.parametrize("ws", [1, 2, 4])
def test_full_state_dict(dist_pools, impl, ws):
    assert_reports_ok(dist_pools.get(ws).run(SC + "full_state_dict", impl=impl))


@pytest.mark.parametrize("ws", [1, 2, 4])
def test_meta_device_init(dist_pools, impl, ws):
    assert_reports_ok(dist_pools.get(ws).run(SC + "meta_init", impl=impl))
