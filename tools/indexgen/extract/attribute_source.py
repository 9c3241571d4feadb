"""Where a module attribute's value comes from, as the type analysis reads it.

A module-level assignment ``name = value`` (or ``name: T = value``) gets one *source*: ``:T``
when the code states a type the value has, ``=path`` when the value is a path the analysis can
evaluate (a call, an attribute, a literal table), or ``''`` when neither says anything.  The
rules choose the more telling of the two where both are written: a literal table of functions
says more than its ``dict[str, Callable]`` annotation, and the class of ``x: Mapping = C()``
more than ``Mapping``.  :class:`indexgen.extract.structure.Structure` records the result on
each :class:`~indexgen.extract.model.ModuleAttribute`.
"""

from __future__ import annotations

import ast
import re

from indexgen.extract.syntax import annotation as annotation_text
from indexgen.extract.syntax import dotted, literal, path

#: Values read as a path: a call, a subscript, an attribute of a value
#: (``structure = converter.structure``, where the alias names nothing the build defines).
_PATHS = (ast.Call, ast.Subscript, ast.Attribute)
_LITERALS = (ast.List, ast.Tuple, ast.Dict, ast.Set)

#: The last names of the generic types and special forms whose subscript, assigned to a name
#: at module level, makes a type alias (``Renderable = Union[Text, Panel]``).
_TYPING_FORMS = frozenset({"Union", "Optional", "Callable", "Type", "List", "Dict", "Tuple",
                           "Set", "FrozenSet", "Sequence", "Mapping", "MutableMapping",
                           "Iterable", "Iterator", "Generator", "Annotated", "type", "list",
                           "dict", "tuple", "set", "frozenset"})

#: An annotation naming an abstract container (``Mapping[str, Loader]``): it says a value is
#: some mapping or sequence, not which class; where the code also says which (a constructor
#: call, a ``return`` of a project class), that is read as well.
ABSTRACT_CONTAINER = re.compile(r"\b(?:Mapping|MutableMapping|Sequence|MutableSequence|"
                                r"Iterable|Collection|AbstractSet|MutableSet)\b")


def attribute_source(node: ast.Assign | ast.AnnAssign) -> str:
    """The source of a module-level assignment (see the module's docstring)."""
    value = node.value
    source = ":" + annotation_text(node.annotation) if type(node) is ast.AnnAssign else ""
    if source[1:].rpartition(".")[2] == "TypeAlias" and value is not None:
        return ":" + annotation_text(value)  # X: TypeAlias = list[Part]: a list
    if source and type(value) in _LITERALS:
        held = literal(value)  # a table of functions says more than its type
        return "=" + held if held else source
    if source and type(value) is ast.Call and ABSTRACT_CONTAINER.search(source):
        found = path(value)  # x: Mapping = LRUCache(): the class says more
        return "=" + found if found else source
    if source or value is None:
        return source
    if type(value) is ast.Subscript and _typing_form(value):
        return ":" + annotation_text(value)  # X = Union[A, B]: an alias all the same
    source = _type_var(value)
    if not source:
        found = path(value) if type(value) in _PATHS else literal(value)
        source = "=" + found if found else ""
    return source


def _type_var(value: ast.AST) -> str:
    """The source of ``T = TypeVar("T", bound=Base)`` (or ``TypeVar("T", A, B)``): ``:`` and
    what a value of type T is (its bound, or the union of its constraints); '' otherwise."""
    if type(value) is not ast.Call or dotted(value.func).rpartition(".")[2] != "TypeVar":
        return ""
    for k in value.keywords:
        if k.arg == "bound":
            return ":" + annotation_text(k.value)
    if len(value.args) > 1:
        return ":" + " | ".join(annotation_text(a) for a in value.args[1:])
    return ""


def _typing_form(node: ast.Subscript) -> bool:
    """Whether a subscript is one of :data:`_TYPING_FORMS` (``Union[...]``,
    ``t.Optional[...]``, ``list[Part]``) written by its name."""
    base = dotted(node.value)
    return "(...)" not in base and base.rpartition(".")[2] in _TYPING_FORMS
