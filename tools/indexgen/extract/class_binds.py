"""Stage 1e (continued): class attributes that no statement of the class body gives a
source: bound at the module's top level, or to a constant.

``Element.literal_class = Literal`` after ``class Element`` (pyparsing's
``ParserElement._literalStringClass = Literal``) binds the class attribute as an assignment
in the class body would: ``self.literal_class`` and ``Element.literal_class`` in the
module's functions are ``Literal`` from then on.  The statement is read as one more source
of the class's member (anchor ``""``: read in the module's scope, which a class body sees
as well), for a class the module itself defines at its top level; an attribute of an
imported class is left out.  An assignment in a function (``Element._parse =
Element._parse_cached``) is the global pass's (:meth:`indexgen.analyze.members.Members.
extras`).

``RED = 1`` in a class body has no source (a literal is no path), but in an enum it makes a
member, ``Color.RED``, an instance of ``Color``
(:meth:`indexgen.analyze.hierarchy.Hierarchy.is_enum`): a class body's name bound to a
number, a string or bytes, written at the top of a class with a base, is recorded with the
constant's builtin type as its source (``:int``).
"""

from __future__ import annotations

import ast

from indexgen.extract.model import Definition
from indexgen.extract.sources import pairs


def bind_at_top(node: ast.AST, classes: dict[str, Definition],
                consts: dict[str, list[str]]) -> None:
    """Add what a top-level ``C.attr = value`` binds to the members of the module's class
    ``C`` (``classes``: by qualname)."""
    if type(node) is not ast.Assign or not _on_class(node.targets, classes):
        return  # (most: x = value, whose sources would all be passed over below)
    for target, source in pairs(node, consts):
        if type(target) is ast.Attribute and type(target.value) is ast.Name:
            cls = classes.get(target.value.id)
            if cls is not None and ("", source) not in cls.members.get(target.attr, ()):
                cls.members.setdefault(target.attr, []).append(("", source))


def _on_class(targets: list[ast.expr], classes: dict[str, Definition]) -> bool:
    """Whether a target (or an element of a tuple or list target, starred or not) is an
    attribute of a name of ``classes``: the only targets :func:`bind_at_top` keeps."""
    for target in targets:
        t = type(target)
        if t is ast.Attribute and type(target.value) is ast.Name and target.value.id in classes \
                or (t is ast.Tuple or t is ast.List) and _on_class(target.elts, classes) \
                or t is ast.Starred and _on_class([target.value], classes):
            return True
    return False


#: The constants a class body's name is recorded with, by their type.
_CONSTANTS = (int, str, bytes, float)


def constant_members(node: ast.AST, cls: Definition) -> None:
    """Record ``NAME = <constant>`` of a class body with a base (an enum's member, maybe)
    among the class's members; a class body binds no local names: None, always."""
    if type(node) is ast.Assign and len(node.targets) == 1 and \
            type(node.targets[0]) is ast.Name and type(node.value) is ast.Constant and \
            type(node.value.value) in _CONSTANTS and cls.bases:
        cls.members.setdefault(node.targets[0].id, []).append(
            ("", ":" + type(node.value.value).__name__))


def takes_instance(kind: str, cls: Definition | None,
                    classes: dict[str, Definition]) -> bool:
    """Whether the first parameter of a function of this kind in ``cls`` is the instance
    (the class, for a class method): a method's ``self``, and the ``ctx`` of an autograd
    Function's static ``forward`` and ``backward`` (its class, or a base of it in the same
    file, subclasses ``Function``), whose attributes are the class's."""
    if kind in ("method", "property", "classmethod"):
        return True
    seen = 0
    while kind == "staticmethod" and cls is not None and seen < 20:  # bases in this file too
        if any(b.rpartition(".")[2] == "Function" for b in cls.bases):
            return True
        cls = classes.get(cls.bases[0]) if cls.bases else None
        seen += 1
    return False
