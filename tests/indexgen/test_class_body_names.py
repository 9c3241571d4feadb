"""A class body calls the names it has bound itself (issue 31; pygments' lexers: 182 calls
missed, "to a name bound at run time").

While a class body runs, a name it bound before (a ``def``, a nested ``class``, an
assignment) is its own local: a call at class-body level reaches that, not a module's name
of the same spelling (:mod:`indexgen.extract.class_scope`).  What runs in a scope of its own
does not see it -- a method's body, a comprehension past its first iterable -- nor does a
call before the binding.  A function of the body called by its name there is a plain
function, handed every argument (not a method handed the instance first).  Every expected
edge is read off the source by hand.
"""

from __future__ import annotations

import pytest
from ig_helpers import callees_by_mark

FILES = {
    "pkg/__init__.py": "",
    "pkg/lexer.py": '''
        def call_indent(level):
            return level


        def later(x):
            return x


        def shout(x):
            return x


        def on_token(x):
            return x


        def apply(n, func):  # the module's names of the body's: not what the body calls
            return n


        def first(func, n=0):
            return n


        def loud(x):
            return x


        class Token:
            pass


        class Lexer:
            early = later(0)  # BEFORE_BINDING

            def call_indent(level):
                return level

            def later(x):
                return x

            def apply(n, func):
                return func(n)  # HANDED

            def first(func, n=0):
                return n

            class Token:
                def __init__(self, kind):
                    self.kind = kind

                @staticmethod
                def make(kind):
                    return kind

            loud = shout

            table = {"root": [call_indent(7)]}  # DEF
            token = Token("x")  # CLASS
            made = Token.make("y")  # NESTED_ATTRIBUTE
            said = loud("z")  # ASSIGNED
            shown = apply(3, on_token)  # APPLY
            kept = first(on_token, n=3)  # FIRST_ONLY
            first = [n for n in later(range(3))]  # FIRST_ITERABLE
            items = [call_indent(n) for n in range(3)]  # COMPREHENSION

            def method(self, n=later(1)):  # DEFAULT
                return call_indent(n)  # METHOD
    ''',
}


@pytest.fixture(scope="module")
def called() -> dict[str, set[str]]:
    return callees_by_mark(FILES, "pkg/lexer.py", called_only=True)


@pytest.mark.parametrize(("mark", "callees"), [
    ("DEF", {"Lexer.call_indent"}),
    ("CLASS", {"Lexer.Token.__init__"}),
    ("NESTED_ATTRIBUTE", {"Lexer.Token.make"}),
    ("ASSIGNED", {"shout"}),
    ("APPLY", {"Lexer.apply"}),
    ("FIRST_ONLY", {"Lexer.first"}),  # what it hands its first parameter alone
    ("FIRST_ITERABLE", {"Lexer.later"}),
    ("DEFAULT", {"Lexer.later"}),
])
def test_a_class_body_calls_what_it_bound_before(called, mark, callees):
    assert called[mark] == callees


@pytest.mark.parametrize(("mark", "callees"), [
    ("BEFORE_BINDING", {"later"}),  # the body binds its own later() only after
    ("METHOD", {"call_indent"}),  # a method's body sees the module's names
    ("COMPREHENSION", {"call_indent"}),  # so does a comprehension's element
])
def test_what_runs_elsewhere_calls_the_modules_name(called, mark, callees):
    assert called[mark] == callees


def test_a_body_function_called_by_name_is_handed_every_argument(called):
    # apply(3, on_token) in the body: func is on_token (not the 3, as a method's would be)
    assert called["HANDED"] == {"on_token"}


VALUES = {
    "pkg/__init__.py": "",
    "pkg/grammar.py": '''
        class Part:
            def __add__(self, other) -> "Part":
                return self

            def __radd__(self, other) -> "Part":
                return self

            def named(self, name):
                return self


        class Grammar:
            word = Part()
            pair = (word + word).named("pair")  # OPERAND
            prefixed = ("::" + word).named("prefixed")  # RIGHT_OPERAND
    ''',
}


def test_a_class_body_reads_the_values_it_bound_inside_expressions():
    # (pyparsing's pyparsing_common: `("::ffff:" + ipv4_address).set_name(...)`, where
    # ipv4_address is the body's own name: the evaluation reads it as the class's member,
    # Types._name, where the call's text does not start with it for class_scope to write)
    found = callees_by_mark(VALUES, "pkg/grammar.py", called_only=True)
    assert found["OPERAND"] == {"Part.named"}, found
    assert found["RIGHT_OPERAND"] == {"Part.named"}, found
