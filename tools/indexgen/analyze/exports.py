"""What a module exports and what its ``__all__`` lists that nothing in it binds: pure
functions of a summary (a full one or the compact one of the manifest), which the file's pages
and its package's folder page both ask, so that they never disagree.  What a ``from .core
import *`` brings needs the other module's summary: the global pass finds it
(:func:`star_names`, kept in the file's context) and so does the folder page."""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable

from indexgen.extract.model import FileSummary, ImportRecord

IMPLICIT = frozenset(("__doc__", "__name__", "__file__", "__spec__", "__loader__",
                       "__package__", "__path__", "__builtins__", "__cached__"))
"""Module attributes every module has without a statement binding them."""


def reexport_form(i: ImportRecord) -> bool:
    """Whether an import is written in the explicit re-export form of PEP 484
    (``from .core import Thing as Thing``, ``import x as x``)."""
    return bool(i.alias) and i.alias == (i.name or i.written.rpartition(".")[2])


def public_names(s: FileSummary, star: Iterable[str] = ()) -> list[str]:
    """The names a module exports: its ``__all__`` (in its order) when it has one, else, sorted,
    the names without a leading underscore that its top-level definitions and attributes bind,
    those its top-level imports bind in the re-export form (:func:`reexport_form`) and, in a
    package ``__init__``, those it imports from its own modules (``from .core import Thing``,
    ``from pkg.core import Thing``, ``from . import sub``) and the ``star`` names its ``*``
    imports of them bring (:func:`star_names`); never a ``__future__`` feature
    (``annotations``) nor a module it only uses (``import typing as t``)."""
    if s.exports is not None:
        return list(s.exports)
    names = set(star) if s.is_package else set()
    names.update(d.qualname for d in s.definitions if not d.parent)
    names.update(a.name for a in s.attributes)
    inside = s.module + "."
    names.update(i.bound_name for i in s.imports
                 if i.scope == "module" and i.name != "*" and i.module != "__future__"
                 and (reexport_form(i) or s.is_package and i.name and (
                     i.written.startswith(".") or i.module == s.module
                     or i.module.startswith(inside))))
    return sorted(n for n in names if not n.startswith("_"))


def imported_names(s: FileSummary) -> set[str]:
    """The names a module's own imports bind at module level (``*`` for a ``*`` import)."""
    return {"*" if i.name == "*" else i.bound_name for i in s.imports
            if i.scope in ("module", "type-checking")}


def _bound(s: FileSummary) -> set[str]:
    """The names a statement of the module binds (or every module has)."""
    return {*IMPLICIT, *imported_names(s), *(d.qualname for d in s.definitions),
            *(a.name for a in s.attributes)}


def served_only(s: FileSummary, submodules: Container[str]) -> list[str]:
    """The names the module's ``__getattr__`` serves (:attr:`FileSummary.served`) that no
    statement binds and that name no submodule (``in submodules``, which its page links as
    such): the module answers for them only through that function (a deprecated alias, a
    value made on first use), in the order of ``served``; none when a ``*`` import may bind
    them (Python then never asks ``__getattr__`` for them)."""
    if not s.served or "*" in imported_names(s):
        return []
    bound = _bound(s)
    return [n for n in s.served if n not in bound and n not in submodules]


def unbound_exports(s: FileSummary, submodules: Container[str]) -> list[str]:
    """Names of ``__all__`` that no statement of the module binds (a definition, an
    assignment, an import) and that name no submodule (``in submodules``): neither defined
    nor re-exported here; none when a ``*`` import may bind them.  Both pages of the file and
    its package's folder page (from a compact summary) say so of these names."""
    imported = imported_names(s)
    if not s.exports or "*" in imported:
        return []
    bound = _bound(s)
    return [n for n in s.exports if n not in bound and n not in submodules]


def star_names(s: FileSummary, summary_of: Callable[[str], FileSummary | None]
               ) -> dict[str, str]:
    """Name -> the module it comes from, for the names the top-level ``from m import *``
    statements of a module bring from modules of the build (``summary_of(module)``: the
    module's summary, or None outside the build): what ``m`` exports
    (:func:`public_names`, its own ``*`` imports followed), the first statement winning.
    Python's rule without ``__all__`` is every name without a leading underscore, modules
    ``m`` only uses among them; the pages keep to what ``m`` itself exports, and to nothing
    of a module whose ``__all__`` is computed (its names are not known)."""
    found: dict[str, str] = {}
    seen = {s.module}
    todo = _star_modules(s)
    while todo:
        module = todo.pop(0)
        other = summary_of(module)
        if module in seen or other is None or other.all_computed:
            continue
        seen.add(module)
        for name in public_names(other):
            found.setdefault(name, module)
        if other.exports is None:  # its own * imports bring their names along
            todo += _star_modules(other)
    return found


def _star_modules(s: FileSummary) -> list[str]:
    """The modules of a module's top-level ``from m import *`` statements, in order."""
    return [i.module for i in s.imports if i.name == "*" and i.scope == "module"]
