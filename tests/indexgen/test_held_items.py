"""A project subclass of ``list`` or ``dict`` that states no element type holds what its
methods put into it through the builtin's methods called explicitly
(:mod:`indexgen.analyze.held`): ``list.insert(self, i, v)``, ``super().append(v)``,
``dict.__setitem__(self, k, v)``.  Found by a probe on tomlkit, whose ``Array.unwrap`` does
``for v in self: v.unwrap()`` and ``Table.invalidate_display_name`` ``for child in
self.values(): ...``: both calls were not resolved.  Every expected edge is read off the
small project below by hand.
"""

from __future__ import annotations

import pytest
from ig_helpers import build_files, calls_at

FILES = {
    "pkg/__init__.py": "",
    "pkg/shapes.py": '''
        from __future__ import annotations

        from collections.abc import MutableMapping, MutableSequence


        class Shape:
            def __init__(self, note: str = "") -> None:
                self.note = note

            def draw(self) -> str:
                return ""


        class Square(Shape):
            def draw(self) -> str:
                return "square"


        class Circle(Shape):
            def draw(self) -> str:
                return "circle"


        class Line(Shape):
            def draw(self) -> str:
                return "line"


        class Row(list):
            def put(self, index: int, value: Square) -> None:
                list.insert(self, index, value)

            def show(self) -> None:
                for v in self:
                    v.draw()  # iterating a list its methods fill


        class Holder:
            def __init__(self, seed: list[Square]) -> None:
                self.seed = seed


        class Stack(Holder, list):
            def __init__(self, seed: list[Square]) -> None:
                super().__init__(seed)  # Holder's __init__: no put

            def push(self, value: Circle) -> None:
                super().append(value)

            def top(self) -> None:
                self[-1].draw()  # an item of it


        class _Mapping(MutableMapping, dict):
            pass


        class Board(_Mapping):
            def place(self, key: str, value: Circle | Line) -> None:
                if not isinstance(value, Line):
                    raise TypeError(key)
                dict.__setitem__(self, key, value)

            def show(self) -> None:
                for child in self.values():
                    child.draw()  # values() of a dict its methods fill


        class Plain(list):
            def show(self) -> None:
                for v in self:
                    v.draw()  # nothing put: not resolved
    ''',
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("held") / "src", FILES)


@pytest.mark.parametrize(("marker", "callees"), [
    ("# iterating a list its methods fill", {"shapes:Square.draw"}),
    # (super().__init__(seed) is Holder's: no Square put)
    ("# an item of it", {"shapes:Circle.draw"}),
    # (value is a Line where the put is: the isinstance test above it raises otherwise)
    ("# values() of a dict its methods fill", {"shapes:Line.draw"}),
])
def test_what_the_methods_put_is_what_the_container_holds(pages, marker, callees):
    assert calls_at(pages, "pkg/shapes.py", marker) == callees


def test_a_list_nothing_puts_into_holds_nothing_known(pages):
    assert calls_at(pages, "pkg/shapes.py", "# nothing put: not resolved") == set()
