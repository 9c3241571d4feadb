"""pytest configuration of the indexgen tests: the ``sample`` fixture."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from ig_helpers import SAMPLE

# The fixture trees hold a test folder of their own; it is input, not tests to run.
collect_ignore_glob = ["fixtures/*"]


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    """A private copy of the sample project (``src/shop``, ``tests``, ``pyproject.toml``)."""
    dest = tmp_path / "sample"
    shutil.copytree(SAMPLE, dest)
    return dest
