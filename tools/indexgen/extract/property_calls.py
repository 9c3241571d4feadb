"""Properties a class body makes by calling ``property``: ``locale = property(_get_locale,
_set_locale)`` (babel's ``Catalog``), ``ident = property(fget=_get_ident, doc="...")``.

Reading ``obj.locale`` runs the getter as for ``@property def locale``, so each such binding
becomes a definition of kind ``property`` of its own (:func:`add_called_properties`), named
by the attribute and placed at the assignment: the global pass then reads it as it reads a
decorated property (:meth:`indexgen.analyze.members.Members._defined`: the getter's return
annotation; the read is noted).  Its signature, return annotation and annotation names are
the getter's; its docstring is ``doc=`` when a string is given, else the getter's (as
``property`` itself does).  The class's attributes on the page leave the name out, as they
leave out its methods.  Unlike a decorated property's, an assignment to it in a method
still narrows what that method reads of it next (``self.locale = x; self.locale.f()``): the
extraction's narrowing runs before these definitions are added.

Only a getter that is a function of the same class body, bound before the assignment, makes
one (``property(lambda self: ...)`` and ``property(other.f)`` do not: the getter's return is
not known here), and only for a name the class defines no function or class of (``x =
property(_get)`` then ``@x.setter def x``: the decorated ``x`` stands), once.
"""

from __future__ import annotations

import ast
from inspect import cleandoc

from indexgen.extract.docstrings import first_paragraph
from indexgen.extract.model import Definition
from indexgen.extract.structure import FUNCS, Structure


def _getter_and_doc(value: ast.AST) -> tuple[str, ast.AST | None] | None:
    """The getter's name and the ``doc`` argument of a ``property(...)`` call, or None when
    ``value`` is no such call or its getter is not a plain name."""
    if type(value) is not ast.Call or type(value.func) is not ast.Name or \
            value.func.id != "property":
        return None
    args = dict(enumerate(value.args))
    if any(type(a) is ast.Starred for a in value.args):
        return None
    keywords = {k.arg: k.value for k in value.keywords}
    if None in keywords:  # property(**kw)
        return None
    getter = keywords.get("fget", args.get(0))
    if type(getter) is not ast.Name:
        return None
    return getter.id, keywords.get("doc", args.get(3))


def add_called_properties(structure: Structure) -> list[tuple[Definition, ast.AST, str]]:
    """Add a ``property`` definition for each ``name = property(getter, ...)`` statement of a
    class body whose getter is a function that body defines before it (see the module's
    docstring); return each with its getter's node and its raw docstring, for
    :func:`indexgen.extract.enrich.enrich` to make its signature and parse its docstring."""
    summary = structure.s
    nodes = {d.anchor: node for d, node in structure.defs}
    defined = {d.qualname for d in summary.definitions}
    added = []
    for cls, node in structure.defs:
        if cls.kind != "class":
            continue
        for stmt in node.body:
            if type(stmt) is not ast.Assign or len(stmt.targets) != 1 or \
                    type(stmt.targets[0]) is not ast.Name:
                continue
            found = _getter_and_doc(stmt.value)
            if found is None:
                continue
            getter = next((d for d in reversed(summary.definitions)
                           if d.parent == cls.qualname and d.name == found[0]
                           and d.lineno < stmt.lineno and type(nodes.get(d.anchor)) in FUNCS),
                          None)
            if getter is None:
                continue
            name = stmt.targets[0].id
            if f"{cls.qualname}.{name}" in defined:  # a def of the name (@name.setter)
                continue
            defined.add(f"{cls.qualname}.{name}")
            doc = found[1]
            raw = cleandoc(doc.value) if type(doc) is ast.Constant and type(doc.value) is str \
                else structure.docstrings.get(getter.anchor, "") if doc is None else ""
            prop = Definition(
                kind="property", qualname=f"{cls.qualname}.{name}", lineno=stmt.lineno,
                end_lineno=stmt.end_lineno or stmt.lineno, start_lineno=stmt.lineno,
                summary=first_paragraph(raw or ""), labels=["property"],
                anchor=structure._anchor(f"{cls.qualname}.{name}"), parent=cls.qualname,
                type_refs=list(getter.type_refs), returns=getter.returns)
            cls.attributes = [a for a in cls.attributes
                              if a[0] != name and not a[0].startswith(name + ":")]
            added.append((prop, nodes[getter.anchor], raw))
    for prop, _fget, _raw in added:
        at = next((i for i, d in enumerate(summary.definitions) if d.lineno > prop.lineno),
                  len(summary.definitions))
        summary.definitions.insert(at, prop)
    return added
