"""Fixtures of the policies / composability suite.

``impl``: ``"torch"`` (``torch.distributed.fsdp``: proves each scenario right) and
``"fsdp_ref"`` (the implementation under test).  The worker pools (``pool2``,
``pool4``, ``dist_pools``) come from ``tests/conftest.py``.  Keep "torch" out of test
and parameter names so that ``pytest -k torch`` selects exactly the torch cases.
"""

from __future__ import annotations

import pytest

from tests.fsdp.common import IMPLS


@pytest.fixture(params=IMPLS)
def impl(request) -> str:
    return request.param
