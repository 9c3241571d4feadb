"""Fixtures of the FSDP suite.

* ``impl``: ``"torch"`` (``torch.distributed.fsdp``, proves each test right) and
  ``"fsdp_ref"`` (the implementation under test).
* ``ws``: world size, 2 and 4 gloo ranks.
* ``pool``: the session's worker pool of ``ws`` ranks (see ``tests/dist_harness.py``).

Keep "torch" out of test and parameter names: ``pytest -k torch`` is meant to select
exactly the ``impl="torch"`` cases.
"""

from __future__ import annotations

import pytest

from tests.fsdp.common import IMPLS


@pytest.fixture(params=IMPLS)
def impl(request) -> str:
    return request.param


@pytest.fixture(params=[2, 4], ids=["ws2", "ws4"])
def ws(request) -> int:
    return request.param


@pytest.fixture
def pool(dist_pools, ws):
    return dist_pools.get(ws)
