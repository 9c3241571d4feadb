"""indexgen on the installed torch's ``torch/distributed/fsdp``: every link lands on a page
and anchor that exists, and the pages carry the sections a reader expects.

The package is located with ``importlib.util.find_spec`` and never imported.  Definitions,
imports and call edges are checked against the ``ast`` oracle in ``test_oracle.py``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from ig_helpers import broken_links
from indexgen import Config, build


def _fsdp_dir() -> Path:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("torch is not installed")
    path = Path(list(spec.submodule_search_locations)[0]) / "distributed" / "fsdp"
    if not path.is_dir():
        pytest.skip("torch has no distributed/fsdp")
    return path


@pytest.fixture(scope="module")
def fsdp_pages(tmp_path_factory):
    src = _fsdp_dir()
    out = tmp_path_factory.mktemp("fsdp") / "out"
    build(Config(roots=[src], out=out, jobs=2))
    return src, out


def test_links_and_sections(fsdp_pages):
    _src, out = fsdp_pages
    assert broken_links(out) == []
    page = (out / "_fully_shard/_fsdp_param_group.py_docs.md").read_text()
    assert "`dist.all_gather_into_tensor`" in page or "all_gather" in page
    assert "## Performance Considerations" in page
    assert "torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py" in page
