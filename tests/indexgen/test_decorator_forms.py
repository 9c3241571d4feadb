"""A decorator is handed what it decorates, as the explicit call is (issue 31; toolz's
``@curry``, a class, on functions; registries of classes).

``@D`` above a ``def`` or a ``class`` is ``D(obj)``: the decorator's first parameter is the
function or class, whatever ``D`` is -- a function (``@register`` on a class), a class (its
``__init__``: ``@Wrap`` keeps the function and its ``__call__`` calls it), a classmethod
(``@Registry.add``: its ``cls`` is the class, the function comes next); ``@D(...)`` hands it
to the closure the factory returns (``@factory(1)``, ``@keyed("k")`` on a class).  Every
expected edge is read off the source by hand.
"""

from __future__ import annotations

import pytest
from ig_helpers import callees_by_mark

FILES = {
    "pkg/__init__.py": "",
    "pkg/deco.py": '''
        import functools

        RULES = []


        def register(rule_cls):
            RULES.append(rule_cls)
            rule_cls.describe()  # REGISTER
            return rule_cls


        class Wrap:
            def __init__(self, func):
                self.func = func

            def __call__(self, *args):
                return self.func(*args)  # WRAP_CALL


        class Registry:
            @classmethod
            def add(cls, func):
                func("x")  # CLASSMETHOD
                return func


        def factory(n):
            def wrapper(fun):
                fun()  # FACTORY
                return fun
            return wrapper


        def plain(f):
            f()  # PLAIN
            return f


        @register
        class NameRule:
            @staticmethod
            def describe():
                return "name"

            def feed(self, node):
                return node


        @Wrap
        def decorated(x):
            return x


        @Wrap
        class Wrapped:
            pass


        def keyed(key):
            def inner(cls):
                cls.describe()  # FACTORY_CLASS
                return cls
            return inner


        @keyed("k")
        class KeyRule:
            @staticmethod
            def describe():
                return "k"


        @Registry.add
        def on_x(v):
            return v


        @factory(1)
        def produced():
            pass


        @plain
        def simple():
            pass


        def _register_op(wrapped, op):
            wrapped(op)  # PARTIAL_FACTORY
            return wrapped


        def op_impl(op):
            return functools.partial(_register_op, op=op)


        @op_impl("add")
        def add_impl(op):
            return op


        def visit(node):
            for rule_cls in RULES:
                rule_cls().feed(node)  # REGISTRY
    ''',
}


@pytest.fixture(scope="module")
def called() -> dict[str, set[str]]:
    return callees_by_mark(FILES, "pkg/deco.py", called_only=True)


@pytest.mark.parametrize(("mark", "callees"), [
    ("REGISTER", {"NameRule.describe"}),  # @register on a class
    ("REGISTRY", {"NameRule", "NameRule.feed"}),  # the classes it put in RULES, made
    ("WRAP_CALL", {"decorated", "Wrapped"}),  # @Wrap: Wrap(decorated), Wrap(Wrapped)
    ("FACTORY_CLASS", {"KeyRule.describe"}),  # @keyed("k") on a class: inner(KeyRule)
    ("CLASSMETHOD", {"on_x"}),  # @Registry.add: Registry.add(on_x), cls the class
])
def test_a_decorator_is_handed_what_it_decorates(called, mark, callees):
    assert called[mark] == callees


@pytest.mark.parametrize(("mark", "callees"), [
    ("FACTORY", {"produced"}),
    ("PLAIN", {"simple"}),
    # a factory returning a function of the tree (torch's _sharded_op_impl returns
    # functools.partial(_decorator_func, op=...)): that function is handed add_impl
    ("PARTIAL_FACTORY", {"add_impl"}),
])
def test_a_decorator_function_and_a_factorys_closure_still_are(called, mark, callees):
    assert called[mark] == callees
