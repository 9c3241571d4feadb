"""Fixtures of the race detector's tests."""

from __future__ import annotations

import pytest
import torch.distributed as dist


@pytest.fixture
def gloo_world():
    """A one-rank gloo process group in this process (for collectives and DTensors)."""
    owned = not dist.is_initialized()
    if owned:
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        yield
    finally:
        if owned:
            dist.destroy_process_group()
