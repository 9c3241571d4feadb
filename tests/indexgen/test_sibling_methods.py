"""A method a subclass takes from a sibling base (:mod:`indexgen.analyze.siblings`).

``self.tokens()`` in ``Lexer`` runs, on an instance of ``PostgresLexer(PostgresBase,
Lexer)``, ``PostgresBase.tokens``: that mixin comes first in the subclass's method order,
and is no subclass of ``Lexer`` (pygments' lexers; sqlglot's dialect classes).  A mixin
after ``Lexer`` in the order does not win, nor does a sibling's method that the subclass
itself overrides.  Every expected edge is read off the source by hand (and checked against
Python's own ``__mro__`` below).
"""

from __future__ import annotations

import textwrap

from ig_helpers import callees_by_mark

SOURCE = '''
class Lexer:
    def tokens(self, text):
        return text

    def run(self, text):
        return self.tokens(text)  # SELF_CALL


class PostgresBase:
    def tokens(self, text):
        return text


class LaterMixin:
    def tokens(self, text):
        return text


class PostgresLexer(PostgresBase, Lexer):
    pass


class After(Lexer, LaterMixin):
    pass


class Own(PostgresBase, Lexer):
    def tokens(self, text):
        return text


def use(lexer: Lexer, text):
    return lexer.tokens(text)  # PARAM_CALL
'''

FILES = {"pkg/__init__.py": "", "pkg/lex.py": SOURCE}
EXPECTED = {"Lexer.tokens", "PostgresBase.tokens", "Own.tokens"}


def test_a_call_on_a_base_reaches_the_method_a_subclass_takes_from_a_sibling():
    found = callees_by_mark(FILES, "pkg/lex.py")
    assert found["SELF_CALL"] == EXPECTED, found
    assert found["PARAM_CALL"] == EXPECTED, found


def test_the_expected_methods_are_what_python_runs():
    space: dict = {}
    exec(textwrap.dedent(SOURCE), space)  # noqa: S102 - the test's own source
    run = {cls.tokens.__qualname__ for cls in (space["Lexer"], space["PostgresLexer"],
                                               space["After"], space["Own"])}
    assert run == EXPECTED
