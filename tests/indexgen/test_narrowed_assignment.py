"""A value bound where an ``isinstance`` test narrows it is the narrowed value (issue 31), on
a small project written here: every expected edge is read off the source by hand.

``if isinstance(item, Comment): g.comment = item`` puts a ``Comment`` in ``g.comment``, so
``g.comment.as_string()`` read elsewhere runs ``Comment.as_string`` (or an override in a
subclass of ``Comment``), never the ``as_string`` of another ``Item`` (tomlkit's
``Container``).  The same holds for ``self.x = item`` in a method, ``xs.append(item)``,
``table[k] = item``, a local ``y = item`` and ``return item``.
"""

from __future__ import annotations

import pytest
from ig_helpers import build_files, calls_at

FILES = {
    "pkg/__init__.py": "",
    "pkg/items.py": '''
        class Item:
            def as_string(self) -> str:
                return ""


        class Comment(Item):
            def as_string(self) -> str:
                return "#"


        class Trivia(Comment):
            def as_string(self) -> str:
                return "# "


        class Key(Item):
            def as_string(self) -> str:
                return "k"


        class Table(Item):
            def as_string(self) -> str:
                return "[t]"
    ''',
    "pkg/groups.py": '''
        from collections.abc import Iterable

        from pkg.items import Comment, Item, Key, Table


        class Group:
            def __init__(self) -> None:
                self.comment = None
                self.key = None
                self.other = None
                self.rest = None
                self.plain = None
                self.comments = []
                self.by_name = {}
                self.table = {}
                self.keys = []

            def take(self, item: Comment | Key | Table) -> None:
                if isinstance(item, Comment):
                    self.comment = item  # self attribute
                    self.comments.append(item)  # appended
                    self.by_name["c"] = item  # stored
                elif isinstance(item, Key):
                    self.key = item  # elif branch
                else:
                    self.rest = item  # else branch
                self.plain = item  # after the if

            def skip(self, item: Comment | Key) -> None:
                if not isinstance(item, Comment):
                    self.other = item  # not isinstance

            def keep(self, table: dict[str, Key]) -> None:
                if not isinstance(table, dict):
                    raise TypeError(table)
                self.table = table

            def keep_all(self, keys: list[Key]) -> None:
                assert isinstance(keys, Iterable)
                self.keys = keys

            def show(self) -> None:
                self.comment.as_string()  # read self attribute
                self.key.as_string()  # read elif
                self.rest.as_string()  # read else
                self.plain.as_string()  # read after
                self.other.as_string()  # read not
                for c in self.comments:
                    c.as_string()  # read appended
                self.by_name["c"].as_string()  # read stored
                for v in self.table.values():
                    v.as_string()  # read builtin
                for k in self.keys:
                    k.as_string()  # read abstract


        class Holder:
            def __init__(self) -> None:
                self.comment = None


        def group_values(items: list[Item]) -> Holder:
            h = Holder()
            for item in items:
                if isinstance(item, Comment):
                    h.comment = item  # other object
            return h


        def show_holder(h: Holder) -> None:
            h.comment.as_string()  # read other object


        def local(items: list[Item]) -> None:
            for item in items:
                if isinstance(item, Comment):
                    y = item
                    y.as_string()  # read local


        def first_comment(items: list[Item]):
            for item in items:
                if isinstance(item, Comment):
                    return item
            return None


        def show_first(items: list[Item]) -> None:
            first_comment(items).as_string()  # read returned
    ''',
}

COMMENT = {"items:Comment.as_string", "items:Trivia.as_string"}
ALL = {"items:Key.as_string", "items:Table.as_string", *COMMENT}  # Comment | Key | Table


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("narrowattr") / "src", FILES)




@pytest.mark.parametrize("marker, callees", [
    # self.comment = item under isinstance(item, Comment): a Comment (or a Trivia)
    ("# read self attribute", COMMENT),
    # self.comments.append(item), self.by_name["c"] = item: containers of Comments
    ("# read appended", COMMENT),
    ("# read stored", COMMENT),
    # an elif's own test narrows its branch
    ("# read elif", {"items:Key.as_string"}),
    # h.comment = item of another object's attribute, read in another function
    ("# read other object", COMMENT),
    # a local y = item
    ("# read local", COMMENT),
    # return item under the test: the function returns Comments
    ("# read returned", COMMENT | {"groups:first_comment"}),
])
def test_a_value_bound_under_a_test_is_narrowed(pages, marker, callees):
    assert calls_at(pages, "pkg/groups.py", marker) == callees


@pytest.mark.parametrize("marker, callees", [
    # bound after the if: a Comment, Key or Table
    ("# read after", ALL),
    # not isinstance(item, Comment) of a Comment | Key: a Key
    ("# read not", {"items:Key.as_string"}),
    # the else of isinstance(item, Comment) / isinstance(item, Key): a Table
    ("# read else", {"items:Table.as_string"}),
    # isinstance(table, dict) of a dict[str, Key]: still a dict of Keys
    ("# read builtin", {"items:Key.as_string"}),
    # isinstance(keys, Iterable) of a list[Key]: still a list of Keys
    ("# read abstract", {"items:Key.as_string"}),
])
def test_what_the_test_leaves(pages, marker, callees):
    assert calls_at(pages, "pkg/groups.py", marker) == callees
