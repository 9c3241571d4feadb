"""Stage 1e (continued): a name an assignment rebinds from itself (``fn = wrap(fn)``).

A function's local names are read without statement order: each source of a name is what
the name may be anywhere in the function.  On the line that rebinds a name from its own
value that reading is wrong where it matters most: ``fn = wrap(fn)`` hands ``wrap`` the value
``fn`` had before the line, never what ``wrap`` returns -- read without order, ``wrap`` is
handed its own result, and the closure it returns is listed as calling itself (jinja2's
``InternationalizationExtension._install_callables``: ``gettext =
_make_new_gettext(gettext)``).

:func:`split_rebound` gives the name, in what the calls of that statement hand on (flow
records ``<`` and references ``&``, :func:`indexgen.extract.handing.handed`), a name of its
own: ``fn·8`` (the name, a middle dot, the statement's first line; a middle dot continues an
identifier, so it is one to every reader of paths, and no source spells it), whose sources
are the name's other sources.  A statement whose value holds a ``lambda`` is left as it is:
the lambda reads the name when it runs, after the rebinding.
"""

from __future__ import annotations

import ast
from bisect import bisect_left, bisect_right
from operator import itemgetter

from indexgen.extract.arguments import without_arguments
from indexgen.extract.model import FileSummary
from indexgen.extract.nodes import subtree
from indexgen.extract.sources import pairs

#: What joins a rebound name and the line of the statement that rebinds it.
MARK = "\u00b7"
#: The first characters of the records of what a call hands on: flows and references.
_HANDING = ("<", "&")
_LINE = itemgetter(2)  # a Call's line


def split_rebound(summary: FileSummary, lazy: dict[int, dict[str, list]],
                  consts: dict[str, list[str]]) -> None:
    """Rename a rebound name in the flow records and references of the statement that
    rebinds it, and give the new name the name's other sources (see the module's
    docstring); ``lazy``: each function's plain binding statements by name (by index of the
    definition), ``consts``: the module's string constants (for :func:`pairs`)."""
    defs = summary.definitions
    calls = summary.calls
    lines: list[int] | None = None  # of the calls, in order (as they are sorted): made once
    for i, nodes in lazy.items():   # a statement may rebind a name
        d = defs[i]
        if not d.names:
            continue
        added = {}
        for name, bound in nodes.items():
            sources = d.names.get(name)
            if not sources or len(sources) < 2:
                continue
            for node in bound:
                if type(node) is not ast.Assign:
                    continue
                # the flows and references on the statement's lines that name ``name`` (its
                # function's: no definition starts inside a statement): most statements
                # have none, and then need no walk of their value nor pairs
                if lines is None:
                    lines = list(map(_LINE, calls))
                last = node.end_lineno or node.lineno
                on_line = [k for k in range(bisect_left(lines, node.lineno),
                                            bisect_right(lines, last))
                           if calls[k].text[0] in _HANDING and calls[k].caller == d.anchor
                           and name in calls[k].text]
                if not on_line or not _reads(node.value, name):
                    continue
                # (a call's arguments aside: wrap(:other, fn) on this line, wrap(:fn) on
                # another, are both what wrap returns)
                own = {without_arguments(s) for target, s in pairs(node, consts)
                       if target.id == name}
                rest = [s for s in sources if without_arguments(s) not in own]
                if not rest or len(rest) == len(sources):
                    continue
                renamed = f"{name}{MARK}{node.lineno}"
                for k in on_line:
                    call = calls[k]
                    text = _renamed(call.text, name, renamed)
                    if text != call.text:
                        calls[k] = call._replace(text=text)
                        added[renamed] = rest
        if added:
            d.names = dict(sorted({**d.names, **added}.items()))


def _reads(value: ast.AST, name: str) -> bool:
    """Whether an assigned value reads ``name`` as it is evaluated (no ``lambda`` in it)."""
    found = False
    for node in subtree(value):
        if type(node) is ast.Lambda:
            return False
        found = found or type(node) is ast.Name and node.id == name
    return found


def _renamed(text: str, name: str, renamed: str) -> str:
    """A flow record's or reference's text with the paths that start with ``name`` starting
    with ``renamed`` instead."""
    if text[0] == "&":
        return "&" + _path(text[1:], name, renamed)
    call, tab, items = text.partition("\t")
    slots = []
    for item in items.split(","):
        slot, eq, path = item.partition("=")
        slots.append(f"{slot}={_path(path, name, renamed)}" if eq else item)
    return f"{call}{tab}{','.join(slots)}"


def _path(path: str, name: str, renamed: str) -> str:
    if path == name or path.startswith(name) and path[len(name)] in ".[(":
        return renamed + path[len(name):]
    return path
