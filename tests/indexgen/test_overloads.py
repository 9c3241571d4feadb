"""A call of a function with ``typing.overload`` stubs gives what the stubs it may match
return (:mod:`indexgen.analyze.overloads`), not the implementation's broad annotation: the
stub an argument's type, a literal, the number of arguments or a keyword selects decides
which method a later call on the result reaches.  Found by the trial of tomlkit, whose
``dumps`` calls ``item(dict(data)).as_string()``: ``item``'s implementation says ``-> Item``
(every ``as_string`` override listed), its stubs say a dict gives a ``Table``.  Every
expected edge is read off the small project below by hand.
"""

from __future__ import annotations

import pytest
from ig_helpers import build_files, calls_at, calls_line, symbol_section

FILES = {
    "pkg/__init__.py": "",
    "pkg/items.py": '''
        from __future__ import annotations

        from typing import Any, Literal, overload


        class Item:
            def render(self) -> str:
                return ""


        class Table(Item, dict):
            def render(self) -> str:
                return "table"


        class Inline(Item):
            def render(self) -> str:
                return "inline"


        class Number(Item):
            def render(self) -> str:
                return "number"


        class Text(Item):
            def render(self) -> str:
                return "text"


        class Array(Item):
            def render(self) -> str:
                return "array"


        class Key:
            pass


        class SubKey(Key):
            pass


        @overload
        def item(value: bool, parent: Item | None = ...) -> Number: ...
        @overload
        def item(value: int, parent: Item | None = ...) -> Number: ...
        @overload
        def item(value: str, parent: Item | None = ...) -> Text: ...
        @overload
        def item(value: dict[str, Any], parent: Array = ...) -> Inline: ...
        @overload
        def item(value: dict[str, Any], parent: Item | None = ...) -> Table: ...
        @overload
        def item(value: Key, parent: Item | None = ...) -> Array: ...
        @overload
        def item(value: object, parent: Item | None = ...) -> Item: ...
        def item(value: Any, parent: Item | None = None) -> Item:
            return Item()


        @overload
        def opened(mode: Literal["r"]) -> Text: ...
        @overload
        def opened(mode: Literal["w"]) -> Table: ...
        def opened(mode: str) -> Item:
            return Item()


        @overload
        def fetch(name: str) -> Text: ...
        @overload
        def fetch(name: str, fallback: Key) -> Text | Array: ...
        @overload
        def fetch(*, number: int) -> Number: ...
        def fetch(name: str = "", fallback: Key | None = None, number: int = 0) -> Item:
            return Item()


        @overload
        def pick(value: Key) -> Text: ...
        @overload
        def pick(value: None) -> Array: ...
        @overload
        def pick(value: int) -> Number: ...
        def pick(value: Key | int | None) -> Item:
            return Item()


        @overload
        def wrap(value: type[list] | type[dict]) -> Array: ...
        @overload
        def wrap(value: object) -> Text: ...
        def wrap(value: object) -> Item:
            return Item()


        @overload
        def keyed(*, value: Key) -> Array: ...
        @overload
        def keyed(*, value: int) -> Number: ...
        def keyed(*, value: Key | int) -> Item:
            return Item()


        @overload
        def copied(value: dict[str, Any]) -> dict[str, Any]: ...
        @overload
        def copied(value: list[Any]) -> list[Any]: ...
        def copied(value):
            return [Table()]


        class Saver:
            def save(self) -> None:
                open("out.txt", "w").close()


        def make_saver(n: int) -> Saver:
            return Saver()


        def make_render(kind: str):
            def inner() -> None:
                pass
            return inner


        class Box:
            @overload
            def get(self, index: int) -> Number: ...
            @overload
            def get(self, index: str) -> Text: ...
            def get(self, index: int | str) -> Item:
                return Item()
    ''',
    "pkg/use.py": '''
        from __future__ import annotations

        from typing import Mapping

        from pkg.items import (
            Box,
            Key,
            SubKey,
            copied,
            fetch,
            item,
            keyed,
            make_render,
            make_saver,
            opened,
            pick,
            wrap,
        )


        def by_type(key: Key, sub: SubKey, data: Mapping[str, int]) -> None:
            item(key).render()  # a name of known type
            item(sub).render()  # a subclass
            item(dict(data)).render()  # dict(...), the default left out
            item({"a": 1}).render()  # a dict display


        def by_literal() -> None:
            item(True).render()  # bool is an int
            item(3).render()  # an int
            item("x").render()  # a str
            opened("w").render()  # Literal
            wrap(list).render()  # a builtin class named
            wrap(len).render()  # a builtin function named
            value = item(2)
            value.render()  # a name bound to the call


        def by_shape(key: Key) -> None:
            fetch("a").render()  # one argument
            fetch("a", key).render()  # two arguments
            fetch(number=1).render()  # a keyword


        def unknown(thing) -> None:
            item(thing).render()  # nothing known of the argument
            pick(thing).render()  # nothing known, three stubs


        def maybe_none(key: Key | None) -> None:
            pick(key).render()  # a None stub after a certain one


        def narrowed(value: Key | int) -> None:
            if isinstance(value, Key):
                item(value).render()  # narrowed
                keyed(value=value).render()  # narrowed, by keyword
            box = Box()
            box.get("k").render()  # a method


        def starred(args: list) -> None:
            item(*args).render()  # *args: nothing ruled out
            copied(args)[0].render()  # list[Any]: what the returns say


        def effects() -> None:
            make_saver(1).save()  # a file written through a chained call


        def labelled() -> None:
            f = make_render("x")
            f()  # through a factory called with arguments


        class Order:
            def __init__(self, n: int) -> None:
                self.n = n

            def save(self) -> None:
                pass


        class LateOrder(Order):
            def save(self) -> None:
                pass


        def exact(n: int) -> None:
            order = Order(n)
            order.save()  # a class called by its name, with arguments
    ''',
}

