"""Tests for indexgen.run.pageio's atomic write: folders made on demand, nothing left behind."""

from __future__ import annotations

import os

import pytest
from indexgen.run import pageio


def test_a_write_makes_missing_folders_and_replaces_whole_files(tmp_path):
    page = tmp_path / "a" / "b" / "p.md"
    pageio.write_atomic(page, b"one")
    assert page.read_bytes() == b"one"
    pageio.write_atomic(page, b"two")
    assert page.read_bytes() == b"two"
    assert os.listdir(page.parent) == ["p.md"]


def test_a_folder_removed_between_writes_is_made_again(tmp_path):
    first = tmp_path / "d" / "x.md"
    pageio.write_atomic(first, b"x")
    first.unlink()
    first.parent.rmdir()
    pageio.write_atomic(tmp_path / "d" / "y.md", b"y")
    assert (tmp_path / "d" / "y.md").read_bytes() == b"y"


def test_a_failed_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    def failing_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(pageio.os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        pageio.write_atomic(tmp_path / "f" / "p.md", b"data")
    assert os.listdir(tmp_path / "f") == []
