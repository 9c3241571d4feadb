"""Stage 1e (continued): a class attribute bound at the module's top level.

``Element.literal_class = Literal`` after ``class Element`` (pyparsing's
``ParserElement._literalStringClass = Literal``) binds the class attribute as an assignment
in the class body would: ``self.literal_class`` and ``Element.literal_class`` in the
module's functions are ``Literal`` from then on.  The statement is read as one more source
of the class's member (anchor ``""``: read in the module's scope, which a class body sees
as well), for a class the module itself defines at its top level; an attribute of an
imported class is left out.  An assignment in a function (``Element._parse =
Element._parse_cached``) is the global pass's (:meth:`indexgen.analyze.members.Members.
extras`).
"""

from __future__ import annotations

import ast

from indexgen.extract.model import Definition
from indexgen.extract.sources import pairs


def bind_at_top(node: ast.AST, classes: dict[str, Definition],
                consts: dict[str, list[str]]) -> None:
    """Add what a top-level ``C.attr = value`` binds to the members of the module's class
    ``C`` (``classes``: by qualname)."""
    if type(node) is not ast.Assign:
        return
    for target, source in pairs(node, consts):
        if type(target) is ast.Attribute and type(target.value) is ast.Name:
            cls = classes.get(target.value.id)
            if cls is not None and ("", source) not in cls.members.get(target.attr, ()):
                cls.members.setdefault(target.attr, []).append(("", source))