def render(*classes: str) -> set[str]:
    """The ``render`` methods of ``classes`` of ``pkg/items.py``, as :func:`calls_at` names
    them."""
    return {f"items:{c}.render" for c in classes}


_ALL = render("Item", "Table", "Inline", "Number", "Text", "Array")
ITEM = {"items:item"}  # the overloaded function's own edge, on each line that calls it


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("overloads") / "src", FILES)


@pytest.mark.parametrize(("marker", "callees"), [
    ("# a name of known type", ITEM | render("Array")),
    ("# a subclass", ITEM | render("Array")),
    # the dict stub that wants parent: Array does not take the default None
    ("# dict(...), the default left out", ITEM | render("Table")),
    ("# a dict display", ITEM | render("Table")),
])
def test_the_argument_type_picks_the_stub(pages, marker, callees):
    assert calls_at(pages, "pkg/use.py", marker) == callees


@pytest.mark.parametrize(("marker", "callees"), [
    ("# bool is an int", ITEM | render("Number")),
    ("# an int", ITEM | render("Number")),
    ("# a str", ITEM | render("Text")),
    ("# Literal", {"items:opened"} | render("Table")),
    ("# a builtin class named", {"items:wrap"} | render("Array")),
    ("# a builtin function named", {"items:wrap"} | render("Text")),
    ("# a name bound to the call", render("Number")),
])
def test_a_literal_picks_the_stub(pages, marker, callees):
    assert calls_at(pages, "pkg/use.py", marker) == callees


@pytest.mark.parametrize(("marker", "callees"), [
    ("# one argument", {"items:fetch"} | render("Text")),
    ("# two arguments", {"items:fetch"} | render("Text", "Array")),
    ("# a keyword", {"items:fetch"} | render("Number")),
])
def test_the_number_of_arguments_and_keywords_pick_the_stub(pages, marker, callees):
    assert calls_at(pages, "pkg/use.py", marker) == callees


def test_an_argument_nothing_is_known_of_keeps_every_stub(pages):
    # item's stubs: every class (the object stub's Item: all its overrides)
    assert calls_at(pages, "pkg/use.py", "# nothing known of the argument") == ITEM | _ALL
    assert calls_at(pages, "pkg/use.py", "# *args: nothing ruled out") == ITEM | _ALL
    # pick's three stubs, not Item's overrides (the implementation's "-> Item")
    assert calls_at(pages, "pkg/use.py", "# nothing known, three stubs") == {
        "items:pick"} | render("Text", "Array", "Number")


def test_a_value_read_as_not_none_keeps_the_none_stub(pages):
    # key: Key | None reads as a Key, which certainly matches the first stub; the None
    # stub after it stays, the int one does not
    assert calls_at(pages, "pkg/use.py", "# a None stub after a certain one") == {
        "items:pick"} | render("Text", "Array")


def test_an_isinstance_test_narrows_the_argument(pages):
    assert calls_at(pages, "pkg/use.py", "# narrowed") == ITEM | render("Array")
    # (the keyword's name is not the narrowed name: keyed(:value=value@12))
    assert calls_at(pages, "pkg/use.py", "# narrowed, by keyword") == {
        "items:keyed"} | render("Array")


def test_a_stub_that_leaves_the_elements_open_keeps_what_the_returns_say(pages):
    # copied's list stub says list[Any]: the element is what the implementation returns
    # (a guard: the lead's code reads the returns too, as the implementation states nothing)
    assert calls_at(pages, "pkg/use.py", "# list[Any]: what the returns say") == {
        "items:copied"} | render("Table")


def test_an_overloaded_method(pages):
    assert calls_at(pages, "pkg/use.py", "# a method") == {"items:Box.get"} | render("Text")


def test_a_class_called_by_its_name_with_arguments_is_that_class(pages):
    # the path keeps the arguments (Order(:n)): still a call of the class by its own name,
    # whose instance no override can be
    assert calls_at(pages, "pkg/use.py", "# a class called by its name") == {"use:Order.save"}


def test_a_label_shows_a_path_without_the_arguments_it_keeps(pages):
    # the path is make_render(:"x"); the page writes it as the source spells the callee
    docs = (pages[1] / "pkg/use.py_docs.md").read_text()
    assert "through `f`: returned by `make_render()`" in calls_line(symbol_section(
        docs, "labelled"))


def test_a_finding_through_a_call_shows_it_without_the_arguments_it_keeps(pages):
    # the call's path is make_saver(:#1).save; the page writes it as make_saver().save
    docs = (pages[1] / "pkg/use.py_docs.md").read_text()
    assert "`make_saver().save` in `effects`" in docs
    assert "(:" not in docs
