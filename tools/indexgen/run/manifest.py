"""The build manifest: what the last build read and wrote, stored beside the pages.

``OUT/.indexgen-manifest.json`` records the tool version and settings, and for each source file
its hash, the compact summary the global pass reads, a hash of its global context and the hashes
of its pages.  A rebuild re-extracts only files whose hash changed, re-renders only files whose
source or context changed (or whose pages were edited or deleted), and writes nothing otherwise.
The JSON is sorted and holds no timestamps or absolute paths, so it is committed with the pages.

:data:`__version__` is indexgen's version; :data:`CODE_VERSION` adds a hash of indexgen's own
sources, and the manifest records that: a build by other code (a new release, or an edit of
indexgen itself) reuses no cached summary and renders every page, so pages never keep what
older code made of an unchanged source.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from indexgen.analyze.context import FileContext
from indexgen.analyze.project import compact_calls, compact_docstring
from indexgen.extract.model import Call, Definition, FileSummary, ImportRecord, ModuleAttribute

__version__ = "0.3.1"
"""indexgen's version (``indexgen --version``)."""


_PACKAGE = Path(__file__).resolve().parents[1]  # the indexgen running


def code_version(package: Path = _PACKAGE) -> str:
    """:data:`__version__` and the hash of every module of the indexgen in ``package``."""
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return f"{__version__}+{digest.hexdigest()[:12]}"


CODE_VERSION = code_version()
"""What made a manifest (and the stat cache): another one reads none of it, and every page is
rendered again (see the module's docstring)."""

# Named tuples serialize as lists, dataclasses by vars(); see _COMPACT_JSON below.
_HASH_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=vars,
                              check_circular=False)


def context_hash(ctx: FileContext, summary_text: str) -> str:
    """Stable hash of everything a file's pages depend on besides its own source text.

    Args:
        ctx: The file's context from the global pass.
        summary_text: Its compact summary as the manifest writes it (:func:`summary_json`):
            hashed as that text, which the build has made already, rather than encoded again.
    """
    digest = hashlib.sha256(_HASH_JSON.encode(vars(ctx)).encode())
    digest.update(b"\n")
    digest.update(summary_text.encode())
    return digest.hexdigest()[:16]


def encode_summary(s: FileSummary) -> dict:
    """Compact summary -> JSON-friendly dict (lists instead of objects, to stay small)."""
    return _encode(s, s.docstring, s.calls)


def encode_compact(s: FileSummary) -> dict:
    """A full summary -> what :func:`encode_summary` makes of its compact summary
    (:func:`indexgen.analyze.project.compact`), without making the compact summary: the fields the
    encoding keeps are the same in both but for the docstring and the calls."""
    return _encode(s, compact_docstring(s), compact_calls(s))


def _encode(s: FileSummary, docstring: str, calls: list[Call]) -> dict:
    return {
        "root": s.root, "relpath": s.relpath, "module": s.module, "is_package": s.is_package,
        "sha256": s.sha256, "size": s.size, "status": s.status, "error": s.error,
        "encoding": s.encoding, "n_lines": s.n_lines, "docstring": docstring,
        "exports": s.exports, "checking": s.type_checking, "served": s.served, "all_computed": s.all_computed,
        "defs": [[d.kind, d.qualname, d.lineno, d.end_lineno, d.start_lineno, d.bases, d.anchor,
                  d.parent, d.overload, d.effects, d.returns, d.names,
                  list(d.members.items())]  # pairs: sorting keys would lose the fields' order
                 for d in s.definitions],
        "attrs": [[a.name, a.lineno, a.constant, a.anchor, a.alias_of, a.source]
                  for a in s.attributes],
        "imports": [[i.written, i.module, i.name, i.alias, i.lineno, i.scope, i.statement]
                    for i in s.imports],
        "calls": [[c.caller, c.text, c.line] for c in calls],
        "refs": s.references,
        "by_name": s.by_name,
        "puts": s.module_puts,
        **({"choices": s.import_choices} if s.import_choices else {}),
    }


def decode_summary(d: dict) -> FileSummary:
    """Inverse of :func:`encode_summary`."""
    return FileSummary(
        root=d["root"], relpath=d["relpath"], module=d["module"], is_package=d["is_package"],
        sha256=d["sha256"], size=d["size"], status=d["status"], error=d["error"],
        encoding=d["encoding"], n_lines=d["n_lines"], docstring=d["docstring"],
        exports=d["exports"], type_checking=list(d["checking"]), served=d["served"], all_computed=d["all_computed"],
        definitions=[Definition(kind=k, qualname=q, lineno=ln, end_lineno=e, start_lineno=st,
                                bases=list(b), anchor=a, parent=p, overload=o, effects=list(fx),
                                returns=r, names=names,
                                members={m: list(map(tuple, v)) for m, v in members}
                                if members else {})
                     for k, q, ln, e, st, b, a, p, o, fx, r, names, members in d["defs"]],
        attributes=[ModuleAttribute(name=n, lineno=ln, constant=c, anchor=a, alias_of=al,
                                    source=src)
                    for n, ln, c, a, al, src in d["attrs"]],
        imports=[ImportRecord(w, m, n, a, ln, sc, statement=st)
                 for w, m, n, a, ln, sc, st in d["imports"]],
        calls=[Call(caller, text, line) for caller, text, line in d["calls"]],
        references=list(d["refs"]),
        by_name=[tuple(x) for x in d["by_name"]],
        module_puts=d.get("puts", {}),
        import_choices={n: [tuple(x) for x in v] for n, v in d.get("choices", {}).items()},
    )


