"""Page I/O: compare a page with what is on disk, write it atomically, find generated pages
and remove those nothing produces any more.

Only files whose first line is :data:`~indexgen.render.markdown.MARKER` are ever replaced; every write
goes through a temporary file and :func:`os.replace`, so a reader never sees half a page.
:class:`Report` is what a build or check says of the pages it compared, wrote and removed.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from indexgen.extract.model import FAILED_STATUSES, STATUS_EMPTY
from indexgen.render.markdown import MARKER

MARKER_BYTES = MARKER.encode()
#: How :func:`write_atomic` opens its temporary file: as ``open(path, "wb")`` does.
_WRITE_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
                | getattr(os, "O_BINARY", 0))

#: Results of :func:`compare`.
UNCHANGED, STALE, MISSING, CONFLICT = "unchanged", "stale", "missing", "conflict"


def sha(data: bytes) -> str:
    """Hex SHA-256 of ``data`` (how the manifest identifies sources and pages)."""
    return hashlib.sha256(data).hexdigest()


def outcomes(rows: Iterable[tuple[str, str, str]], shown: Callable[[str], str]
             ) -> tuple[list[tuple[str, str, str]], int]:
    """What a report says of the analysis, from ``(key, status, error)`` of every file in
    order: the files not analyzed, as ``(shown(key), status, error)``, and how many are
    empty."""
    not_analyzed, empty = [], 0
    for key, status, error in rows:
        if status in FAILED_STATUSES:
            not_analyzed.append((shown(key), status, error))
        elif status == STATUS_EMPTY:
            empty += 1
    return not_analyzed, empty


def read(path: str | Path) -> bytes | None:
    """The bytes of ``path``, or None when it does not exist."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        return None


def compare(path: str | Path, data: bytes) -> str:
    """``unchanged``, ``stale``, ``missing`` or ``conflict`` for a page about to be written."""
    old = read(path)
    if old is None:
        return MISSING
    if old == data:
        return UNCHANGED
    if not old.startswith(MARKER_BYTES):
        return CONFLICT
    return STALE


def write_atomic(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and :func:`os.replace` (its folder
    is made when the first write into it finds it missing).

    The file is written with :func:`os.open` and :func:`os.write`, as ``open(tmp, "wb")``
    would make it (the same flags and mode), without the buffered file's own system calls
    (a status, a terminal test, a seek): a cold build writes thousands of pages.
    """
    folder, name = os.path.split(path)
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
    try:
        try:
            fd = os.open(tmp, _WRITE_FLAGS, 0o666)
        except FileNotFoundError:
            os.makedirs(folder, exist_ok=True)
            fd = os.open(tmp, _WRITE_FLAGS, 0o666)
        try:
            view, done = memoryview(data), 0
            while done < len(view):  # one call writes a regular file whole but on error
                done += os.write(fd, view[done:])
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def emit(out: str | Path, page: str, data: bytes, write: bool) -> str:
    """Compare page ``page`` (relative to ``out``) with ``data``; write it if asked and needed.

    Returns:
        The result of :func:`compare` before writing.
    """
    path = os.path.join(out, page)
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


def remove_orphans(out: Path, expected: set[str], written: dict[str, str], write: bool,
                   report: Report) -> None:
    """The generated pages under ``out`` that are not ``expected`` (nothing produces them any
    more): removed when ``write`` (build, into ``report.removed``), else listed
    (``report.orphaned``).

    A page counts as an orphan only when the previous manifest lists it as written
    (``written``: page -> hash) and it still holds that content; any other file that starts
    with the marker (a copy a user saved under a new name, an edited page, pages of a lost
    manifest) is kept and listed in ``report.kept``.
    """
    for page in generated_pages(out, skip=expected):
        data = read(out / page)
        if page not in written:
            report.kept.append((page, "not listed in the manifest as written by indexgen"))
        elif data is None or sha(data) != written[page]:
            report.kept.append((page, "changed since indexgen wrote it"))
        elif write:
            (out / page).unlink()
            report.removed.append(page)
            prune_empty_dirs(out, posixpath.dirname(page))
        else:
            report.orphaned.append(page)


@dataclass
class Report:
    """Outcome of a build or check; paths are relative to the output directory, sorted.

    Attributes:
        written: Pages (re)written by build; for check, empty.
        removed: Orphaned pages removed by build; for check, empty.
        stale: Pages whose content differs from what build would write.
        missing: Pages build would create.
        orphaned: Pages indexgen wrote whose source no longer exists (check only; build
            removes them).
        conflicts: Pages build would write but that were not generated by indexgen.
        files: Number of source files.
        extracted: Number of files parsed (the others came from the manifest).
        rendered: Number of files whose pages were rendered.
        not_analyzed: ``(path, status, reason)`` of every file whose analysis failed (too
            large, not decodable, does not parse, unreadable, timed out); its pages say so.
        empty: Number of empty files (nothing to analyze; not a failure).
        kept: ``(page, reason)`` of files in the output folder that start with the generated
            marker but that nothing produces and that indexgen did not write as they are
            (an annotated copy, an edited orphan): they are never deleted.
        notes: Other things the reader of the report should know (an output folder inside a
            source root, left out of the pages).
    """

    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    orphaned: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    files: int = 0
    extracted: int = 0
    rendered: int = 0
    not_analyzed: list[tuple[str, str, str]] = field(default_factory=list)
    empty: int = 0
    kept: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def record(self, statuses: dict[str, str], write: bool) -> None:
        """List each page of ``statuses`` (page -> emit status) where its status puts it:
        a conflict; a page written (build) or stale or missing (check)."""
        for page, status in sorted(statuses.items()):
            if status == CONFLICT:
                self.conflicts.append(page)
            elif status in (STALE, MISSING):
                (self.written if write else self.stale if status == STALE
                 else self.missing).append(page)

    @property
    def analyzed(self) -> int:
        """Number of files whose analysis succeeded."""
        return self.files - len(self.not_analyzed) - self.empty

    @property
    def up_to_date(self) -> bool:
        """True when the committed pages equal what build would write."""
        return not (self.stale or self.missing or self.orphaned or self.conflicts)
