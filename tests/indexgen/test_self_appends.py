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
from ig_helpers import build_files
from page_claims import page_call_edges, page_callers

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


def _calls(pages, marker: str, rel: str = "pkg/box.py") -> set[str]:
    """The callees ("module:qualname") the "Calls" of the pages list at the line of
    ``marker``; each must also be on the callee's "Called by"."""
    root, out = pages
    line = next(i for i, text in enumerate((root / rel).read_text().split("\n"), 1)
                if marker in text)
    calls = {e for e in page_call_edges((out / f"{rel}_docs.md").read_text(), rel,
                                        overrides=None) if e[4] == line}
    callers = {e for r in ("pkg/box.py", "pkg/keys.py")
               for e in page_callers((out / f"{r}_docs.md").read_text(), r)}
    assert calls == {e for e in callers if e[0] == rel and e[4] == line}
    return {f"{c.split('/')[-1][:-3]}:{a[4:]}" for _r, _c, c, a, _line in calls}


@pytest.mark.parametrize(("marker", "callees"), [
    ("# attribute", {"box:Cache.drop"}),
    ("# element", {"keys:Key.is_dotted"}),
    ("# other element", {"keys:Item.render"}),
    ("# loop", {"keys:Key.is_dotted"}),
    ("# classmethod", {"box:Box.helper", "box:Cache.drop"}),
    ("# a local list", {"keys:Key.is_dotted"}),
])
def test_a_method_that_appends_to_self_keeps_self_the_instance(pages, marker, callees):
    assert _calls(pages, marker) == callees


def test_self_append_is_the_instances_own_method(pages):
    assert _calls(pages, "self.append(new_key, value)") == {"box:Box.append"}
    assert _calls(pages, "self.add(value)") == {"box:Box.add"}
    assert _calls(pages, "cls.add(box, item)") == {"box:Box.add"}
