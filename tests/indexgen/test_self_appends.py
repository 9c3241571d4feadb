"""A method's ``self.append(k, v)`` (``self.add(x)``, ``self.insert(i, x)``) calls the
instance's own method: ``self`` stays the instance, on a small project written here (found
by the trial of tomlkit, whose ``Container._replace_at`` calls ``self.append(new_key,
value)``); every expected edge is read off the source by hand.

The extraction reads ``xs.append(v)`` as "``xs`` holds ``v``s"; for ``self`` that made the
instance a list of ``v``, and every call on ``self``'s attributes in that method (and on the
names they give) went unresolved.
"""

from __future__ import annotations

import pytest
from ig_helpers import build_files, calls_at

FILES = {
    "pkg/__init__.py": "",
    "pkg/keys.py": '''
        class Key:
            def is_dotted(self) -> bool:
                return False


        class Item:
            def render(self) -> str:
                return ""
    ''',
    "pkg/box.py": '''
        from __future__ import annotations

        from pkg.keys import Item, Key


        class Cache:
            def drop(self) -> None:
                pass


        class Box:
            def __init__(self) -> None:
                self._body: list[tuple[Key | None, Item]] = []
                self._cache = Cache()

            def append(self, key: Key | None, item: Item) -> Box:
                self._body.append((key, item))
                return self

            def add(self, item: Item) -> None:
                self.append(None, item)

            def replace(self, idx: int, new_key: Key, value: Item) -> None:
                self._cache.drop()  # attribute
                k, v = self._body[idx]
                if k is not None and k.is_dotted():  # element
                    v.render()  # other element
                self.append(new_key, value)

            def put(self, value: Item) -> None:
                for k, v in self._body:
                    if k is not None:
                        k.is_dotted()  # loop
                self.add(value)

            @classmethod
            def make(cls, item: Item) -> Box:
                box = cls()
                box.add(item)
                cls.add(box, item)
                cls.helper().drop()  # classmethod
                return box

            @classmethod
            def helper(cls) -> Cache:
                return Cache()


        def local_list(key: Key) -> None:
            keys = []
            keys.append(key)
            keys[0].is_dotted()  # a local list still holds what is appended
    ''',
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("self_appends") / "src", FILES)




@pytest.mark.parametrize(("marker", "callees"), [
    ("# attribute", {"box:Cache.drop"}),
    ("# element", {"keys:Key.is_dotted"}),
    ("# other element", {"keys:Item.render"}),
    ("# loop", {"keys:Key.is_dotted"}),
    ("# classmethod", {"box:Box.helper", "box:Cache.drop"}),
    ("# a local list", {"keys:Key.is_dotted"}),
])
def test_a_method_that_appends_to_self_keeps_self_the_instance(pages, marker, callees):
    assert calls_at(pages, "pkg/box.py", marker) == callees


def test_self_append_is_the_instances_own_method(pages):
    assert calls_at(pages, "pkg/box.py", "self.append(new_key, value)") == {"box:Box.append"}
    assert calls_at(pages, "pkg/box.py", "self.add(value)") == {"box:Box.add"}
    assert calls_at(pages, "pkg/box.py", "cls.add(box, item)") == {"box:Box.add"}
