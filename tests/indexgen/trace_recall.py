"""Compare the call graph of indexgen's pages with the calls a program really made.

Independent of indexgen's analysis: the observed calls (``trace_workload.record``) name code
objects by file, first line and name, and :func:`truth` maps them to definitions with the
``ast`` oracle (``oracle.py``); :func:`page_edges` reads the pages back with
``page_claims.py``.  Left out, as calls the language makes implicitly: property getters and
setters, dunder methods other than ``__init__``, an autograd Function's ``forward`` and
``backward``, class bodies run at import, and code objects that are no definition (nested
functions, lambdas, comprehensions: the pages list their calls under the enclosing one).

A generator's body starts when it is first resumed, not when it is called: the profiler
reports the call at the line that resumed it (``next(it)``, a ``for`` over it), and calling
the generator function shows nothing.  An observed call of a generator is put back at the
line where the same caller made it, its last call of that name at or before the resuming
line (:func:`_made_at`); one resumed where no call of its name comes before keeps the
resuming line (a generator made by another function, or through another name, stays where
the profiler saw it: a miss the pages cannot list, counted as one).
"""

from __future__ import annotations

import ast
from pathlib import Path

from oracle import Mod, Oracle, precision_recall
from page_claims import page_call_edges, page_callers

#: One edge: (caller file, caller anchor or '' for module level, callee file, callee anchor,
#: line of the call), files relative to the source root.
Edge = tuple[str, str, str, str, int]


def _implicit(mod: Mod, d) -> str:
    """Why a call to definition ``d`` is one the language makes implicitly, or ''."""
    node = d.node
    if isinstance(node, ast.ClassDef):
        return "class body"
    name = d.qualname.rpartition(".")[2]
    decorators = [ast.unparse(x) for x in node.decorator_list]
    if any(x.split("(")[0].rpartition(".")[2] in ("property", "cached_property")
           or x.endswith((".setter", ".getter", ".deleter")) for x in decorators):
        return "property"
    if name.startswith("__") and name.endswith("__") and name != "__init__":
        return "dunder"
    if d.parent_class and name in ("forward", "backward", "setup_context", "jvp", "vjp"):
        cls = next(x for x in mod.defs if x.qualname == d.parent_class)
        if any(ast.unparse(b).rpartition(".")[2] == "Function" for b in cls.node.bases):
            return "autograd Function"
    return ""


def truth(root: Path, observed) -> tuple[set[Edge], dict[str, int]]:
    """The observed calls as edges between definitions of the tree at ``root``, and how many
    were left out, by reason."""
    oracle = Oracle(root)
    by_file = {str((root / m.rel).resolve()): m for m in oracle.mods.values()}
    edges: set[Edge] = set()
    left_out: dict[str, int] = {}
    for callee_file, first_line, name, caller_file, line in observed:
        callee, caller = by_file.get(callee_file), by_file.get(caller_file)
        if callee is None or caller is None:
            continue
        d = next((d for d in callee.defs if d.qualname.rpartition(".")[2] == name and first_line
                  in (d.line, min([x.lineno for x in d.node.decorator_list] + [d.line]))), None)
        why = "no definition" if d is None else _implicit(callee, d)
        if why:
            left_out[why] = left_out.get(why, 0) + 1
            continue
        owner = None
        for x in caller.defs:
            if x.line <= line <= x.end and (owner is None or x.line >= owner.line):
                owner = x
        if _generator(d.node):
            line = _made_at(owner.node if owner else caller.tree, name, line)
        edges.add((caller.rel, owner.anchor if owner else "", callee.rel,
                   oracle.anchors(callee)[d.qualname], line))
    return edges, left_out


def _generator(node: ast.AST) -> bool:
    """Whether a definition is a generator function: a ``yield`` in its own body (not in a
    function or class nested in it)."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    stack = list(node.body)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(n))
    return False


def _made_at(scope: ast.AST, name: str, line: int) -> int:
    """The line where the code of ``scope`` (the caller's definition, or its module) made the
    generator ``name`` it resumed at ``line``: its last call of that name (``name(...)``,
    ``x.name(...)``) on or before ``line``; ``line`` itself where it has none before."""
    made = [n.lineno for n in ast.walk(scope) if isinstance(n, ast.Call) and n.lineno <= line
            and (n.func.id if isinstance(n.func, ast.Name) else
                 n.func.attr if isinstance(n.func, ast.Attribute) else None) == name]
    return max(made, default=line)


def page_edges(root: Path, out: Path) -> tuple[set[Edge], set[Edge]]:
    """The edges of every "Calls" and every "Called by" list of the pages in ``out``."""
    calls, callers = set(), set()
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        page = out / f"{rel}_docs.md"
        if page.is_file():
            docs = page.read_text()
            calls |= page_call_edges(docs, rel)
            callers |= page_callers(docs, rel)
    return calls, callers


def figures(true: set[Edge], calls: set[Edge], callers: set[Edge]) -> dict[str, float]:
    """Recall of the observed calls on each view, and the share of the "Calls" edges from
    definitions that ran which were observed (a lower bound of precision: a call that can
    happen need not have happened in the workload)."""
    ran = {(e[0], e[1]) for e in true}
    claimed = {e for e in calls if (e[0], e[1]) in ran}
    return {"calls_recall": precision_recall(calls, true)[1],
            "called_by_recall": precision_recall(callers, true)[1],
            "observed_share": precision_recall(claimed, true)[0],
            "observed": len(true)}
