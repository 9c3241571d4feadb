"""Stage 2: the global pass over all file summaries.

It resolves imports to project files, classifies them (standard library, third party, this
project), inverts them into "imported by", finds the test files that import each module and
groups files into folders.  It reads only the fields kept by :func:`compact`, so an incremental
build that reuses cached summaries computes exactly the same contexts as a full build.
"""

from __future__ import annotations

import posixpath
import sys
from dataclasses import replace

from indexgen.docstrings import first_paragraph
from indexgen.model import FileContext, FileSummary, FolderInfo, ImportRecord, TestReference

_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ())) | {"__future__"}


def compact(summary: FileSummary) -> FileSummary:
    """The part of a summary the global pass reads (what the manifest caches).

    Keeps imports, classes (for base-class links), top-level definitions and attributes,
    ``__all__`` and the first docstring paragraph (the whole docstring for packages); drops
    identifiers, findings, nested functions and per-definition prose.
    """
    keep = [
        replace(d, signature="", summary="", decorators=[], labels=[])
        for d in summary.definitions
        if d.kind == "class" or not d.parent
    ]
    doc = summary.docstring if summary.is_package else first_paragraph(summary.docstring,
                                                                         collapse=False)
    return replace(summary, definitions=keep, identifiers={}, findings=[], docstring=doc,
                   imports=[replace(i, category="", target="") for i in summary.imports])


def toplevel(summary: FileSummary) -> dict[str, str]:
    """Top-level names defined by a file -> their anchors (first definition wins)."""
    names: dict[str, str] = {}
    for d in summary.definitions:
        if not d.parent:
            names.setdefault(d.qualname, d.anchor)
    for a in summary.attributes:
        names.setdefault(a.name, a.anchor)
    return names


