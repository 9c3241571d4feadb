"""How an annotation is written: its alternatives, its type arguments, its dotted names.

Pure functions over the syntax of an annotation (:mod:`ast`), read by everything that reads
annotations: :class:`~indexgen.analyze.values.Annotations` (the values an annotation
admits), :class:`~indexgen.analyze.fits.Fits` (the classes it admits),
:mod:`indexgen.analyze.generics` and :mod:`indexgen.analyze.typevars` (what its type
arguments bind).  They know no names: ``Optional`` and ``Union`` are recognized by their last
name, as a type checker's reader of a stub would before resolving anything.
"""

from __future__ import annotations

import ast

#: Forms whose first argument is the type itself, qualified (``Final[int]`` is an ``int``).
QUALIFIERS = frozenset({"Annotated", "Final", "ClassVar", "Required", "NotRequired",
                        "ReadOnly"})
#: What declares a type parameter (``T = TypeVar("T")``; :mod:`indexgen.analyze.typevars`).
TYPE_PARAMETERS = frozenset({"TypeVar", "ParamSpec", "TypeVarTuple"})
_NONE_NODE = ast.Constant(None)  # the None that ``Optional[X]`` admits besides X


def alternatives(node: ast.AST) -> list[ast.AST] | None:
    """The annotations of which ``node`` admits any, where it joins or wraps others: X and
    Y of ``X | Y`` and ``Union[X, Y]``; X and None of ``Optional[X]``; X of
    ``Annotated[X, ...]`` and the other :data:`QUALIFIERS`.  None where it is one
    alternative (``list[X]``, ``Literal[...]``, anything else; its readers take names and
    strings before asking), which the reader reads itself.

    The one place that tells how an annotation splits, for both its readers:
    :class:`~indexgen.analyze.values.Annotations` (the values it admits: their union) and
    :class:`~indexgen.analyze.fits.Fits` (the classes it admits: anything where one
    alternative admits anything)."""
    t = type(node)
    if t is ast.BinOp:
        return [node.left, node.right] if type(node.op) is ast.BitOr else None
    if t is not ast.Subscript:
        return None
    value = head = node.value  # the last name of its dotted base (not one: no alternatives)
    while type(head) is ast.Attribute:
        head = head.value
    if type(head) is not ast.Name:
        return None
    last = value.attr if type(value) is ast.Attribute else value.id
    if last != "Union" and last != "Optional" and last not in QUALIFIERS:
        return None
    args = type_arguments(node)
    if last == "Union":
        return args
    return [args[0], _NONE_NODE] if last == "Optional" else [args[0]]


def type_arguments(node: ast.Subscript) -> list[ast.AST]:
    """The type arguments of a subscripted annotation (``C[A, B]``: ``A``, ``B``)."""
    return node.slice.elts if type(node.slice) is ast.Tuple else [node.slice]


def unpacked(node: ast.AST) -> bool:
    """Whether a type argument is an unpacked ``TypeVarTuple`` (``*Ts``, ``Unpack[Ts]``)."""
    return type(node) is ast.Starred or type(node) is ast.Subscript and \
        dotted(node.value).rpartition(".")[2] == "Unpack"


def parsed(cache: dict, text: str) -> ast.AST | bool:
    """The expression an annotation ``text`` is, parsed once per ``cache`` (False where it
    is no expression)."""
    node = cache.get("\0" + text)
    if node is None:
        try:
            node = ast.parse(text.strip(), mode="eval").body
        except (SyntaxError, ValueError, RecursionError):
            node = False
        cache["\0" + text] = node
    return node


def dotted(node: ast.AST) -> str:
    """``a.b.c`` of a name or attribute chain of an annotation, '' for anything else."""
    parts = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    if type(node) is not ast.Name:
        return ""
    parts.append(node.id)
    return ".".join(reversed(parts))
