"""indexgen.extract.nodes: the faster walk gives ast.walk's nodes in ast.walk's order (less
contexts and operators), and blocks what the generic reading of the fields gives."""

from __future__ import annotations

import ast
from pathlib import Path

from indexgen.extract.nodes import blocks, subtree

_LEFT_OUT = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)

_SOURCE = '''
import os.path as p, sys
from . import a as b
global_ = {**d, "k": v, 1: [x for x in y if not x], 2: {i: j for i, j in z}}
async def f(a, /, b: int = 1, *c, d=None, e, **g) -> list[int]:
    global q
    nonlocal_ = lambda u, *w, k=3: u or w and not k
    async with m() as (n, o), r:
        async for s in t:
            yield s; await n
    try:
        del a[1:2:3], b.c
    except E:
        pass
    try:
        pass
    except* (E, F) as err:
        raise X from err
    else:
        pass
    finally:
        assert a > b >= c is not d, f"{e!r:>{w}}"
    match cmd:
        case [1, *rest] | {"k": v, **kw} if v:
            pass
        case Point(x=0, y=yy) as pt:
            pass
        case None | True | -1 | 1 + 2j | "s":
            pass
    while (w := i) != 3:
        i += 1; continue
    else:
        break
class C(B, metaclass=M):
    x: int
    def m(self): return super().m(*a, **k)[::2]
'''


def _expected(tree: ast.AST) -> list[ast.AST]:
    return [n for n in ast.walk(tree) if not isinstance(n, _LEFT_OUT)]


def _trees() -> list[ast.Module]:
    """The sample, and the extraction's own modules (every statement kind they use)."""
    return [ast.parse(_SOURCE)] + [ast.parse(f.read_text()) for f in sorted(
        (Path(__file__).parents[2] / "tools" / "indexgen" / "extract").glob("*.py"))]


def test_subtree_is_ast_walk_in_order_less_contexts_and_operators() -> None:
    for tree in _trees():
        for root in [tree, *tree.body]:
            got, want = subtree(root), _expected(root)
            assert len(got) == len(want)
            assert all(a is b for a, b in zip(got, want))


def _generic_blocks(node: ast.AST) -> list:
    found = [b for b in (getattr(node, f, None) for f in ("body", "orelse", "finalbody")) if b]
    return found + [h.body for h in getattr(node, "handlers", ())] + [
        c.body for c in getattr(node, "cases", ())]


def test_blocks_of_every_node_are_the_generic_reading() -> None:
    nodes = [n for tree in _trees() for n in ast.walk(tree)]
    kinds = {type(n) for n in nodes if blocks(n)}
    assert {ast.If, ast.For, ast.While, ast.Try, ast.TryStar, ast.With, ast.Match,
            ast.FunctionDef, ast.ClassDef} <= kinds and any(not blocks(n) for n in nodes)
    for node in nodes:
        got, want = blocks(node), _generic_blocks(node)
        assert len(got) == len(want) and all(a is b for a, b in zip(got, want))
