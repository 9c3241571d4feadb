"""Snapshot test: the sample project's pages equal the reviewed files in fixtures/expected.

After an intended change of the output, run ``tests/indexgen/regen_snapshots.py`` and review
the diff of ``tests/indexgen/fixtures/expected``.
"""

from __future__ import annotations

import shutil

from ig_helpers import SAMPLE, read_tree
from indexgen import build
from indexgen.layout import MANIFEST_NAME
from regen_snapshots import EXPECTED, snapshot_config, without_code_version


def test_sample_pages_match_snapshot(tmp_path):
    sample = tmp_path / "sample"
    shutil.copytree(SAMPLE, sample)
    out = tmp_path / "out"
    build(snapshot_config(sample, out))
    got, want = read_tree(out), read_tree(EXPECTED)
    got[MANIFEST_NAME] = without_code_version(got[MANIFEST_NAME])
    assert sorted(got) == sorted(want)
    for name in sorted(want):
        assert got[name].decode() == want[name].decode(), f"{name} differs from the snapshot"
