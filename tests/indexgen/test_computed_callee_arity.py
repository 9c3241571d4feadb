"""A call of a computed value reaches only the methods that take as many arguments.

``getattr(self, f"parse_{kind}")()`` may find any ``parse_*`` method by name, but only those
that take no argument besides the instance can run (jinja2's parser listed 42 ``parse_*``
methods at such a call, 30 of them wanting a node); the call records how many it hands
even where none is a name (``indexgen.extract.handing.counted``; a call of a local name
bound only to such a value, ``f = getattr(...); f()``, too), and the method's count
is checked, the instance counted, or not, for a method read on its class and handed it
(``table[kind](builder, guard)`` with ``GuardBuilder.TYPE_MATCH`` in the table): a method
either count fits is kept.  A call
of a name is not checked (its value may be a ``functools.partial`` of the method).
Every expected edge is read off the source by hand.
"""

from __future__ import annotations

from ig_helpers import callees_by_mark

FILES = {
    "pkg/__init__.py": "",
    "pkg/parse.py": '''
        class Parser:
            def parse_for(self):
                return 1

            def parse_if(self, strict=False):
                return 2

            def parse_expression(self, node):
                return 3

            def go(self, kind):
                return getattr(self, f"parse_{kind}")()  # GETATTR

            def local(self, kind):
                f = getattr(self, f"parse_{kind}")
                return f()  # LOCAL

            def one(self, kind, node):
                return getattr(self, "parse_" + kind)(node)  # ONE


        class Guards:
            def TYPE_MATCH(self, guard):
                return 4

            def ID_MATCH(self, guard, extra, more):
                return 5


        TABLE = {"type": Guards.TYPE_MATCH, "id": Guards.ID_MATCH}


        def create(kind, builder, guard):
            return TABLE[kind](builder, guard)  # UNBOUND
    ''',
}


def test_a_computed_callee_reaches_the_methods_that_take_its_arguments():
    found = callees_by_mark(FILES, "pkg/parse.py")
    assert found["GETATTR"] == {"Parser.parse_for", "Parser.parse_if"}, found
    assert found["LOCAL"] == {"Parser.parse_for", "Parser.parse_if"}, found  # f = getattr
    # parse_for too: read on its class, it would take the node as its instance
    assert found["ONE"] == {"Parser.parse_for", "Parser.parse_if",
                            "Parser.parse_expression"}, found
    # read on the class, called with the instance first: (self, guard) takes two, and
    # ID_MATCH four, whichever way it is read
    assert found["UNBOUND"] == {"Guards.TYPE_MATCH"}, found


SAME_NAME = {
    "pkg/__init__.py": "",
    "pkg/ops.py": '''
        def sym_max(a, b):
            return a


        def sym_float(a):
            return a


        TABLE = {"max": sym_max, "float": sym_float}


        def make(method):
            op = round if method is None else TABLE[method]

            def binary(self, other):
                return op(self.hint, other.hint)  # BINARY

            def unary(self):
                return op(self.hint)  # UNARY

            return binary, unary
    ''',
}


def test_one_local_name_called_with_different_counts_reaches_what_fits_each():
    # both calls are of one definition (the nested functions' calls are make's): each is
    # resolved with what it hands, not with the first's answer
    found = callees_by_mark(SAME_NAME, "pkg/ops.py")
    assert found["BINARY"] == {"sym_max"}, found
    assert found["UNARY"] == {"sym_float"}, found
