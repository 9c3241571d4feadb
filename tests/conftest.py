"""Shared pytest fixtures.

``dist_pools`` is a session-wide registry of gloo worker pools (see
``tests/dist_harness.py``): ``dist_pools.get(2)`` returns a started 2-rank pool,
reused by every test of the session.  ``pool2`` / ``pool4`` are shortcuts.
"""

from __future__ import annotations

import os
import sys

import pytest

_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _REPO_ROOT not in sys.path:  # make `tests.*` importable here and in spawned workers
    sys.path.insert(0, _REPO_ROOT)

from tests.dist_harness import PoolRegistry, WorkerPool  # noqa: E402


@pytest.fixture(scope="session")
def dist_pools():
    registry = PoolRegistry()
    try:
        yield registry
    finally:
        registry.close()


@pytest.fixture
def pool2(dist_pools) -> WorkerPool:
    return dist_pools.get(2)


@pytest.fixture
def pool4(dist_pools) -> WorkerPool:
    return dist_pools.get(4)
