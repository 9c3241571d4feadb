"""Stage 2: the global pass over all file summaries.

It classifies imports (standard library, third party, this project) and resolves them --
through re-exports and aliases, with :class:`~indexgen.analyze.resolve.Resolver` -- to the file and
definition they reach; inverts them into "imported by"; resolves every call into the static
call graph (:mod:`indexgen.analyze.callgraph`) with what each call does through the project functions
it reaches; links the names docstrings cross-reference and annotations use; finds the tests
that import each module or reach it through calls; and groups files into folders.  Each
file's context is then put together by :mod:`indexgen.analyze.assemble`.  It reads only the
fields kept by :func:`compact`, so an incremental build that reuses cached summaries
computes exactly the same contexts as a full build.
"""

from __future__ import annotations

import posixpath
import sys
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from indexgen.analyze import assemble, callgraph
from indexgen.analyze.context import FileContext, FolderInfo
from indexgen.analyze.resolve import Resolver, Target
from indexgen.analyze.runs import FanOut
from indexgen.analyze.tests import TEST_PREFIX, test_module
from indexgen.analyze.types import Types
from indexgen.extract.docstrings import first_paragraph
from indexgen.extract.model import (
    FAILED_STATUSES,
    Call,
    FileSummary,
    ImportRecord,
    ModuleAttribute,
)
from indexgen.extract.needed import typed_local

_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ())) | {"__future__"}
_UNKNOWN = object()


def compact(summary: FileSummary) -> FileSummary:
    """The part of a summary the global pass reads (what the manifest caches).

    Keeps imports, every definition's place, bases, anchor and effects, module attributes,
    calls that are not on local values, cross-reference targets, ``__all__`` and the first
    docstring paragraph (the whole docstring for packages); drops identifiers, findings and
    per-definition prose.
    """
    keep = [_copy(d, signature="", summary="", decorators=[], labels=[], attributes=[],
                  doc=[], type_refs=[]) for d in summary.definitions]
    return replace(summary, definitions=keep, identifiers={}, findings=[],
                   docstring=compact_docstring(summary), doc=[],
                   calls=compact_calls(summary), cli_options=[], main_line=0,
                   imports=[_copy(i, category="", target="", anchor="")
                            for i in summary.imports])


def compact_docstring(summary: FileSummary) -> str:
    """The module docstring a compact summary keeps: a package's whole (its folder page shows
    it), a module's first paragraph."""
    if summary.is_package:
        return summary.docstring
    return first_paragraph(summary.docstring, collapse=False)


def compact_calls(summary: FileSummary) -> list[Call]:
    """The calls a compact summary keeps, in line order, each once: those not on local values,
    and those on local values whose type the global pass may infer (their receiver's name has
    sources, :func:`typed_local`; kept as not local: the global
    pass looks their names up in the function's ``names`` first)."""
    names = {d.anchor: d.names for d in summary.definitions if d.names}
    kept = []
    for c in summary.calls:  # in line order (indexgen.extract.calls.attribute)
        if c.local:
            if not typed_local(c, names):
                continue
            c = Call(c.caller, c.text, c.line)
        kept.append(c)
    return list(dict.fromkeys(kept))


def namespace_packages(summaries: Iterable[FileSummary], modules: set[str]) -> set[str]:
    """The module names of the folders of a build that are no module of it (no
    ``__init__.py``): namespace packages.  A root's own folder and the packages above a root
    that is itself a package (``torch`` above ``torch/distributed/fsdp``) are not among them."""
    found = set()
    for s in summaries:
        if not s.module:
            continue
        rel = s.relpath.removesuffix(".py").split("/")
        if rel[-1] == "__init__":
            rel.pop()
        parts = s.module.split(".")
        above = len(parts) - len(rel)  # the parts of the root's own package name
        for depth in range(1, len(rel)):
            name = ".".join(parts[:above + depth])
            if name not in modules:
                found.add(name)
    return found


def _copy(record: object, **changes: object) -> object:
    """A copy of a record of :mod:`indexgen.extract.model` with some fields changed: what
    :func:`dataclasses.replace` makes (those records have no ``__post_init__`` and no
    ``init=False`` field), at a fraction of its cost for the tens of thousands of
    definitions and imports of a large build."""
    new = object.__new__(type(record))
    new.__dict__.update(record.__dict__)
    new.__dict__.update(changes)
    return new


