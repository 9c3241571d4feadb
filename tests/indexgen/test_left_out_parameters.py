"""A call that leaves out the parameter its callee returns does not get other callers' values.

``register(c, factory=None)`` returns a lambda when ``factory`` is left out (the decorator
form ``@reg.register(c)``) and ``factory`` otherwise; read over all its callers, its result
is the lambda or any function any caller hands ``factory``, so each decorator line listed
every registered function as called (torch's ``constraint_registry``: 16 at each of 29
lines; ``@register_backend(name="ts")``, whose ``functools.partial`` form is the same).  A
call that hands no ``factory`` gets the returns that are not ``factory``; one that hands it,
by place or by name, still gets it.  Every expected edge is read off the source by hand.
"""

from __future__ import annotations

from ig_helpers import callees_by_mark

FILES = {
    "pkg/__init__.py": "",
    "pkg/reg.py": '''
        class Registry:
            def __init__(self):
                self._registry = {}

            def register(self, c, factory=None):
                if factory is None:
                    return lambda factory: self.register(c, factory)
                self._registry[c] = factory
                return factory


        reg = Registry()


        @reg.register(1)  # DECO
        def one(x):
            return x


        def two(x):
            return x


        def three(x):
            return x


        def use():
            f = reg.register(2, two)
            f(3)  # BY_PLACE
            g = reg.register(3, factory=three)
            g(3)  # BY_NAME
    ''',
}


def test_a_decorator_that_leaves_the_returned_parameter_out_calls_no_registered_function():
    found = callees_by_mark(FILES, "pkg/reg.py", called_only=True)
    assert "Registry.register" in found["DECO"], found
    assert not found["DECO"] & {"one", "two", "three"}, found


def test_a_call_that_hands_the_returned_parameter_gets_it():
    found = callees_by_mark(FILES, "pkg/reg.py", called_only=True)
    assert {"two", "three"} <= found["BY_PLACE"], found  # (either: what register returns)
    assert {"two", "three"} <= found["BY_NAME"], found
