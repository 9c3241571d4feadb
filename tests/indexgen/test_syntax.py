"""indexgen.extract.syntax.unparse writes what ast.unparse writes, with or without ast.unparse."""

from __future__ import annotations

import ast
from pathlib import Path

import indexgen
import pytest
from indexgen.extract.unparse import _quick, unparse

# Forms the quick path writes itself, and forms it must leave to ast.unparse (precedence,
# string quoting, infinities, slices, starred and keyword-splat arguments...).
EXPRESSIONS = [
    "x", "a.b.c", "Dict[str, List[int]]", "Optional['Foo']", "Callable[..., T]",
    "Tuple[int]", "Tuple[()]", "X[(a,)]", "X[a,]", "x[1:2]", "x[::2]", "X[*Ts]",
    "int | None", "A | B | C", "A | (B | C)", "(A | B)[0]", "A | (lambda: 0)",
    "(a if b else c) | d", "-1", "-1.5", "-x", "not x", "~1", "+1", "--1",
    "1e999", "-1e999", "1.5", "0x10", "10**20", "True", "None", "...", "b'x'", "1j",
    "'plain'", "'it''s'", "'say \"hi\"'", "'back\\\\slash'", "'tab\\t'", "'é'",
    "u'x'", "f'{x}'", "()", "(1,)", "(1, 2)", "[1, (2, 3)]", "[]", "[*a]",
    "f()", "f(1, k=2)", "a.b(c)(d)", "f(*a)", "f(**k)", "f(x for x in y)",
    "torch.device('cpu')", "f().x", "(1).real", "x[0].y", "{1: 2}", "{1}",
]


@pytest.mark.parametrize("source", EXPRESSIONS)
def test_unparse_matches_ast_unparse(source):
    node = ast.parse(source, mode="eval").body
    assert unparse(node) == ast.unparse(node)


@pytest.mark.parametrize("source", ["Dict[str, List[int]]", "int | None", "(1, 2)",
                                    "torch.device('cpu')", "-1.5", "'plain'", "Tuple[()]"])
def test_common_annotation_forms_take_the_quick_path(source):
    # Tuple[()] is left to ast.unparse; the others must not be.
    node = ast.parse(source, mode="eval").body
    assert (_quick(node) is None) == (source == "Tuple[()]")


def test_unparse_matches_ast_unparse_on_every_expression_of_indexgen():
    checked = 0
    for path in sorted(Path(indexgen.__file__).parent.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.expr):
                assert unparse(node) == ast.unparse(node), (path.name, node.lineno)
                checked += 1
    assert checked > 10_000
