"""``cls.__new__(cls)``, ``super().__new__(cls)`` and ``object.__new__(cls)`` give an
instance of ``cls``, as ``cls()`` does (lark's ``Serialize.deserialize``: ``inst =
cls.__new__(cls); inst._deserialize()``; boltons' ``OrderedMultiDict.__new__``).  In a
classmethod, ``cls`` may be a subclass: the subclasses' overrides are listed, as for
``cls()``.  Every expected edge is read off the source by hand.
"""

from __future__ import annotations

from ig_helpers import callees_by_mark

FILES = {
    "pkg/__init__.py": "",
    "pkg/m.py": '''
        class Base:
            @classmethod
            def load(cls):
                inst = cls.__new__(cls)
                inst._setup()  # CLS_NEW
                return inst

            @classmethod
            def plain(cls):
                inst = object.__new__(cls)
                inst._setup()  # OBJECT_NEW
                return inst

            def _setup(self):
                pass


        class Sub(Base):
            def _setup(self):
                pass


        class Multi(dict):
            def __new__(cls, *a, **kw):
                ret = super().__new__(cls, *a, **kw)
                ret._clear()  # SUPER_NEW
                return ret

            def _clear(self):
                pass


        def make():
            m = Multi.__new__(Multi)
            m._clear()  # OWN_NEW
            s = Sub.__new__(Sub)
            s._setup()  # EXACT_NEW
    ''',
}


def test_new_gives_an_instance_of_the_class_handed():
    found = callees_by_mark(FILES, "pkg/m.py", called_only=True)
    assert found["CLS_NEW"] == {"Base._setup", "Sub._setup"}
    assert found["OBJECT_NEW"] == {"Base._setup", "Sub._setup"}
    assert found["SUPER_NEW"] == {"Multi._clear"}


def test_a_project_new_returns_what_it_builds():
    found = callees_by_mark(FILES, "pkg/m.py", called_only=True)
    assert found["OWN_NEW"] == {"Multi._clear"}
    assert found["EXACT_NEW"] == {"Sub._setup"}
