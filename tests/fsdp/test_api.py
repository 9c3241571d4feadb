"""Behaviour of the FSDP2 API surface at 2 and 4 gloo ranks: sharded layout, explicit
unshard/reshard, reshard_after_forward states, gradient sync switch, list groups and
register_fsdp_forward_method."""

from __future__ import annotations

import pytest

from tests.fsdp.common import assert_reports_ok

API = "tests.fsdp.scenarios_api:"
GROUPS = "tests.fsdp.scenarios_groups:"


def run_ok(pool, name, module=API, **kwargs):
    results = pool.run(module + name, **kwargs)
    assert_reports_ok(results)
    return results


def test_sharded_layout_and_classes(pool, impl):
    """Params are DTensor nn.Parameters with (Shard(0),) and torch.chunk-sized local
    shards (uneven dims, ranks with empty shards); full_tensor() gives the original
    values; grads are DTensors with the same placement and local shape; sharded modules
    become FSDPModule subclasses and keep their class; tied weights stay tied."""
    run_ok(pool, "sharding_layout", impl=impl)


def test_unshard_async_handle_and_reshard(pool, impl):
    run_ok(pool, "unshard_reshard", impl=impl)


@pytest.mark.parametrize(
    ("ws", "value"),
    [
        pytest.param(2, True, id="ws2-true"),
        pytest.param(2, False, id="ws2-false"),
        pytest.param(2, None, id="ws2-none"),
        pytest.param(4, 2, id="ws4-int2"),
        pytest.param(4, 1, id="ws4-int1"),
        pytest.param(4, 4, id="ws4-int4_world"),
    ],
)
def test_registered_params_after_forward(pool, impl, value):
    run_ok(pool, "reshard_after_forward_state", impl=impl, value=value)


def test_requires_gradient_sync_false_defers_reduction(pool, impl):
    run_ok(pool, "gradient_sync_off", impl=impl)


def test_list_of_modules_is_one_group(pool, impl):
    run_ok(pool, "list_one_group", GROUPS, impl=impl)


def test_register_fsdp_forward_method(pool, impl):
    run_ok(pool, "forward_method", GROUPS, impl=impl)


def test_tied_siblings_in_one_list_group(pool, impl):
    """Not misuse: siblings that tie a weight, grouped with fully_shard([a, b])."""
    run_ok(pool, "tied_siblings_in_one_group", GROUPS, impl=impl)
