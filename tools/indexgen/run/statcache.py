"""The stat cache: what a rebuild with nothing changed can know without reading a file.

``OUT/.indexgen-cache/stat.json`` (a folder that ignores itself in git, so the committed
pages stay deterministic) records, after each build, the size and modification time of every
source, test file and page, with the hash of each source.  A rebuild first compares those with
``os.stat``: when nothing differs it is done without reading a byte (the *fast path*); when
something differs, sources whose stat still matches keep their cached hash instead of being
read and hashed again, and pages whose stat matches count as unchanged.

A source modified within :data:`RACY_NS` of the cache being written is never trusted (its
modification time might not have ticked since), the same precaution git takes with its index.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from indexgen.run import pageio

CACHE_DIR = ".indexgen-cache"
RACY_NS = 2_000_000_000

Stat = tuple[int, int]


def stat_of(path: Path | str) -> Stat | None:
    """``(size, mtime_ns)`` of a file, or None when it cannot be stat'ed."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


class StatCache:
    """The stat cache of one output folder.

    Args:
        out: The output folder.
        version: indexgen's version (a cache from another version is ignored).
        settings: The build settings (a cache made with other settings is ignored).
    """

    def __init__(self, out: Path, version: str, settings: dict) -> None:
        self.path = out / CACHE_DIR / "stat.json"
        self.data: dict = {}
        try:
            data = json.loads(self.path.read_bytes())
        except (OSError, ValueError):
            return
        if isinstance(data, dict) and data.get("version") == version \
                and data.get("settings") == json.loads(json.dumps(settings)):
            self.data = data

    def _trusted(self, recorded: list | None, now: Stat | None) -> bool:
        if not recorded or now is None or tuple(recorded[:2]) != now:
            return False
        return now[1] < self.data.get("written_at", 0) - RACY_NS

    def source_sha(self, key: str, now: Stat | None) -> str | None:
        """The cached hash of a source whose stat has not changed, else None."""
        recorded = self.data.get("sources", {}).get(key)
        return recorded[2] if self._trusted(recorded, now) else None

    def page_unchanged(self, page: str, now: Stat | None) -> bool:
        """Whether a page is still exactly as the last build left it."""
        recorded = self.data.get("outputs", {}).get(page)
        return bool(recorded) and now is not None and tuple(recorded) == now

    def unchanged(self, sources: dict[str, Stat | None], tests: dict[str, Stat | None],
                  out: Path) -> bool:
        """Whether sources, tests and every page and file of ``out`` are as last recorded."""
        if not self.data:
            return False
        recorded = self.data.get("sources", {})
        if set(recorded) != set(sources) or not all(
                self._trusted(recorded[k], st) for k, st in sources.items()):
            return False
        if self.data.get("tests", {}) != {k: list(st) if st else None for k, st in tests.items()}:
            return False
        outputs = self.data.get("outputs", {})
        if set(outputs) != set(_files_of(out)):
            return False
        return all(self.page_unchanged(page, stat_of(out / page)) for page in outputs)

    def save(self, sources: dict[str, tuple[Stat | None, str]], tests: dict[str, Stat | None],
             out: Path, report: dict) -> None:
        """Record the state after a build (nothing when the output folder is unusable)."""
        folder = self.path.parent
        outputs = {page: list(st) for page in _files_of(out)
                   if (st := stat_of(out / page)) is not None}
        data = {"version": self.data.get("version"), "settings": self.data.get("settings"),
                "written_at": time.time_ns(), "report": report,
                "sources": {k: [*st, sha] for k, (st, sha) in sorted(sources.items()) if st},
                "tests": {k: list(st) if st else None for k, st in sorted(tests.items())},
                "outputs": outputs}
        folder.mkdir(parents=True, exist_ok=True)
        ignore = folder / ".gitignore"
        if not ignore.exists():
            pageio.write_atomic(ignore, b"# indexgen's stat cache: not meant to be committed\n*\n")
        pageio.write_atomic(self.path, json.dumps(data, sort_keys=True).encode())

    def set_identity(self, version: str, settings: dict) -> None:
        """The version and settings the next :meth:`save` records."""
        self.data["version"], self.data["settings"] = version, settings


def _files_of(out: Path) -> list[str]:
    """Every file under ``out`` outside hidden folders (pages and the manifest)."""
    found = []
    for folder, dirs, files in os.walk(out):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        rel = os.path.relpath(folder, out)
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        found += [prefix + name for name in files if not name.startswith(".") or
                  name == ".indexgen-manifest.json"]
    return found
