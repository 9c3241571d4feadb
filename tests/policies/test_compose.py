"""register_fsdp_forward_method, share_comm_ctx, UnshardHandle, custom comms, and
composition with activation checkpointing and torch.compile; each against a
single-process reference."""

from __future__ import annotations

import pytest

from tests.fsdp.common import assert_reports_ok

SC = "tests.policies.scenarios_compose:"


@pytest.mark.parametrize("ws", [1, 2, 4])
def test_register_fsdp_forward_method(dist_pools, impl, ws):
    assert_reports_ok(dist_pools.get(ws).run(SC + "forward_method", impl=impl))


@pytest.mark.parametrize("ws", [2, 4])
def test_share_comm_ctx(dist_pools, impl, ws):
    assert_reports_ok(dist_pools.get(ws).run(SC + "shared_comm_ctx", impl=impl))


@pytest.mark.parametrize("first", ["root", "block"])
def test_unshard_async_handle(pool2, impl, first):
    assert_reports_ok(pool2.run(SC + "unshard_handle", impl=impl, first=first))


@pytest.mark.parametrize("ws", [2, 4])
def test_custom_all_gather_reduce_scatter(dist_pools, impl, ws):
    assert_reports_ok(dist_pools.get(ws).run(SC + "custom_comms", impl=impl))


@pytest.mark.parametrize("kind", ["function", "wrapper"])
def test_activation_checkpointing(pool2, impl, kind):
    assert_reports_ok(pool2.run(SC + "activation_checkpointing", impl=impl, kind=kind))


@pytest.mark.parametrize("how", ["method", "wrapper"])
def test_compiled_blocks(pool2, impl, how):
    assert_reports_ok(pool2.run(SC + "compiled_blocks", impl=impl, how=how, timeout_s=300))
