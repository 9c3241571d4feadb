"""Names a function binds by an import of its own, where the module binds them otherwise.

An import inside a function binds a local name of that function: within it, the name is
what the import reads, whatever the module binds under that name -- a function of the
same name (``def get_pager_file(): from ._impl import get_pager_file; return
get_pager_file()`` calls ``_impl``'s, not itself), or another function's import of it.  The
module's namespace (:class:`~indexgen.analyze.resolve.Resolver`) keeps such imports only
for names the module binds nowhere else; :func:`local_targets` gives what such a name means
in the function whose lines hold the import (its nested functions too, whose calls are
the function's), for :mod:`indexgen.analyze.dispatch` and :mod:`indexgen.analyze.types`.
"""

from __future__ import annotations

from indexgen.analyze.resolve import PerFile, Resolver, Target
from indexgen.extract.model import FileSummary, ImportRecord

_TABLES = "_local_imports"  # the resolver's attribute holding the tables, per file
NO_IMPORTS: dict[str, list[ImportRecord]] = {}  # a function without any (never written)


def _table(s: FileSummary, binding: dict) -> dict[str, dict[str, list[ImportRecord]]]:
    """Anchor of a function -> name -> the function-level imports of that name in it, for
    the names one of them binds otherwise than the module's namespace does."""
    table: dict[str, dict[str, list[ImportRecord]]] = {}
    functions = [d for d in s.definitions if d.kind != "class"]
    for i in s.imports:
        if i.scope != "function" or i.name == "*":
            continue
        owner = None  # the innermost definition holding the import
        for d in functions:
            if d.lineno <= i.lineno <= d.end_lineno and (owner is None
                                                           or d.lineno >= owner.lineno):
                owner = d
        if owner is not None:
            table.setdefault(owner.anchor, {}).setdefault(i.bound_name, []).append(i)
    for anchor, names in list(table.items()):
        for name, imports in list(names.items()):
            if all(_same(binding.get(name), i) for i in imports):
                del names[name]  # each is the module's own import (often this very one)
        if not names:
            del table[anchor]
    return table


def _same(bound, i: ImportRecord) -> bool:
    """Whether the module's binding ``bound`` of a name is the import ``i`` reads."""
    return isinstance(bound, ImportRecord) and (bound.module, bound.name, bound.alias) == (
        i.module, i.name, i.alias)


def tables(resolver: Resolver) -> dict[str, dict[str, dict[str, list[ImportRecord]]]]:
    """File key -> anchor -> the names that function binds by imports of its own which the
    module binds otherwise (usually none: an empty table), each file's made on first use;
    one per resolver, which keeps it (the type evaluation holds it too, for its hot path)."""
    found = resolver.__dict__.get(_TABLES)
    if found is None:  # holds the summaries and the namespaces, never the resolver (a
        # bound method of it would: a cycle, which a build freeing its project by
        # reference counting with the cyclic collector paused would keep)
        files, modules = resolver.files, resolver._modules  # noqa: SLF001
        found = resolver.__dict__[_TABLES] = PerFile(
            lambda k: _table(files[k], modules[k].binding))
    return found


def local_imports(resolver: Resolver, key: str, anchor: str) -> dict[str, list[ImportRecord]]:
    """The names the function ``anchor`` of file ``key`` binds by imports of its own which
    the module binds otherwise (:func:`tables`; none for the module level, ``""``).  Asked
    for every call a name resolves: the tables are read without a call once made."""
    found = resolver.__dict__.get(_TABLES)
    return (found if found is not None else tables(resolver))[key].get(anchor, NO_IMPORTS)


def local_targets(resolver: Resolver, imports: list[ImportRecord],
                  rest: list[str]) -> list[Target]:
    """What ``name.rest`` means where ``imports`` bind ``name`` (each import may be the one
    that ran: a ``try``/``except ImportError`` pair of them gives both), read as the
    module's own imports are (a package's re-exports first; a module outside the build
    gives an outside name)."""
    found = []
    for i in imports:
        target = resolver.imported(i, rest)
        if target is not None and target not in found:
            found.append(target)
    return found
