"""Page I/O: compare a page with what is on disk, write it atomically, find generated pages.

Only files whose first line is :data:`~indexgen.markdown.MARKER` are ever replaced; every write
goes through a temporary file and :func:`os.replace`, so a reader never sees half a page.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
from pathlib import Path

from indexgen.markdown import MARKER

MARKER_BYTES = MARKER.encode()

#: Results of :func:`compare`.
UNCHANGED, STALE, MISSING, CONFLICT = "unchanged", "stale", "missing", "conflict"


def sha(data: bytes) -> str:
    """Hex SHA-256 of ``data`` (how the manifest identifies sources and pages)."""
    return hashlib.sha256(data).hexdigest()


def read(path: Path) -> bytes | None:
    """The bytes of ``path``, or None when it does not exist."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def compare(path: Path, data: bytes) -> str:
    """``unchanged``, ``stale``, ``missing`` or ``conflict`` for a page about to be written."""
    old = read(path)
    if old is None:
        return MISSING
    if old == data:
        return UNCHANGED
    if not old.startswith(MARKER_BYTES):
        return CONFLICT
    return STALE


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and :func:`os.replace` (its folder
    is made when the first write into it finds it missing)."""
    tmp = os.path.join(os.path.dirname(path), f".{path.name}.{os.getpid()}.tmp")
    try:
        try:
            fh = open(tmp, "wb")
        except FileNotFoundError:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fh = open(tmp, "wb")
        with fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def emit(out: Path, page: str, data: bytes, write: bool) -> str:
    """Compare page ``page`` (relative to ``out``) with ``data``; write it if asked and needed.

    Returns:
        The result of :func:`compare` before writing.
    """
    path = out / page
    status = compare(path, data)
    if write and status in (MISSING, STALE):
        write_atomic(path, data)
    return status


def generated_pages(out: Path, skip: set[str]) -> list[str]:
    """Markdown files under ``out`` whose first line is the marker (sorted), except ``skip``."""
    found = []
    if not out.is_dir():
        return found
    for folder, dirs, files in os.walk(out):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if not name.endswith(".md"):
                continue
            path = Path(folder) / name
            if path.relative_to(out).as_posix() in skip:
                continue
            try:
                with open(path, "rb") as fh:
                    head = fh.read(len(MARKER_BYTES))
            except OSError:
                continue
            if head == MARKER_BYTES:
                found.append(path.relative_to(out).as_posix())
    return sorted(found)


def prune_empty_dirs(out: Path, folder: str) -> None:
    """Remove ``out/folder`` and its parents below ``out`` while they are empty."""
    while folder:
        path = out / folder
        try:
            path.rmdir()  # only succeeds when empty
        except OSError:
            return
        folder = posixpath.dirname(folder)