class Project:
    """All summaries of one build and the relations between them.

    Args:
        summaries: Compact summaries (see :func:`compact`) of every documented file.
        tests: Summaries of test files (only imports and identifiers are read), keyed by
            their path relative to the project directory.
    """

    def __init__(self, summaries: list[FileSummary], tests: dict[str, FileSummary]) -> None:
        self.files = {s.key: s for s in sorted(summaries, key=lambda s: s.key)}
        self.tests = dict(sorted(tests.items()))
        self.by_module: dict[str, str] = {}
        for key, s in self.files.items():
            self.by_module.setdefault(s.module, key)
        # The outermost documented packages and modules: an import inside one of them is
        # "this project" even when the exact module is not a file (e.g. a re-export).
        self.prefixes = {
            m for m in self.by_module
            if m.rpartition(".")[0] not in self.by_module
        }
        self._toplevel = {key: toplevel(s) for key, s in self.files.items()}

    def resolve(self, imp: ImportRecord) -> str:
        """Key of the project file an import reads from, or '' if it is not a project file."""
        if imp.name and imp.module:
            key = self.by_module.get(f"{imp.module}.{imp.name}")
            if key:
                return key
        elif imp.name:
            return self.by_module.get(imp.name, "")
        return self.by_module.get(imp.module, "")

    def category(self, imp: ImportRecord) -> str:
        """``stdlib``, ``third-party`` or ``project`` for one import."""
        if imp.written.startswith("."):
            return "project"
        parts = imp.module.split(".")
        for i in range(1, len(parts) + 1):
            if ".".join(parts[:i]) in self.prefixes:
                return "project"
        top = parts[0]
        if top in _STDLIB:
            return "stdlib"
        return "third-party"

    def target(self, imp: ImportRecord) -> str:
        """Key of the project file an import reads from: '' for other imports."""
        return self.resolve(imp) if self.category(imp) == "project" else ""

    def classify_imports(self, summary: FileSummary) -> None:
        """Set ``category`` and ``target`` on every import of ``summary`` (in place)."""
        for imp in summary.imports:
            imp.category = self.category(imp)
            imp.target = self.resolve(imp) if imp.category == "project" else ""

    def contexts(self) -> dict[str, FileContext]:
        """The :class:`FileContext` of every file, keyed by file key."""
        ctx = {key: FileContext() for key in self.files}
        folders: dict[str, list[str]] = {}
        for key in self.files:
            folders.setdefault(posixpath.dirname(key), []).append(key)
        for key, s in self.files.items():
            siblings = folders[posixpath.dirname(key)]
            ctx[key].siblings = [k for k in siblings if k != key]
            bound: dict[str, tuple[str, str]] = {}
            for imp in s.imports:
                target = self.target(imp)
                if not target or target == key:
                    continue
                mod = self.files[target].module
                ctx[key].targets[mod] = target
                names = ctx[target].imported_names.setdefault(key, [])
                if imp.name and self.by_module.get(f"{imp.module}.{imp.name}") != target:
                    if imp.name not in names:
                        names.append(imp.name)
                    anchor = self._toplevel[target].get(imp.name)
                    if anchor:
                        bound[imp.bound_name] = (target, anchor)
                elif imp.alias or imp.name:
                    bound[imp.bound_name] = (target, "")
            for d in s.definitions:
                for base in d.bases:
                    head, _, rest = base.partition(".")
                    if head not in bound:
                        continue
                    target, anchor = bound[head]
                    if anchor and not rest:
                        ctx[key].base_links[base] = (target, anchor)
                    elif not anchor and rest and "." not in rest:
                        anchor = self._toplevel[target].get(rest, "")
                        if anchor:
                            ctx[key].base_links[base] = (target, anchor)
        for c in ctx.values():
            c.imported_by = sorted(c.imported_names)
            for other in (*c.siblings, *c.imported_by, *c.targets.values()):
                c.lines[other] = self.files[other].summary_line
            for names in c.imported_names.values():
                names.sort()
            c.targets = dict(sorted(c.targets.items()))
            c.base_links = dict(sorted(c.base_links.items()))
        self._test_references(ctx)
        return ctx

    def _test_references(self, ctx: dict[str, FileContext]) -> None:
        for path, t in self.tests.items():
            found: dict[str, tuple[list[int], set[str], bool]] = {}
            for imp in t.imports:
                target = self.resolve(imp)
                if not target:
                    continue
                lines, names, as_module = found.setdefault(target, ([], set(), False))
                lines.append(imp.lineno)
                if imp.name and self.by_module.get(f"{imp.module}.{imp.name}") != target:
                    names.add(imp.name)
                else:
                    found[target] = (lines, names, True)
            for target, (lines, names, as_module) in found.items():
                if as_module:
                    public = {n for n in self._toplevel[target] if not n.startswith("_")}
                    names |= public & set(t.identifiers)
                ctx[target].tests.append(TestReference(path, sorted(set(lines)), sorted(names)))

    def folders(self) -> list[FolderInfo]:
        """Every folder that holds source files at any depth, sorted by (root, path)."""
        infos: dict[tuple[str, str], FolderInfo] = {}

        def get(root: str, rel: str) -> FolderInfo:
            if (root, rel) not in infos:
                infos[(root, rel)] = FolderInfo(root, rel)
                if rel:
                    parent = get(root, posixpath.dirname(rel))
                    parent.subfolders.append(rel)
            return infos[(root, rel)]

        for key, s in self.files.items():
            info = get(s.root, posixpath.dirname(s.relpath))
            info.files.append(key)
            if s.is_package:
                info.package = key
        contexts_targets = {}
        for key, s in self.files.items():
            for imp in s.imports:
                target = self.target(imp)
                if target and target != key:
                    contexts_targets.setdefault((key, target), imp.lineno)
        for (src, dst), line in contexts_targets.items():
            if posixpath.dirname(src) == posixpath.dirname(dst):
                s = self.files[src]
                infos[(s.root, posixpath.dirname(s.relpath))].edges.append((src, dst, line))
        for info in infos.values():
            info.files.sort()
            info.subfolders.sort()
            info.edges.sort()
        return [infos[k] for k in sorted(infos)]
