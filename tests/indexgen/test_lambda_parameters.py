"""A lambda's parameters are what the call sites that call it hand them.

A named function's parameters read what its callers hand (``indexgen.analyze.flows``); a
lambda's did not, so ``lambda self, e: self.binary(e)`` in a class-body dispatch table,
called as ``self.T["a"](self, e)``, listed nothing for ``self.binary(e)``.  A lambda written
as a value is a closure of the definition around it (a class body's: the class), and its
parameters hold what the calls that reach it hand: through a name bound to it, a function
that returns it, a table of a class body or of a function and a lookup in it (``t[k](...)``,
``t.get(k)`` then a call).  Its calls are listed under the definition around it, as the
trace oracle attributes them.  Every expected edge is read off the source by hand.
"""

from __future__ import annotations

from ig_helpers import callees_by_mark

FILES = {
    "pkg/__init__.py": "",
    "pkg/m.py": '''
        class A:
            def run(self):
                return 1


        class B:
            def stop(self):
                return 2


        def make():
            return lambda a: a.run()  # RETURNED


        def user():
            x = A()
            g = make()
            g(x)


        def local():
            f = lambda a: a.run()  # LOCAL
            x = A()
            f(x)


        def local_table(key):
            table = {"a": lambda b: b.stop()}  # FUNCTION_TABLE
            y = B()
            table[key](y)


        class Gen:
            T = {"a": lambda self, e: self.binary(e)}  # CLASS_TABLE
            U = {"s": lambda self: self.seg()}  # BY_GET

            def binary(self, e):
                return e

            def seg(self):
                return 0

            def sql(self, e, key):
                self.T["a"](self, e)
                handler = self.U.get(key)
                return handler(self)

            def in_method(self, e):
                f = lambda self, x: self.binary(x)  # SHADOWED_SELF
                g = lambda gen: gen.seg()  # IN_METHOD
                f(self, e)
                g(self)
    ''',
}


def test_a_lambda_called_through_a_name_reads_what_is_handed():
    found = callees_by_mark(FILES, "pkg/m.py", called_only=True)
    assert found["RETURNED"] == {"A.run"}, found
    assert found["LOCAL"] == {"A.run"}, found
    assert found["IN_METHOD"] == {"Gen.seg"}, found
    assert found["SHADOWED_SELF"] == {"Gen.binary"}, found


def test_a_lambda_in_a_table_reads_what_the_lookup_s_call_hands():
    found = callees_by_mark(FILES, "pkg/m.py", called_only=True)
    assert found["CLASS_TABLE"] == {"Gen.binary"}, found
    assert found["BY_GET"] == {"Gen.seg"}, found
    assert found["FUNCTION_TABLE"] == {"B.stop"}, found


FIELD = {
    "pkg/__init__.py": "",
    "pkg/ops.py": '''
        from typing import Callable, NamedTuple


        def check(node):
            return node


        class Op(NamedTuple):
            fn: object
            extra_check: Callable[[object], bool] = lambda node: True


        OPS = {1: Op(len, extra_check=check)}


        def run(node, k):
            op = OPS[k]
            op.extra_check(node)  # FIELD
    ''',
}


def test_a_lambda_default_leaves_a_field_what_the_constructor_is_handed():
    # torch's InplaceableOp.extra_check: the default lambda, and should_reinplace_scatter
    found = callees_by_mark(FIELD, "pkg/ops.py", called_only=True)
    assert "check" in found["FIELD"], found
    assert {label.rpartition(".")[0] for label in found["FIELD"] - {"check"}} == {"Op.<locals>"}


SIBLINGS = {
    "pkg/__init__.py": "",
    "pkg/dialects.py": '''
        class Parser:
            T = {}

            def go(self):
                return 0

            def parse(self, key):
                return self.T[key](self)


        class Left(Parser):
            T = {"a": lambda self: self.go()}  # LEFT

            def go(self):
                return 1


        class Right(Parser):
            def go(self):
                return 2
    ''',
}


def test_a_class_body_lambda_s_self_is_an_instance_of_its_class():
    # the base's call site hands a Parser (any of its subclasses), but a lambda of Left's
    # table runs with a Left: Right.go is no callee (sqlglot's dialect parsers)
    found = callees_by_mark(SIBLINGS, "pkg/dialects.py", called_only=True)
    assert found["LEFT"] == {"Left.go"}, found


def _hierarchy(functions: int, subclasses: int) -> dict[str, str]:
    """A base whose ``FUNCTIONS`` table holds ``functions`` functions, and ``subclasses``
    subclasses that each add a lambda of their own (sqlglot's dialect parsers)."""
    defs = "".join(f"def f{k}(args):\n    return args\n\n\n" for k in range(functions))
    table = ", ".join(f'"f{k}": f{k}' for k in range(functions))
    subs = "".join(f'class Sub{k}(Base):\n    FUNCTIONS = {{**Base.FUNCTIONS, "s": lambda '
                   f'args: args}}\n\n\n' for k in range(subclasses))
    return {"pkg/__init__.py": "", "pkg/h.py": (
        f"{defs}class Base:\n    FUNCTIONS = {{{table}}}\n\n    def parse(self, name, args):\n"
        f"        builder = self.FUNCTIONS.get(name)\n        return builder(args)  # BUILD\n"
        f"\n\n{subs}")}


def test_a_union_s_cap_counts_lambdas_apart():
    # 100 functions and one lambda closure for each of 40 classes: 140 values, of which
    # neither the functions nor the lambdas are more than 128
    found = callees_by_mark(_hierarchy(100, 40), "pkg/h.py", called_only=True)
    assert {f"f{k}" for k in range(100)} <= found["BUILD"], sorted(found["BUILD"])[:5]
