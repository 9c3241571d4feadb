"""An ``isinstance`` filter of a comprehension narrows its elements (issue 31), on a small
project written here: every expected edge is read off the source by hand.

``[p.m() for p in params if isinstance(p, Argument)]`` runs ``Argument.m`` (or an override
in a subclass of ``Argument``), never ``Option.m``; the same holds for the elements of the
list such a comprehension makes, iterated later, and of a generator expression looped over.
"""

from __future__ import annotations

import pytest
from ig_helpers import build_files, calls_at

FILES = {
    "pkg/__init__.py": "",
    "pkg/params.py": '''
        class Parameter:
            def make_metavar(self) -> str:
                return ""


        class Argument(Parameter):
            def make_metavar(self) -> str:
                return "ARG"


        class Required(Argument):
            def make_metavar(self) -> str:
                return "REQ"


        class Option(Parameter):
            def make_metavar(self) -> str:
                return "OPT"

            def flag(self) -> bool:
                return True


        class Flag(Parameter):
            def make_metavar(self) -> str:
                return "FLAG"


        def element_expression(params: list[Parameter]) -> list[str]:
            return [p.make_metavar() for p in params if isinstance(p, Argument)]  # elt


        def later_if(params: list[Parameter]) -> list[Parameter]:
            return [p for p in params if isinstance(p, Option) if p.make_metavar()]  # later if


        def either(params: list[Parameter]) -> list[str]:
            return [p.make_metavar() for p in params  # a tuple of types
                    if isinstance(p, (Option, Flag))]


        def conjunct(params: list[Parameter], ok: bool) -> list[str]:
            return [p.make_metavar() for p in params if ok and isinstance(p, Flag)]  # and


        def negated(params: list[Option | Flag]) -> list[str]:
            return [p.make_metavar() for p in params if not isinstance(p, Flag)]  # not


        def disjunct(params: list[Option | Flag], ok: bool) -> list[str]:
            return [p.make_metavar() for p in params if ok or isinstance(p, Flag)]  # or


        def unpacked(table: dict[str, Parameter]) -> list[str]:
            return [v.make_metavar() for k, v in table.items() if isinstance(v, Flag)]  # kv


        def assigned(params: list[Parameter]) -> None:
            args = [p for p in params if isinstance(p, Argument)]
            for a in args:
                a.make_metavar()  # assigned list


        def generator_loop(params: list[Parameter]) -> None:
            for p in (x for x in params if isinstance(x, Option)):
                p.make_metavar()  # generator loop


        def same_name_elsewhere(params: list[Parameter], opts: list[Option]) -> None:
            for p in opts:
                p.flag()
            names = [p.make_metavar() for p in params if isinstance(p, Flag)]  # reused
            print(names)


        def own_element(reqs: list[Required], params: list[Option | Flag]) -> list[str]:
            for p in reqs:
                p.make_metavar()
            return [p.make_metavar() for p in params if isinstance(p, Parameter)]  # own


        def first_of(params: list[Parameter]) -> str:
            ex = next(x for x in params if isinstance(x, (Option, Flag)))
            return ex.make_metavar()  # next of a generator


        def returned(params: list[Parameter]):
            return [p for p in params if isinstance(p, Flag)]


        def caller(params: list[Parameter]) -> None:
            for f in returned(params):
                f.make_metavar()  # returned list


        def plain_generator_loop(params: list[Option | Flag]) -> None:
            for p in (x for x in params):
                p.make_metavar()  # plain generator


        def unfiltered(params: list[Option | Flag]) -> list[str]:
            return [p.make_metavar() for p in params]  # no filter
    ''',
}

ARGUMENT = {"params:Argument.make_metavar", "params:Required.make_metavar"}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("narrow") / "src", FILES)




@pytest.mark.parametrize("marker, callees", [
    # the call in the element expression: Argument's method, or its subclass's override
    ("# elt", ARGUMENT),
    # a later if clause of the comprehension sees the element narrowed too
    ("# later if", {"params:Option.make_metavar"}),
    # isinstance(p, (A, B)): either, on a line before the test's
    ("# a tuple of types", {"params:Option.make_metavar", "params:Flag.make_metavar"}),
    # a conjunct of an and holds where the element is made
    ("# and", {"params:Flag.make_metavar"}),
    # not isinstance: anything but a Flag, never a Flag
    ("# not", {"params:Option.make_metavar"}),
    # of a name of a tuple target
    ("# kv", {"params:Flag.make_metavar"}),
    # the target's name bound by a loop of the function too: the comprehension's own
    ("# reused", {"params:Flag.make_metavar"}),
    # ... and its own element, not the loop's Required (both pass the test)
    ("# own", {"params:Option.make_metavar", "params:Flag.make_metavar"}),
])
def test_the_filter_narrows_the_comprehensions_own_target(pages, marker, callees):
    assert calls_at(pages, "pkg/params.py", marker) == callees


@pytest.mark.parametrize("marker, callees", [
    # the list the comprehension makes, iterated later: its elements are Arguments
    ("# assigned list", ARGUMENT),
    # a loop over a generator expression with a filter
    ("# generator loop", {"params:Option.make_metavar"}),
    # next() of a filtered generator, a list returned and iterated by a caller
    ("# next of a generator", {"params:Option.make_metavar", "params:Flag.make_metavar"}),
    ("# returned list", {"params:Flag.make_metavar"}),
    # a loop over a generator expression without a filter: its elements all the same
    ("# plain generator", {"params:Option.make_metavar", "params:Flag.make_metavar"}),
])
def test_the_filter_narrows_what_the_comprehension_makes(pages, marker, callees):
    assert calls_at(pages, "pkg/params.py", marker) == callees


@pytest.mark.parametrize("marker, callees", [
    # an or says nothing of the element: either may run
    ("# or", {"params:Option.make_metavar", "params:Flag.make_metavar"}),
    ("# no filter", {"params:Option.make_metavar", "params:Flag.make_metavar"}),
])
def test_what_does_not_narrow(pages, marker, callees):
    assert calls_at(pages, "pkg/params.py", marker) == callees
