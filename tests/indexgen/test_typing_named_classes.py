"""A class of the tree named like a name of ``typing`` or a builtin is read as the tree's
class where the module binds that name to it (issue 31; sqlglot's own ``Generator``: every
call on ``self: Generator`` was "on a value of unknown type", 90 calls of its suite).
Expected edges read off the source by hand."""

from __future__ import annotations

import pytest
from ig_helpers import build_files, calls_at

FILES = {
    "pkg/__init__.py": "",
    "pkg/gen.py": '''
        class Generator:
            def sql(self, x):
                return x


        class Iterator:
            def step(self):
                return 1
    ''',
    "pkg/use.py": '''
        from typing import Iterable

        from pkg.gen import Generator, Iterator


        class Callable:
            def run(self):
                return 2


        def f(g: Generator, i: "Iterator", c: Callable, gs: list[Generator]):
            g.sql(1)  # annotated
            i.step()  # string
            c.run()  # callable-named
            gs[0].sql(2)  # element
            for x in gs:
                x.sql(3)  # loop


        def g(xs: Iterable[Generator]):
            for x in xs:
                x.sql(4)  # typing-iterable
    ''',
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("typingnamed") / "src", FILES)


@pytest.mark.parametrize(("marker", "expected"), [
    ("# annotated", {"gen:Generator.sql"}),
    ("# string", {"gen:Iterator.step"}),
    ("# callable-named", {"use:Callable.run"}),
    ("# element", {"gen:Generator.sql"}),
    ("# loop", {"gen:Generator.sql"}),
    ("# typing-iterable", {"gen:Generator.sql"}),  # typing's own Iterable still a sequence
])
def test_a_class_of_the_tree_named_like_typings_is_the_trees(pages, marker, expected):
    assert calls_at(pages, "pkg/use.py", marker) == expected
