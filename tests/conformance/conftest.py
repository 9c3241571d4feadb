"""Fixtures of the conformance suite: ``ws`` (1, 2 and 4 gloo ranks) and ``pool``, the
session's worker pool of ``ws`` ranks (``tests/dist_harness.py``, started once and shared
with the other suites). A test that needs other world sizes parametrizes ``ws`` itself."""

from __future__ import annotations

import pytest


@pytest.fixture(params=[1, 2, 4], ids=["ws1", "ws2", "ws4"])
def ws(request) -> int:
    return request.param


@pytest.fixture
def pool(dist_pools, ws):
    return dist_pools.get(ws)
