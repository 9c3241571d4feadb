"""What a module's ``__all__`` lists that nothing in it binds: one pure function of a summary
(a full one or the compact one of the manifest), which the file's pages and its package's
folder page both ask."""

from __future__ import annotations

from collections.abc import Container

from indexgen.extract.model import FileSummary

IMPLICIT = frozenset(("__doc__", "__name__", "__file__", "__spec__", "__loader__",
                       "__package__", "__path__", "__builtins__", "__cached__"))
"""Module attributes every module has without a statement binding them."""


def imported_names(s: FileSummary) -> set[str]:
    """The names a module's own imports bind at module level (``*`` for a ``*`` import)."""
    return {"*" if i.name == "*" else i.bound_name for i in s.imports
            if i.scope in ("module", "type-checking")}


def unbound_exports(s: FileSummary, submodules: Container[str]) -> list[str]:
    """Names of ``__all__`` that no statement of the module binds (a definition, an
    assignment, an import) and that name no submodule (``in submodules``): neither defined
    nor re-exported here; none when a ``*`` import may bind them.  Both pages of the file and
    its package's folder page (from a compact summary) say so of these names."""
    imported = imported_names(s)
    if not s.exports or "*" in imported:
        return []
    bound = {*IMPLICIT, *imported, *(d.qualname for d in s.definitions),
             *(a.name for a in s.attributes)}
    return [n for n in s.exports if n not in bound and n not in submodules]
