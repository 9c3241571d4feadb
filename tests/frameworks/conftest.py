"""Two 2-rank gloo pools shared by every framework test: one that runs torch's
``fully_shard``, one that runs ``fsdp_ref.install()`` first (``common.use``). Started
once for the package; each rank process imports the frameworks once."""

from __future__ import annotations

import pytest

from tests.dist_harness import WorkerPool
from tests.frameworks.common import IMPLS


@pytest.fixture(scope="package")
def pools():
    started = {impl: WorkerPool(2) for impl in IMPLS}
    try:
        yield started
    finally:
        for pool in started.values():
            pool.close()
