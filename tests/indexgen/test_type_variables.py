"""A type variable in a return annotation stands for what the call hands it
(:mod:`indexgen.analyze.typevars`), not for its bound: ``ident(Table()).show()`` runs
``Table.show`` (or an override in a subclass of ``Table``), never ``Other.show``.  Found by a
probe on tomlkit, whose ``item`` has a stub ``def item(value: ItemT, ...) -> ItemT``
(``ItemT`` bound to ``Item``): a call on what it gives listed ``Item.as_string`` and every
override.  A method that returns the instance it is called on (``-> Self``, ``def copy(self:
T) -> T``) gives the receiver's class, not the class that defines it.  Every expected edge
is read off the small project below by hand.
"""

from __future__ import annotations

import pytest
from ig_helpers import build_files, calls_at

FILES = {
    "pkg/__init__.py": "",
    "pkg/items.py": '''
        from __future__ import annotations

        from typing import Any, Iterable, Self, TypeVar, overload


        class Item:
            def show(self) -> str:
                return ""


        class Table(Item):
            def show(self) -> str:
                return "table"


        class Wide(Table):
            def show(self) -> str:
                return "wide"


        class Other(Item):
            def show(self) -> str:
                return "other"


        T = TypeVar("T", bound=Item)
        U = TypeVar("U")
        B = TypeVar("B", bound="Base")


        def ident(v: T, n: int = 1) -> T:
            return v


        def maybe(v: T) -> T | None:
            return v


        def listed(v: U) -> list[U]:
            return [v]


        def first(xs: Iterable[U]) -> U:
            return next(iter(xs))


        def make(cls: type[T]) -> T:
            return cls()


        @overload
        def item(value: int) -> Other: ...
        @overload
        def item(value: T, strict: bool = ...) -> T: ...
        def item(value: Any, strict: bool = False) -> Item:
            return value


        class Base:
            def copy(self: B) -> B:
                return self

            def me(self) -> Self:
                return self

            @classmethod
            def create(cls) -> Self:
                return cls()

            def show(self) -> str:
                return ""


        class Leaf(Base):
            def show(self) -> str:
                return "leaf"


        class Sibling(Base):
            def show(self) -> str:
                return "sibling"
    ''',
    "pkg/use.py": '''
        from __future__ import annotations

        from typing import Any

        from pkg.items import (
            Leaf,
            Other,
            Table,
            first,
            ident,
            item,
            listed,
            make,
            maybe,
        )


        def by_argument(tables: list[Table], thing) -> None:
            ident(Table()).show()  # T: the argument
            maybe(Table()).show()  # T | None
            listed(Table())[0].show()  # list[T]
            first(tables).show()  # Iterable[T]: an element
            make(Table).show()  # type[T]: an instance of the class handed
            item(Table()).show()  # an overload stub -> T
            item(Table(), strict=True).show()  # the stub, with a keyword
            ident(thing).show()  # nothing known of the argument: the bound


        def by_receiver(leaf: Leaf) -> None:
            leaf.copy().show()  # self: B -> B
            Leaf().me().show()  # -> Self
            Leaf.create().show()  # a classmethod -> Self


        def spread(*parts: Any) -> None:
            if any(isinstance(p, Table) for p in parts):
                return
            first(parts).show()  # a parameter typed Any: nothing solved


        def caller() -> None:
            spread(Other())
            listed(Other())  # (what its return statements give holds an Other too)
    ''',
}


def show(*classes: str) -> set[str]:
    """The ``show`` methods of ``classes`` of ``pkg/items.py``, as :func:`calls_at` names
    them."""
    return {f"items:{c}.show" for c in classes}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("typevars") / "src", FILES)


TABLE = {"items:Table"}  # Table(): the class called


@pytest.mark.parametrize(("marker", "callees"), [
    ("# T: the argument", {"items:ident"} | TABLE),
    ("# T | None", {"items:maybe"} | TABLE),
    ("# list[T]", {"items:listed"} | TABLE),
    ("# Iterable[T]: an element", {"items:first"}),
    ("# type[T]: an instance of the class handed", {"items:make"}),
    ("# an overload stub -> T", {"items:item"} | TABLE),
    ("# the stub, with a keyword", {"items:item"} | TABLE),
])
def test_a_type_variable_is_what_the_call_hands(pages, marker, callees):
    # a Table, or a Wide (a subclass of it): not Item's show nor Other's
    assert calls_at(pages, "pkg/use.py", marker) == callees | show("Table", "Wide")


def test_an_argument_nothing_is_known_of_keeps_the_bound(pages):
    assert calls_at(pages, "pkg/use.py", "# nothing known of the argument") == {
        "items:ident"} | show("Item", "Table", "Wide", "Other")


def test_a_parameter_typed_any_solves_nothing(pages):
    # what spread's callers hand it (an Other) is no type a checker would solve U to: the
    # variable reads as it does without a call, as nothing (flows into a parameter typed
    # Any say too much in large builds: torch's make_pointwise inner(*inputs: Any))
    assert calls_at(pages, "pkg/use.py", "# a parameter typed Any: nothing solved") == {
        "items:first"}


@pytest.mark.parametrize(("marker", "callees"), [
    ("# self: B -> B", {"items:Base.copy"}),
    ("# -> Self", {"items:Base.me", "items:Leaf"}),
    ("# a classmethod -> Self", {"items:Base.create"}),
])
def test_a_method_returning_its_receiver_gives_the_receivers_class(pages, marker, callees):
    # a Leaf: not Base's show nor Sibling's
    assert calls_at(pages, "pkg/use.py", marker) == callees | show("Leaf")
