"""How indexgen.run.pageio writes a page with its own system calls (issue 31: a cold build
writes thousands): the file it leaves is the one ``open(path, "wb")`` would have made, from
a path given as text too, and a write the system takes in parts is finished."""

from __future__ import annotations

import os
import stat

from indexgen.run import pageio


def test_a_page_gets_the_mode_open_gives_a_new_file(tmp_path):
    with open(tmp_path / "plain.md", "wb") as fh:
        fh.write(b"x")
    pageio.write_atomic(tmp_path / "page.md", b"x")
    assert (stat.S_IMODE(os.stat(tmp_path / "page.md").st_mode)
            == stat.S_IMODE(os.stat(tmp_path / "plain.md").st_mode))


def test_paths_as_text_are_written_and_compared(tmp_path):
    out = str(tmp_path)
    assert pageio.emit(out, "a/b/p.md", b"one", True) == pageio.MISSING
    assert (tmp_path / "a" / "b" / "p.md").read_bytes() == b"one"
    assert pageio.emit(out, "a/b/p.md", b"one", True) == pageio.UNCHANGED
    pageio.write_atomic(os.path.join(out, "a", "b", "p.md"), b"two")
    assert pageio.read(os.path.join(out, "a", "b", "p.md")) == b"two"
    assert sorted(os.listdir(tmp_path / "a" / "b")) == ["p.md"]


def test_a_write_taken_in_parts_is_finished(tmp_path, monkeypatch):
    real_write, calls = os.write, []

    def short_write(fd, data):
        calls.append(len(data))
        return real_write(fd, bytes(data[:5]))

    monkeypatch.setattr(pageio.os, "write", short_write)
    data = bytes(range(256)) * 3
    pageio.write_atomic(tmp_path / "p.md", data)
    monkeypatch.undo()
    assert (tmp_path / "p.md").read_bytes() == data
    assert len(calls) == -(-len(data) // 5)


def test_a_failed_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    def failing_write(fd, data):
        raise OSError("disk full")

    monkeypatch.setattr(pageio.os, "write", failing_write)
    try:
        pageio.write_atomic(tmp_path / "p.md", b"data")
    except OSError as err:
        assert "disk full" in str(err)
    else:
        raise AssertionError("the write did not fail")
    monkeypatch.undo()
    assert os.listdir(tmp_path) == []
