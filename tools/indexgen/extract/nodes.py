"""A faster :func:`ast.walk` for the scans that look at every node of a function or value.

:func:`ast.walk` reads each node's children with :func:`ast.iter_child_nodes`: two
generators and an ``isinstance`` test per field.  :func:`subtree` reads them with one
:func:`operator.attrgetter` call per node, made once per node type, and gives the nodes as
a list, in :func:`ast.walk`'s order (breadth first, each node's children in field order),
less the nodes no scan here asks about: expression contexts (``Load``, ``Store``) and
operators (``Add``, ``Not``, ``Eq``), which a scan reads through their parent
(``node.ctx``, ``node.op``) if at all.  The fields that hold names, flags or a constant's
value, never a node, are not read.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from operator import attrgetter
from typing import Any

#: Fields that never hold a node (names, flags, numbers, a comment), or hold only the
#: contexts and operators :func:`subtree` leaves out.
_NO_NODES = frozenset({"ctx", "op", "ops", "id", "attr", "arg", "name", "module", "level",
                       "is_async", "simple", "conversion", "kind", "type_comment", "tag",
                       "kwd_attrs", "rest", "asname", "type_ignores"})
#: Node types whose ``names`` or ``value`` field holds strings or a constant, not nodes
#: (an import's ``names`` are :class:`ast.alias` nodes, another node's ``value`` a node).
_NOT_NODES = {ast.Global: "names", ast.Nonlocal: "names", ast.Constant: "value",
              ast.MatchSingleton: "value"}

Reader = tuple[Callable[[ast.AST], Any] | None, bool]
_READERS: dict[type, Reader] = {}


def _reader(t: type) -> Reader:
    """The reader of the fields of node type ``t`` that may hold nodes, and whether it reads
    more than one (made once per type)."""
    fields = [f for f in t._fields if f not in _NO_NODES and _NOT_NODES.get(t) != f]
    return _READERS.setdefault(t, (attrgetter(*fields) if fields else None, len(fields) > 1))


def subtree(root: ast.AST) -> list[ast.AST]:
    """``root`` and every node under it, as :func:`ast.walk` gives them, less the expression
    contexts and operators (see the module's docstring)."""
    out = [root]
    readers = _READERS
    append, extend = out.append, out.extend
    k = 0
    while k < len(out):
        node = out[k]
        k += 1
        t = type(node)
        reader = readers.get(t) or _reader(t)
        read, many = reader
        if read is None:
            continue
        for v in read(node) if many else (read(node),):
            if type(v) is list:
                if None in v:  # a dict's ``**`` key, a keyword-only parameter's missing default
                    extend([x for x in v if x is not None])
                else:
                    extend(v)
            elif v is not None:
                append(v)
    return out


#: The node types with a field :func:`blocks` reads; any other (a simple statement: most)
#: holds no block.
HOLDERS = frozenset(
    t for t in vars(ast).values() if isinstance(t, type) and issubclass(t, ast.AST)
    and {"body", "orelse", "finalbody", "handlers", "cases"} & set(t._fields))


def blocks(node: ast.AST) -> list[list[ast.stmt]]:
    """The blocks of statements a statement holds, in source order: its body, ``else`` and
    ``finally``, the bodies of its ``except`` handlers and ``match`` cases (none for a simple
    statement)."""
    if type(node) not in HOLDERS:  # no such field: none, without five getattr calls
        return []
    found = [b for b in (getattr(node, f, None) for f in ("body", "orelse", "finalbody")) if b]
    return found + [h.body for h in getattr(node, "handlers", ())] + [
        c.body for c in getattr(node, "cases", ())]