class Project:
    """All summaries of one build and the relations between them.

    Args:
        summaries: Compact summaries (see :func:`compact`) of every documented file.
        tests: Summaries of test files (imports, identifiers and calls are read), keyed by
            their path relative to the project directory.
    """

    def __init__(self, summaries: list[FileSummary], tests: dict[str, FileSummary]) -> None:
        self.files = {s.key: s for s in sorted(summaries, key=lambda s: s.key)}
        self.tests = dict(sorted(tests.items()))
        namespaces = dict(self.files)
        namespaces.update((TEST_PREFIX + path, t) for path, t in self.tests.items())
        self.resolver = Resolver(namespaces, {test_module(path): TEST_PREFIX + path
                                              for path in self.tests})
        self.types = Types(self.resolver)
        by_module = {s.module for s in self.files.values() if s.module}
        # The outermost documented packages and modules: an import inside one of them is
        # "this project" even when the exact module is not a file (e.g. a re-export).
        self.prefixes = {m for m in by_module if m.rpartition(".")[0] not in by_module}
        self.namespaces = namespace_packages(self.files.values(), by_module)
        self._categories: dict[str, str] = {}  # module -> category of imports written absolute
        self._targets: dict[tuple[str, str, str], Target | None] = {}  # see project_target

    # -- imports ---------------------------------------------------------------------------
    def category(self, imp: ImportRecord) -> str:
        """``stdlib``, ``third-party`` or ``project`` for one import."""
        if imp.written.startswith("."):
            return "project"
        module = imp.module
        if imp.name and imp.name != "*" and module in self.namespaces:
            module += "." + imp.name  # from ns import sub: the name decides, not the namespace
        found = self._categories.get(module)
        if found is None:
            found = self._categories[module] = self._module_category(module)
        return found

    def _module_category(self, module: str) -> str:
        if module in self.namespaces:
            return "project"
        parts = module.split(".")
        for i in range(1, len(parts) + 1):
            if ".".join(parts[:i]) in self.prefixes:
                return "project"
        return "stdlib" if parts[0] in _STDLIB else "third-party"

    def project_target(self, imp: ImportRecord) -> Target | None:
        """What an import of this project binds (None for other imports): the one rule every
        use of an import goes through (kept: the contexts, the folders and the render of each
        file all ask)."""
        memo = (imp.written, imp.module, imp.name)
        found = self._targets.get(memo, _UNKNOWN)
        if found is _UNKNOWN:
            found = self._targets[memo] = (self.import_target(imp)
                                           if self.category(imp) == "project" else None)
        return found

    def import_target(self, imp: ImportRecord) -> Target | None:
        """The project module or definition an import binds, following re-exports (``from
        .core import *``: the module, whose names it binds)."""
        if imp.name and imp.name != "*":
            found = self.resolver.attribute_of(imp.module, imp.name)
            if found is None or found.kind != "project":  # a module attribute all the same
                found = self._module_attribute(imp.module, imp.name) or found
            if found is None:  # maybe a name of a file not analyzed, or re-exported from one
                found = self._unread_origin(imp.module, imp.name)
        else:
            found = self.resolver.absolute(imp.module)
        return found if found is not None and found.kind == "project" else None

    def _module_attribute(self, module: str, name: str) -> Target | None:
        """The module attribute that ``from module import name`` reads, through re-exports,
        when it is one: a name its module defines whatever its value names (``_OBJ_SETATTR =
        object.__setattr__``, where :meth:`Resolver.attribute_of` follows the value to the
        builtin)."""
        for key, found in self.resolver.reexports(module, name):
            if isinstance(self.resolver.module(key).binding.get(found), ModuleAttribute):
                return Target("project", key, found)
        return None

    def _unread_origin(self, module: str, name: str) -> Target | None:
        """``name`` in the file not analyzed (one that does not parse, ...) where ``from module
        import name`` leads, directly or through re-exports (``from .broken import thing`` in
        a package): what it binds there is not known."""
        for key, found in self.resolver.reexports(module, name):
            if key not in self.files:
                return None
            if self.files[key].status in FAILED_STATUSES:
                return Target("project", key, found)
        return None

    def _read_from(self, imp: ImportRecord, target: Target) -> str:
        """The file a ``from`` import reads when that is not where the name is defined (a
        re-export through a package), else ''."""
        key = self.resolver.by_module.get(imp.module, "") if imp.name else ""
        return key if key and key != target.key else ""

    def _named_file(self, imp: ImportRecord, target: Target) -> str:
        """The file an import's line names: the submodule of ``from pkg import sub`` or
        ``import pkg.sub``, else the module ``from`` reads (``from .defaults import
        FILTERS`` names defaults.py, where filters.py defines what it re-exports)."""
        files = self.resolver.by_module
        sub = files.get(f"{imp.module}.{imp.name}" if imp.name else imp.module, "")
        found = sub if sub and not target.qualname else files.get(imp.module, "")
        return found if found in self.files else target.key

    def import_link(self, imp: ImportRecord) -> tuple[str, str]:
        """``(file key, anchor)`` of what a project import binds, ``("", "")`` otherwise."""
        target = self.project_target(imp)
        if target is None:
            return "", ""
        return target.key, self.resolver.anchor(target.key, target.qualname)

    def classify_imports(self, summary: FileSummary) -> None:
        """Set ``category``, ``target`` and ``anchor`` on every import of ``summary``."""
        for imp in summary.imports:
            imp.category = self.category(imp)
            imp.target, imp.anchor = self.import_link(imp)

    # -- contexts --------------------------------------------------------------------------
    def contexts(self, ledger: callgraph.Ledger | None = None,
                 fan: FanOut | None = None, shards: int = 1,
                 seal: assemble.Seal | None = None,
                 after_edges: Callable[[], None] | None = None) -> dict[str, Any]:
        """The :class:`FileContext` of every file, keyed by file key, or ``seal(key, ctx)``
        of each (see :func:`indexgen.analyze.assemble.contexts`; the contexts are the same
        with any fan-out)."""
        return assemble.contexts(self, ledger, fan, shards, seal, after_edges)

    def files_read(self, imp: ImportRecord, target: Target) -> list[tuple[str, str]]:
        """``(file key, name)`` an import reads: the file defining what it binds (the
        top-level name, '' for a module) and the package re-exporting it, if any."""
        found = [(target.key, target.qualname.partition(".")[0])]
        via = self._read_from(imp, target)
        if via:
            found.append((via, imp.name))
        return found

    def imports_of(self, key: str, s: FileSummary, ctx: dict[str, FileContext]) -> None:
        """Record the project imports of file ``key`` in the contexts ``ctx``: the modules it
        imports (its ``targets``) and, in each file it reads, the names it imports there."""
        for imp in s.imports:
            target = self.project_target(imp)
            if target is None:
                continue
            for file_key, name in self.files_read(imp, target):
                if file_key == key:
                    continue
                ctx[key].targets[self.files[file_key].module] = file_key
                names = ctx[file_key].imported_names.setdefault(key, [])
                if name and name not in names:
                    names.append(name)

    def bases_and_links(self, key: str, s: FileSummary, c: FileContext) -> None:
        """Link, in the context ``c`` of file ``key``, its classes' project bases, the names
        its docstrings cross-reference and, for a package, the submodules its ``__all__``
        names (``from pkg import *`` imports them)."""
        for d in s.definitions:
            for base in d.bases:
                if "(" in base:
                    continue
                target = self.resolver.name_in(key, base)
                if target and target.kind == "project" and target.qualname \
                        and target.key != key:
                    c.base_links[base] = (target.key,
                                          self.resolver.anchor(target.key, target.qualname))
        for ref in s.references:
            if ref.startswith("."):
                continue  # relative to the current class: the page resolves it
            target = self.resolver.absolute(ref) or self.resolver.name_in(key, ref)
            if target and target.kind == "project":
                c.links[ref] = (target.key, self.resolver.anchor(target.key, target.qualname))
        # __all__ or the module's __getattr__ naming a submodule
        for name in (*(s.exports or ()), *s.served) if s.is_package else ():
            sub = self.resolver.by_module.get(f"{s.module}.{name}")
            if sub:
                c.links.setdefault(name, (sub, ""))

    # -- folders ---------------------------------------------------------------------------
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
        first_line: dict[tuple[str, str], int] = {}
        for key, s in self.files.items():
            for imp in s.imports:
                target = self.project_target(imp)
                named = self._named_file(imp, target) if target else key
                if named != key:
                    first_line.setdefault((key, named), imp.statement)
        for (src, dst), line in first_line.items():
            if posixpath.dirname(src) == posixpath.dirname(dst):
                s = self.files[src]
                infos[(s.root, posixpath.dirname(s.relpath))].edges.append((src, dst, line))
        for info in infos.values():
            info.files.sort()
            info.subfolders.sort()
            info.edges.sort()
        return [infos[k] for k in sorted(infos)]
