"""What the functions of a module put into the module's own tables (a plugin registry).

``_REGISTRY = {}`` at module level says only that the name is a dict; what it holds is what
the module's functions put into it: ``_REGISTRY[f.__name__] = f`` in a decorator
``register``, ``_HANDLERS.append(f)`` in the closure a decorator factory returns, or the
module's own top level (``_HANDLERS.append(f)`` as a statement of the module).  The
extraction keeps those puts in the writing function's ``names`` (the source ``~{f}``, ``~[f]``:
:func:`indexgen.extract.bindings._appended`) where the function binds no local of that name;
:func:`module_puts` gathers them once per module, by name, and the type evaluation adds
them to the value of the module attribute (:meth:`indexgen.analyze.types.Types.of_target`),
each put read in its writer's scope: ``f`` is the writer's parameter, whatever its callers
and the decorator applications hand it (:mod:`indexgen.analyze.flows`; provisional until
the call graph's second round, like any parameter's flow).
"""

from __future__ import annotations

from indexgen.extract.model import FileSummary

#: One put: the writer's anchor, its class ('' for a plain function), the ``~`` sources.
Put = tuple[str, str, list[str]]


def module_puts(files: dict[str, FileSummary], key: str) -> dict[str, list[Put]]:
    """Name of a module attribute of file ``key`` -> the puts into it: of the module's own
    top level (``HANDLERS["x"] = f`` as a statement of the module, read at module level:
    the writer ``''``; :attr:`~indexgen.extract.model.FileSummary.module_puts`), then of
    the file's functions (a function whose sources of the name are all puts: it binds no
    local of that name)."""
    summary = files[key]
    bound = {a.name for a in summary.attributes}
    table: dict[str, list[Put]] = {}
    for name, sources in summary.module_puts.items():  # HANDLERS["x"] = f at top level
        if name in bound:
            table[name] = [("", "", sources)]
    for d in summary.definitions:
        names = d.names
        if not names or d.kind == "class":
            continue
        for name, sources in names.items():
            if name in bound and sources and all(x[0] == "~" for x in sources):
                table.setdefault(name, []).append((d.anchor, d.parent, sources))
    return table
