"""Methods are looked up in Python's order (C3), not depth first (issue 31; sqlglot's
``class DateAdd(Expression, Func, IntervalOp)`` runs ``TimeUnit.__init__``).

The order itself is checked against Python's own ``__mro__`` of classes made here, and on a
project's pages: the constructor a construction runs, the ``super()`` it calls on.
"""

from __future__ import annotations

import random

import pytest
from ig_helpers import build_files, calls_at
from indexgen.analyze.linearize import c3


def _python_order(bases: dict[str, list[str]]) -> dict[str, list[str]]:
    made: dict[str, type] = {}
    for name, own in bases.items():  # in an order where bases come first
        made[name] = type(name, tuple(made[b] for b in own) or (object,), {})
    return {n: [c.__name__ for c in k.__mro__ if c is not object] for n, k in made.items()}


def _c3_order(bases: dict[str, list[str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, own in bases.items():
        out[name] = c3(name, [out[b] for b in own], own)
    return out


def test_the_order_is_pythons_on_random_hierarchies():
    rng = random.Random(31)
    checked = 0
    for _ in range(300):
        bases: dict[str, list[str]] = {}
        for i in range(8):
            bases[f"C{i}"] = rng.sample(list(bases), k=min(len(bases), rng.randint(0, 3)))
        try:
            expected = _python_order(bases)
        except TypeError:  # an order Python refuses: not a class anyone can write
            continue
        assert _c3_order(bases) == expected, bases
        checked += 1
    assert checked > 50  # 83 of the 300 with this seed


def test_an_order_python_refuses_still_lists_every_base_once():
    # class X(A, B) and class Y(B, A), then class Z(X, Y): Python raises; the walk goes on
    order = c3("Z", [["X", "A", "B"], ["Y", "B", "A"]], ["X", "Y"])
    assert order[0] == "Z" and sorted(order) == ["A", "B", "X", "Y", "Z"]


FILES = {
    "pkg/__init__.py": "",
    "pkg/exprs.py": '''
        class Expr:
            def __init__(self, **args):
                self.args = args

            def set(self, k, v):
                self.args[k] = v


        class Expression(Expr):
            def set(self, k, v):
                super().set(k, v)


        class Condition(Expr):
            pass


        class Func(Condition):
            pass


        class TimeUnit(Expr):
            def __init__(self, **args):
                super().__init__(**args)  # after-time-unit


        class IntervalOp(TimeUnit):
            pass


        class DateAdd(Expression, Func, IntervalOp):
            pass


        def make() -> None:
            d = DateAdd(this=1)  # construction
            d.set("a", 1)  # first-in-order
    ''',
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("linearize") / "src", FILES)


@pytest.mark.parametrize(("marker", "expected"), [
    ("# construction", {"exprs:TimeUnit.__init__"}),  # depth first: Expr.__init__
    ("# first-in-order", {"exprs:Expression.set"}),
    ("# after-time-unit", {"exprs:Expr.__init__"}),
])
def test_lookups_follow_pythons_order(pages, marker, expected):
    assert calls_at(pages, "pkg/exprs.py", marker) == expected