# The encoders, made once (json.dumps with options makes one per call).  Without the circular
# reference check, which costs a sixth of the C encoder's time: what they encode is made of
# fresh lists, dicts and records, never a cycle.
_COMPACT_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                                 check_circular=False)


def summary_json(encoded: dict) -> str:
    """An encoded summary as :func:`dumps` writes it: a file entry's ``summary`` may be given
    as this text (made by the worker that extracted the file, in parallel), and is then written
    as it is."""
    return _COMPACT_JSON.encode(encoded)


def _entry_json(entry: dict) -> str:
    """One file entry as sorted, compact JSON; a ``summary`` given as text (see
    :func:`summary_json`) is spliced in as the last key, where sorting puts it."""
    summary = entry.get("summary")
    if not isinstance(summary, str):
        return _COMPACT_JSON.encode(entry)
    rest = {k: v for k, v in entry.items() if k != "summary"}
    if any(k > "summary" for k in rest):
        raise ValueError(f"a manifest entry key sorts after 'summary': {sorted(rest)}")
    head = _COMPACT_JSON.encode(rest)[:-1]
    return head + ("," if rest else "") + '"summary":' + summary + "}"


def entry_line(key: str, entry: dict) -> bytes:
    """The line :func:`dumps` writes for the file entry ``entry`` of file ``key`` (made ahead
    by a build for each file as its render returns)."""
    return f" {json.dumps(key)}: {_entry_json(entry)}".encode()


def dumps(manifest: dict, lines: dict[str, bytes] | None = None) -> bytes:
    """Deterministic serialization of a manifest: sorted, one line per source file.

    One line per file keeps diffs readable and lets :mod:`json`'s C encoder do the work; the
    lines are joined as bytes, once (a manifest of torch is over 20 MB).

    Args:
        manifest: The manifest.
        lines: :func:`entry_line` of some files, made ahead from their final entries.
    """
    head = {k: v for k, v in manifest.items() if k != "files"}
    made = lines or {}
    body = [made.get(key) or entry_line(key, value)
            for key, value in sorted(manifest["files"].items())]
    return b"".join([_COMPACT_JSON.encode(head)[:-1].encode(), b',"files":{\n',
                     b",\n".join(body), b"\n}}\n"])


def only_tests_differ(old: bytes | None, manifest: dict, lines: dict[str, bytes],
                      previous: dict) -> bool:
    """Whether the manifest on disk (``old``, read as ``previous``) is ``manifest`` but for
    the test files' hashes.  Those tell the next build of a fresh clone whether it has
    anything to compute (:mod:`indexgen.run.settled`); no page shows them, so a check does
    not count a test file edited without a build that changed no page (``lines``: see
    :func:`dumps`)."""
    return old is not None and "tests" in previous and old == dumps(
        {**manifest, "tests": previous["tests"]}, lines)


def read(path: Path) -> dict:
    """The whole manifest at ``path``, or ``{}`` if it is absent or not a manifest."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and data.get("tool") == "indexgen" else {}


def written_pages(data: dict) -> dict[str, str]:
    """Page -> SHA-256 of the content indexgen wrote, for every page a manifest lists.

    Args:
        data: A manifest as returned by :func:`read` (any version).
    """
    pages: dict[str, str] = {}
    files = data.get("files")
    for entry in files.values() if isinstance(files, dict) else ():
        if isinstance(entry, dict) and isinstance(entry.get("pages"), dict):
            pages.update({p: h for p, h in entry["pages"].items() if isinstance(h, str)})
    folders = data.get("folders")
    if isinstance(folders, dict):
        pages.update({p: h for p, h in folders.items() if isinstance(h, str)})
    return pages


def cached_files(data: dict, version: str, settings: dict) -> dict:
    """The file entries of a manifest, or ``{}`` if it is from a different tool version or
    settings (then everything is rebuilt)."""
    if data.get("version") != version:
        return {}
    if data.get("settings") != json.loads(json.dumps(settings)):
        return {}
    files = data.get("files")
    return files if isinstance(files, dict) else {}
