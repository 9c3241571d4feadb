"""The function a call of a name runs when a condition picks which import binds the name.

A module may import one name from either of two places, deciding when it is imported::

    if sys.platform == "win32":
        from ._win32 import get_zone
    else:
        from ._unix import get_zone

    try:
        from torch.utils._cxx_pytree import tree_map_only
    except ImportError:
        from torch.utils._pytree import tree_map_only

The name's first binding alone would link ``get_zone()`` to ``_win32.get_zone``; which one
runs, only the interpreter running the module knows.  The extraction records the imports a
condition picks (:attr:`~indexgen.extract.model.FileSummary.import_choices`, from
:func:`indexgen.extract.alternatives.alternatives`); :func:`picked_imports` links a call of
the bare name to the function each of them imports (and ``impl.zone()`` to each module's
``zone`` where the branches import modules as ``impl``), and :func:`import_conditions`
says under which condition, for the page.  An import of a class, a module, or of what a
module outside the build defines adds nothing (its call is read as the first binding's).
"""

from __future__ import annotations

from indexgen.analyze.context import CallEdge, make_edge
from indexgen.analyze.resolve import Resolver, Target


def _targets(resolver: Resolver, key: str, text: str) -> list[tuple[Target, str]]:
    """(target, condition) of each import a condition picks in file ``key`` for the name
    the called path ``text`` starts with: the functions of the build it reaches through
    each (through re-exports; ``impl.zone`` through each module imported as ``impl``)."""
    name, _, rest = text.partition(".")
    picked = resolver.module(key).s.import_choices.get(name)
    if not picked:
        return []
    out = []
    for line, condition in picked:
        for imp in resolver.module(key).s.imports:
            if imp.lineno == line and imp.bound_name == name:
                t = resolver.imported(imp, rest.split(".") if rest else [])
                if t is not None and t.kind == "project" and t.qualname and \
                        resolver.module(t.key).kinds.get(t.qualname) != "class":
                    out.append((t, condition))
                break
    return out


def picked_imports(resolver: Resolver, key: str, text: str, found: list[CallEdge]
                   ) -> list[CallEdge]:
    """``found`` (the edges of a call ``text`` of file ``key``) and an edge to each function
    another import a condition picks binds the name (or the module the path starts with)
    to."""
    targets = _targets(resolver, key, text) if found else []
    if not targets:
        return found
    known = {(e[3], e[5]) for e in found}
    out = list(found)
    for t, _condition in targets:
        if (t.key, t.qualname) not in known:
            known.add((t.key, t.qualname))
            out.append(make_edge((found[0][0], text, "project", t.key,
                                  resolver.anchor(t.key, t.qualname), t.qualname)))
    return out


def import_conditions(resolver: Resolver, key: str, calls: dict[str, list]
                      ) -> dict[str, str]:
    """``callee key#anchor`` -> the condition under which file ``key`` imports it, for each
    callee of ``calls`` (its edges by caller) that a picked import binds."""
    if not resolver.module(key).s.import_choices:
        return {}
    found = {}
    for out in calls.values():
        for e in out:
            if e.key:
                for t, condition in _targets(resolver, key, e.text):
                    if (t.key, t.qualname) == (e.key, e.label):
                        found[f"{e.key}#{e.anchor}"] = condition
    return found
