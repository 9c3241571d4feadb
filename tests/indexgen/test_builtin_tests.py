"""An ``isinstance`` test of a builtin type or an abstract container narrows no value a
name is bound to; a class of the tree that has such a name does (tomlkit's own
``Container``, tested with ``Table`` in ``isinstance(data, (Table, InlineTable,
Container))``: the test was dropped as one of ``collections.abc.Container``'s).  Every
expected edge is read off the source by hand."""

from __future__ import annotations

import pytest
from ig_helpers import callees_by_mark

SOURCE = '''
    {imports}


    class Item:
        def show(self):
            return "i"


    class Table(Item):
        def show(self):
            return "t"


    class Other(Item):
        def show(self):
            return "o"


    {container}


    def render(data: Item, extra: dict):
        if isinstance(data, (Table, {tested})):
            y = data
            return y.show()  # SHOW
        return None
'''

OWN = '''class Container(Item):
        def show(self):
            return "c"'''


@pytest.mark.parametrize("imports, container, tested, expected", [
    # the tree's own Container: the test narrows y to a Table or a Container
    ("import os", OWN, "Container", {"Table.show", "Container.show"}),
    # collections.abc's, by its name, through typing, through an alias: it says nothing
    ("from collections.abc import Container", "", "Container",
     {"Item.show", "Table.show", "Other.show"}),
    ("import typing as t", "", "t.Container", {"Item.show", "Table.show", "Other.show"}),
    ("import collections.abc", "", "collections.abc.Container",
     {"Item.show", "Table.show", "Other.show"}),
])
def test_a_tested_class_of_a_builtin_name_narrows_only_when_it_is_the_trees(
        imports, container, tested, expected):
    files = {"pkg/__init__.py": "", "pkg/items.py": SOURCE.format(
        imports=imports, container=container, tested=tested)}
    found = callees_by_mark(files, "pkg/items.py")["SHOW"]
    assert {c for c in found if "." not in c.partition(".show")[0]} == expected, found
