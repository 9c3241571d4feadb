"""Stage 1b (continued): the definitions a condition selects at import time (issue 31).

A module may bind one name several times, each under a condition Python decides when it
imports the module::

    if sys.version_info >= (3, 11):
        def parse(text): ...
    else:
        def parse(text): ...

    try:
        from ._speedups import escape
    except ImportError:
        def escape(text): ...

A call of ``parse`` may run either definition; which one, only the interpreter running it
knows.  :class:`~indexgen.extract.structure.Structure` records every binding of a name in a
module or class body (a definition, or at module level an import) with the branches that
hold it; :func:`alternatives` finds the definitions that may be the name's value once the
body has run -- a binding hides the earlier ones of its own branch (an unconditional
redefinition hides them all) -- and says under which condition each is made.  The global
pass links a call of the name to every one of them, each marked with its condition.

A module-level assignment of one name to another binds the name too, to whatever the other
name is: ``except ImportError: _sumprod = dotproduct`` (more-itertools' fallback for
``from math import sumprod as _sumprod``), ``else: batched = _batched``.  Where the other
name is a function the module defines, that function is one of the definitions the name may
be (:func:`mark_alternatives`: ``?=`` in its ``names``, the name and the condition).

One condition is never true at run time: ``if TYPE_CHECKING:``.  :func:`checking_only` finds
the names a module binds under it alone (jinja2's ``VisitCallable`` protocol): type checkers
see them, ``from module import name`` fails when it runs.
"""

from __future__ import annotations

import ast

from indexgen.extract.model import definition_anchors
from indexgen.extract.syntax import blocks, is_type_checking, unparse

#: One binding: (qualname, anchor of the definition, ``%line`` for an import of the name
#: at that line or ``=name`` for an assignment of a plain name, the branches that hold it:
#: ``("if" | "else", test)``, ``("try", None)``, ``("except", handler type)``).
Binding = tuple[str, str, tuple]
_LONG = 60  # characters of a test shown in a condition
_BLOCKS = tuple(getattr(ast, n) for n in ("Try", "TryStar", "With", "AsyncWith", "For",
                                          "AsyncFor", "While") if hasattr(ast, n))


def alternatives(bound: list[Binding]) -> dict[str, str]:
    """Anchor -> condition of each definition that may be its name's value when the name is
    bound more than once ('' for one made unconditionally); none for a name bound once.  An
    assignment ``name = other`` that may be the value is keyed ``=other`` and a tab and
    ``name``; an import of it on line ``n``, ``%n`` and a tab and ``name``."""
    groups: dict[str, list[Binding]] = {}
    for binding in bound:
        groups.setdefault(binding[0], []).append(binding)
    found: dict[str, str] = {}
    for group in groups.values():
        if len(group) < 2:
            continue
        live: list[Binding] = []
        for binding in group:  # in source order: a binding hides those of its branch
            branches = binding[2]
            live = [b for b in live if branches and b[2] != branches]
            live.append(binding)
        for name, anchor, branches in live:
            if anchor:
                found[f"{anchor}\t{name}" if anchor[0] in "=%" else anchor] = condition(branches)
    return found


def mark_alternatives(found: dict[str, str], defs: list, index: dict[str, int],
                      summary) -> None:
    """Record :func:`alternatives`' ``found`` on the definitions (``index``: anchor -> place
    in ``defs``): ``?`` and the condition on each definition; ``?=`` and ``name``, a tab and
    the condition on a function of the module that ``name = function`` makes the name's
    value (a name or a function defined twice: the definition a reference to it lands on,
    :func:`~indexgen.extract.model.definition_anchors`); the imports in the ``summary``'s
    :attr:`~indexgen.extract.model.FileSummary.import_choices`, where two imports are among
    the bindings a condition picks (``if sys.platform == "win32": from ._win32 import
    zone`` / ``else: from ._unix import zone``)."""
    imported: dict[str, list[tuple[int, str]]] = {}
    for anchor, made in found.items():
        if anchor[0] == "%":
            line, _, name = anchor[1:].partition("\t")
            imported.setdefault(name, []).append((int(line), made))
    summary.import_choices.update((n, v) for n, v in imported.items() if len(v) > 1)
    lands_on = None
    for anchor, made in found.items():
        if anchor[0] == "%":
            continue
        if anchor[0] != "=":
            defs[index[anchor]].names["?"] = [made]
            continue
        value, _, name = anchor[1:].partition("\t")
        if lands_on is None:
            lands_on = definition_anchors(defs)
        i = index.get(lands_on.get(value, ""))
        if i is not None and defs[i].parent == "" and defs[i].kind != "class":
            defs[i].names.setdefault("?=", []).append(f"{name}\t{made}")


def condition(branches: tuple) -> str:
    """The condition under which a body's binding is made, as a reader says it."""
    return " and ".join(_clause(kind, node) for kind, node in branches)


def _clause(kind: str, node: ast.AST | None) -> str:
    if kind == "try":
        return "the try block raises nothing"
    if kind == "except":
        return "the try block raises " + (_text(node) if node is not None else "an exception")
    return _text(node) if kind == "if" else f"not ({_text(node)})"


def _text(node: ast.AST) -> str:
    try:
        text = unparse(node)
    except Exception:  # noqa: BLE001 - unparse of odd trees must not stop extraction
        return "..."
    return text if len(text) <= _LONG else text[: _LONG - 3] + "..."


def checking_only(body: list[ast.stmt], spans: list[tuple[int, int]] | None = None
                  ) -> list[str]:
    """The names the module of ``body`` binds only under ``if TYPE_CHECKING:`` (a definition,
    an assignment or an import there, and none outside it), sorted; none when the module
    defines ``__getattr__``, which may make any name at run time.  ``spans``, if given,
    receives the (first, last) lines of the bodies of those ``if`` statements, outermost
    only: what runs for type checkers alone."""
    runtime: set[str] = set()
    checking: set[str] = set()
    stack = [(body, False)]
    while stack:
        statements, under = stack.pop()
        for node in statements:
            t = type(node)
            if t is ast.If:
                test = under or is_type_checking(node.test)
                if test and not under and spans is not None and node.body:
                    spans.append((node.body[0].lineno,
                                  node.body[-1].end_lineno or node.body[-1].lineno))
                stack += [(node.body, test), (node.orelse, under)]
            elif t in _BLOCKS or t is ast.Match:
                stack += [(block, under) for block in blocks(node)]
            else:
                (checking if under else runtime).update(_bound_names(node))
    return [] if "__getattr__" in runtime else sorted(checking - runtime)


def _bound_names(node: ast.stmt) -> list[str]:
    """The names one module-level statement binds: a definition's, an import's, the plain
    names an assignment targets."""
    t = type(node)
    if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
        return [node.name]
    if t is ast.Import:
        return [a.asname or a.name.partition(".")[0] for a in node.names]
    if t is ast.ImportFrom:
        return [a.asname or a.name for a in node.names if a.name != "*"]
    targets = node.targets if t is ast.Assign else [node.target] if t is ast.AnnAssign else []
    names = []
    for target in targets:
        elements = target.elts if type(target) in (ast.Tuple, ast.List) else [target]
        names += [e.id for e in elements if type(e) is ast.Name]
    return names
