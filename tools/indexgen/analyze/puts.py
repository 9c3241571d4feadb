"""What a module's tables hold: what its functions and its top level put into them, and the
top level of a module that imports them (a plugin registry).

``_REGISTRY = {}`` at module level says only that the name is a dict; what it holds is what
the module's functions put into it (``_REGISTRY[f.__name__] = f`` in a decorator
``register``, ``_HANDLERS.append(f)`` in the closure a decorator factory returns), what its
own top level puts into it (``_HANDLERS.append(f)`` as a statement of the module:
:mod:`indexgen.extract.module_puts`), and what another module's top level puts into it
through an import (``from .registry import HANDLERS``, then ``HANDLERS["x"] = f``), or
another module's function does.  The
extraction keeps a function's puts in its ``names`` (the source ``~{f}``, ``~[f]``:
:func:`indexgen.extract.puts_into.appended`) where the function binds no local of that name,
and those through an imported module as the name ``{registry.HANDLERS`` (an item
assignment) or ``+registry.HOOKS`` (an append);
:class:`ModulePuts` gathers them once per module, by name, and the type evaluation adds
them to the value of the module attribute (:meth:`indexgen.analyze.types.Types.of_target`),
each put read in its writer's scope: ``f`` is the writer's parameter, whatever its callers
and the decorator applications hand it (:mod:`indexgen.analyze.flows`; provisional until
the call graph's second round, like any parameter's flow).  A function's puts into a table
it imports by name are read as well (``from .registry import HANDLERS``, then
``HANDLERS[f.__name__] = f`` in a decorator of another module), and those through a module
the function's file imports, at its top level or in the function (``import registry``, then
``registry.HANDLERS[k] = f`` or ``pkg.registry.HOOKS.append(f)`` in a function): only the
names whose first name is one the file imports and the function binds no local of are
looked up (:meth:`ModulePuts._through`).
"""

from __future__ import annotations

from indexgen.analyze.local_imports import local_imports, local_targets
from indexgen.analyze.resolve import Resolver, Target
from indexgen.extract.model import Definition, FileSummary
from indexgen.extract.needed import imported_names, imported_tables

#: One put: the writer's file key, its anchor ('' for the module's top level), its class ('' for
#: a plain function), the ``~`` sources.
Put = tuple[str, str, str, list[str]]


def _puts_only(sources: list[str]) -> bool:
    """Whether a function's sources of a name are all puts (``~``): it binds no local of
    that name, so the name is the module's table, or an imported one."""
    return bool(sources) and all(x[:1] == "~" for x in sources)


class ModulePuts:
    """``make`` of a :class:`~indexgen.analyze.resolve.PerFile` table: for a file key, the
    name of each module attribute of the file -> the puts into it (:meth:`__call__`)."""

    def __init__(self, resolver: Resolver) -> None:
        self.resolver = resolver
        self._into: dict[str, dict[str, list[Put]]] | None = None  # made on first use

    def __call__(self, key: str) -> dict[str, list[Put]]:
        """The puts into the module attributes of file ``key``: of its own top level
        (``HANDLERS["x"] = f`` as a statement of the module, read at module level:
        :attr:`~indexgen.extract.model.FileSummary.module_puts`), of its functions (a
        function whose sources of the name are all puts: it binds no local of that name),
        and of other modules that import the table, at their top level or in their
        functions (``from .registry import HANDLERS`` or ``import registry``, then
        ``HANDLERS["x"] = f``, ``registry.HANDLERS["x"] = f``)."""
        summary = self.resolver.files[key]
        bound = {a.name for a in summary.attributes}
        table: dict[str, list[Put]] = {}
        for name, sources in summary.module_puts.items():
            if name in bound:
                table[name] = [(key, "", "", sources)]
        for d in summary.definitions:
            names = d.names
            if not names or d.kind == "class":
                continue
            for name, sources in names.items():
                if name in bound and _puts_only(sources):
                    table.setdefault(name, []).append((key, d.anchor, d.parent, sources))
        for name, puts in self._imported().get(key, {}).items():
            if name in bound:
                table.setdefault(name, []).extend(puts)
        return table

    def _imported(self) -> dict[str, dict[str, list[Put]]]:
        """File key -> name of a module attribute -> the puts other modules make into it
        through an import, found once over every file."""
        if self._into is None:
            self._into = {}
            for key, summary in sorted(self.resolver.files.items()):
                own = {a.name for a in summary.attributes}
                for name, sources in summary.module_puts.items():
                    if name not in own:
                        self._add(key, name, ("", "", sources))
                imported = imported_tables(summary) - own
                through = []  # (function, +registry.HOOKS or {registry.HANDLERS)
                for d in summary.definitions:
                    names = d.names
                    if not names or d.kind == "class":
                        continue
                    for name in imported.intersection(names) if imported else ():
                        if _puts_only(names[name]):
                            self._add(key, name, (d.anchor, d.parent, names[name]))
                    for name in names:  # no call but for the few it keeps
                        c = name[0]
                        if (c == "{" or c == "+" and name[1:6] != "self.") \
                                and names[name][0][0] == "~":
                            through.append((d, name))
                if through:
                    self._through(key, summary, through)
        return self._into

    def _through(self, key: str, summary: FileSummary,
                 through: list[tuple[Definition, str]]) -> None:
        """The puts of functions of file ``key`` through an attribute chain from a name the
        file imports (``{registry.HANDLERS``: ``registry.HANDLERS[k] = f``;
        ``+pkg.registry.HOOKS``: ``pkg.registry.HOOKS.append(f)``): into that module's
        table, where the chain ends at a module attribute of the tree and the function binds
        no local of the first name (a parameter ``registry``).  The first name is read as
        the function's own import where it has one, else as the module's."""
        modules = imported_names(summary)
        for d, name in through:
            sources = d.names[name]
            chain = name[1:]
            first, _, rest = chain.partition(".")
            if first not in modules or first in d.names or not _puts_only(sources):
                continue
            own = local_imports(self.resolver, key, d.anchor).get(first)
            targets = local_targets(self.resolver, own, rest.split(".")) if own else [
                self.resolver.name_in(key, chain)]
            for target in targets:
                if self._table(target):
                    self._into.setdefault(target.key, {}).setdefault(
                        target.qualname, []).append((key, d.anchor, d.parent, sources))

    def _table(self, target: Target | None) -> bool:
        """Whether ``target`` is a module attribute of a file of the tree."""
        return target is not None and target.kind == "project" \
            and target.qualname in self.resolver.module(target.key).attrs

    def _add(self, key: str, name: str, put: tuple[str, str, list[str]]) -> None:
        """Add a put of file ``key`` into ``name`` where that is an imported table of
        another file of the tree."""
        target = self.resolver.name_in(key, name)
        if self._table(target) and target.key != key:
            self._into.setdefault(target.key, {}).setdefault(target.qualname, []).append(
                (key, *put))
