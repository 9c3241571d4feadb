"""A comprehension's target is a name of its own (Python 3): ``[x.f() for x in xs]`` and
``[x.g() for x in ys]`` in one function bind two different ``x``, and neither is the
function's ``x``; on a small project written here (found by the trial of jinja2, whose
``nodes.args_as_const`` makes ``[x.as_const() for x in node.args]`` of expressions, then
``dict(x.as_const() for x in node.kwargs)`` of pairs, and listed every expression's
``as_const`` for the pairs).  Every expected edge is read off the source by hand.

The extraction read the targets of all the comprehensions of a function as one name with
the elements of every iterable; a loop's target is already its own element in the loop's
body (:mod:`indexgen.extract.narrowing`), and a comprehension's now is too over its lines,
and binds nothing of the function's: a loop that holds one keeps its own target after it.
An ``isinstance`` test inside it that is no ``if`` clause's (``x.f() if isinstance(x, A)
else x``) says that its ``x`` may be an ``A``, as such a test says of a function's name; its
first iterable, evaluated outside it, reads the function's names on a line of its own.
Where one line starts both (a comprehension first in a loop's body, over the loop's name)
they share that line's name, as before.  Outside its comprehensions a name still holds
what they iterate over too (``def f(x: K, xs): [x.g() for x in xs]; x.h()``: ``x.h()``
reads ``K`` and the elements), as a name two loops bind does.
"""

from __future__ import annotations

import pytest
from ig_helpers import build_files, calls_at, calls_line, symbol_section

FILES = {
    "pkg/__init__.py": "",
    "pkg/nodes.py": '''
        from __future__ import annotations


        class Expr:
            def as_const(self) -> object:
                return None


        class Pair:
            def as_const(self) -> tuple:
                return ()


        class Keyword:
            def as_const(self) -> tuple:
                return ()

            def key(self) -> str:
                return ""
    ''',
    "pkg/use.py": '''
        from __future__ import annotations

        import numpy as np

        from pkg.nodes import Expr, Keyword, Pair


        def two_lists(args: list[Expr], kwargs: list[Pair]) -> None:
            a = [x.as_const() for x in args]  # first list
            b = dict(x.as_const() for x in kwargs)  # second list


        def set_and_dict(args: list[Expr], kwargs: list[Keyword]) -> None:
            a = {x.as_const() for x in args}  # a set
            b = {x.key(): x.as_const() for x in kwargs}  # a dict


        def tuple_targets(ps: dict[str, Expr], qs: dict[str, Pair]) -> None:
            a = [v.as_const() for _k, v in ps.items()]  # first pairs
            b = [v.as_const() for _k, v in qs.items()]  # second pairs


        def over_a_parameter(x: Keyword, args: list[Expr]) -> None:
            a = [x.as_const() for x in args]  # shadows the parameter


        def in_a_loop(args: list[Expr], kwargs: list[Pair], keys: list[Keyword]) -> None:
            for x in args:
                x.as_const()  # the loop's own before it
                b = [x.as_const() for x in kwargs]  # inside the loop
                x.as_const()  # the loop's own after it
            for x in keys:
                x.key()  # another loop


        def tested_inside(items: list, pairs: list[Pair]) -> None:
            a = [x.as_const() if isinstance(x, Expr) else x for x in items]  # tested inside
            b = [x.as_const() for x in pairs]  # beside it


        def tested_outside_the_tree(values: dict) -> bool:
            return any(isinstance(v, np.ndarray) and v.any() for v in values.values())


        class Group:
            def parts(self) -> list[Pair]:
                return []

            def as_const(self) -> object:
                return None


        def iterable_outside(x: Group) -> None:
            a = [
                x.as_const()  # the element
                for x in x.parts()  # the iterable
                if x.as_const()  # the if clause
            ]
    ''',
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("comprehension_scope") / "src", FILES)


@pytest.mark.parametrize(("marker", "callees"), [
    ("# first list", {"nodes:Expr.as_const"}),
    ("# second list", {"nodes:Pair.as_const"}),
    ("# a set", {"nodes:Expr.as_const"}),
    ("# a dict", {"nodes:Keyword.key", "nodes:Keyword.as_const"}),
    ("# first pairs", {"nodes:Expr.as_const"}),
    ("# second pairs", {"nodes:Pair.as_const"}),
    ("# shadows the parameter", {"nodes:Expr.as_const"}),
    ("# the loop's own before it", {"nodes:Expr.as_const"}),
    ("# inside the loop", {"nodes:Pair.as_const"}),
    ("# the loop's own after it", {"nodes:Expr.as_const"}),
    ("# another loop", {"nodes:Keyword.key"}),
    ("# tested inside", {"nodes:Expr.as_const"}),
    ("# beside it", {"nodes:Pair.as_const"}),
    ("# the element", {"nodes:Pair.as_const"}),
    ("# the iterable", {"use:Group.parts"}),
    ("# the if clause", {"nodes:Pair.as_const"}),
])
def test_a_comprehension_binds_names_of_its_own(pages, marker, callees):
    assert calls_at(pages, "pkg/use.py", marker) == callees


def test_a_test_inside_of_a_class_outside_the_tree_types_the_target(pages):
    # isinstance(v, np.ndarray) and v.any(): v may be an ndarray, a class the build does not
    # hold, whose methods the page lists as calls outside it (a call of np.ndarray would not
    # be known to give one)
    section = symbol_section((pages[1] / "pkg/use.py_docs.md").read_text(),
                             "tested_outside_the_tree")
    assert "`numpy.ndarray.any`" in calls_line(section), section
