"""An item assigned into a list attribute (``self._body[key] = v``) is one of its elements
(issue 31), on a small project written here: every expected edge is read off the source by
hand.

tomlkit's ``AoT.__setitem__`` does ``self._body[key] = item(value)`` on a ``list[Table]``:
read as a table's value, iterating the list (``for t in self._body``) did not give it, so
``t.unwrap()`` listed only ``Table.unwrap``.  Into a dict it stays a value: iterating the
dict gives its keys.
"""

from __future__ import annotations

import pytest
from ig_helpers import build_files, calls_at

FILES = {
    "pkg/__init__.py": "",
    "pkg/items.py": '''
        class Item:
            def unwrap(self) -> int:
                return 0


        class Table(Item):
            def unwrap(self) -> int:
                return 1


        class Text(Item):
            def unwrap(self) -> int:
                return 2


        def item(value) -> Item:
            return Text()


        class AoT:
            def __init__(self) -> None:
                self._body: list[Table] = []
                self._index: dict[str, Table] = {}

            def __setitem__(self, key: int, value) -> None:
                self._body[key] = item(value)
                self._index[str(key)] = item(value)

            def unwrap(self) -> None:
                for t in self._body:
                    t.unwrap()  # read list
                for v in self._index.values():
                    v.unwrap()  # read values
                for k in self._index:
                    k.unwrap()  # read keys
    ''',
}

ANY_ITEM = {"items:Item.unwrap", "items:Table.unwrap", "items:Text.unwrap"}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("list_puts") / "src", FILES)


@pytest.mark.parametrize("marker, callees", [
    ("# read list", ANY_ITEM),  # a Table of the annotation, or what item() returns
    ("# read values", ANY_ITEM),  # a dict's values: as before
    ("# read keys", set()),  # a dict's keys: strings, nothing of the tree
])
def test_an_item_assigned_into_a_list_is_an_element(pages, marker, callees):
    assert calls_at(pages, "pkg/items.py", marker) == callees
