"""A name a nested function binds for itself is its own, not the enclosing function's.

A function nested in another has its calls listed under the enclosing function, and its
bindings were read as that function's: ``x = B()`` in a nested ``def`` gave the enclosing
function's ``x`` a ``B`` too (and the nested ``x`` the enclosing ``A``), so ``x.run()`` in
either listed both ``A.run`` and ``B.run``.  In Python they are two variables: what a
nested function assigns, loops over, binds ``with ... as`` or ``except ... as`` (not
declared ``nonlocal``) is its own over its body; a name it only reads is the enclosing
function's; a name it declares ``nonlocal`` and assigns IS the enclosing function's.
torch's ``_dynamo/output_graph.py``: a nested ``specialized_dispatch`` binds ``for check_fn
in specialization_guards``, read as the enclosing ``check_fn`` (a lambda listed as calling
itself).  Every expected edge is read off the source by hand.
"""

from __future__ import annotations

import pytest
from ig_helpers import build_files, calls_at

FILES = {
    "pkg/__init__.py": "",
    "pkg/m.py": '''
        class A:
            def run(self):
                return 1

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False


        class B:
            def run(self):
                return 2

            def __enter__(self) -> "B":
                return self

            def __exit__(self, *exc):
                return False


        class C:
            def run(self):
                return 3


        class Failed(Exception):
            def run(self):
                return 4


        def outer():
            x = A()
            x.run()  # OUTER

            def loop(items: list[B]):
                for x in items:
                    x.run()  # LOOP

            def param(x: B):
                x.run()  # PARAM

            def assign():
                x = B()
                x.run()  # ASSIGN

            def free():
                x.run()  # FREE

            def held():
                with B() as x:
                    x.run()  # WITH

            def caught():
                try:
                    pass
                except Failed as x:
                    x.run()  # EXCEPT

            def shared():
                nonlocal x
                x = C()

            def reads_shared():
                x.run()  # SHARED

            def deeper():
                x = B()

                def inmost():
                    x.run()  # DEEPER
                return inmost

            def rebinds(x: B):
                x.run()  # BEFORE
                x = C()
                x.run()  # AFTER

            return loop, param, assign, free, held, caught, shared, reads_shared, deeper, rebinds


        def tested():
            y = C()
            y.run()  # Y_OUTER

            def check(y):
                y = make()
                if isinstance(y, A):
                    y.run()  # TESTED
            return check


        def make() -> A | B:
            return A()


        def handlers():
            table = {1: lambda x: x}

            def weight(x: A):
                x.run()  # BESIDE_LAMBDA
            return table, weight


        def spread(xs: list[A], ys: list[B]):
            for x in (*xs, *ys):
                x.run()  # STARRED


        class Holder:
            part = None


        def wrappers(kind):
            if kind:
                class One:
                    def lex(self, state, other):
                        if isinstance(state.part, A) and state.part.run():  # PATH_ONE
                            return 1
                return One

            class Two:
                def lex(self, state, other):
                    if isinstance(state.part, B):
                        return state.part.run()  # PATH_TWO
            return Two
    ''',
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("own") / "src", FILES)


@pytest.mark.parametrize(("marker", "expected"), [
    # the enclosing x is an A (and, assigned nonlocal by shared, a C): never the nested
    # functions' own B or Failed
    ("OUTER", {"m:A.run", "m:C.run"}),
    # a nested function's own assignment, with ... as, except ... as: its own value only
    ("ASSIGN", {"m:B.run"}),
    ("WITH", {"m:B.run"}),
    ("EXCEPT", {"m:Failed.run"}),
    # a nested function that only reads x reads the enclosing x (A; C from shared)
    ("FREE", {"m:A.run", "m:C.run"}),
    ("SHARED", {"m:A.run", "m:C.run"}),
    # a function nested in a nested function reads the x of the one around it
    ("DEEPER", {"m:B.run"}),
    # a parameter bound again: the parameter up to there, then what it is bound to too
    ("AFTER", {"m:B.run", "m:C.run"}),
    # the enclosing y is a C, whatever the nested check binds its own y to
    ("Y_OUTER", {"m:C.run"}),
])
def test_a_nested_function_binds_its_own_names(pages, marker, expected):
    assert calls_at(pages, "pkg/m.py", marker) == expected


@pytest.mark.parametrize(("marker", "expected"), [
    # guards (these pass before the change too)
    ("LOOP", {"m:B.run"}),
    ("PARAM", {"m:B.run"}),
    ("BEFORE", {"m:B.run"}),
    # an isinstance test of a nested function's own name: of what it binds, the A
    ("TESTED", {"m:A.run"}),
    # a parameter of a lambda of the enclosing function (its own scope) of the same name
    ("BESIDE_LAMBDA", {"m:A.run"}),
])
def test_the_nested_parameters_and_loops_stay(pages, marker, expected):
    assert calls_at(pages, "pkg/m.py", marker) == expected


def test_a_loop_over_a_literal_of_spread_iterables(pages):
    """torch's ``Module._call_impl`` loops ``for hook_id, hook in
    (*_global_forward_hooks.items(), *self._forward_hooks.items())`` in its nested
    ``inner``: the target is an element of either (it was nothing)."""
    assert calls_at(pages, "pkg/m.py", "STARRED") == {"m:A.run", "m:B.run"}


@pytest.mark.parametrize(("marker", "expected"), [("PATH_ONE", {"m:A.run"}),
                                                  ("PATH_TWO", {"m:B.run"})])
def test_two_nested_functions_with_a_parameter_alike_keep_its_attribute_tests(
        pages, marker, expected):
    """lark's ``_wrap_lexer``: two classes made in one function, each with a method
    ``lex(self, lexer_state, ...)`` testing ``isinstance(lexer_state.text, TextSlice)``:
    parameters alike in every nested function need no scope of their own, and the test
    of the attribute path narrows it as in any function (a narrowing of the name itself
    would hide it)."""
    assert calls_at(pages, "pkg/m.py", marker) == expected
