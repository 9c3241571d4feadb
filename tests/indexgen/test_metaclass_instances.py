"""In a metaclass's method, its first parameter (``cls`` by custom) is a class: an instance
of the metaclass, not the metaclass itself.

torch's ``ScriptMeta.__init__`` (``jit/_script.py``) does ``original_init =
getattr(cls, "__init__", lambda self: None)`` and later ``original_init(self, ...)``; the
pages listed ``ScriptMeta.__init__`` as calling itself, reading ``cls`` as the class
``ScriptMeta``.  Python looks ``cls.__init__`` up in the class's own bases, which end in
``object``, before the metaclass: the attributes ``object`` has are never the metaclass's;
what the class's own are is not known here.  Calling ``cls(...)`` calls an instance of the
metaclass: its ``__call__``.  Other attributes (``cls.prepare()``) are the metaclass's.
Every expected edge is read off the source by hand.
"""

from __future__ import annotations

import pytest
from ig_helpers import build_files, calls_at

FILES = {
    "pkg/__init__.py": "",
    "pkg/meta.py": '''
        import abc


        class Meta(type):
            def __init__(cls, name, bases, attrs):
                original_init = getattr(cls, "__init__", lambda self: None)
                original_init(cls)  # GETATTR
                cls.__init__(1)  # DIRECT
                cls(1)  # CALL
                cls.prepare()  # PREPARE
                super().__init__(name, bases, attrs)

            def prepare(cls):
                pass

            def __call__(cls, *args):
                return super().__call__(*args)


        class SubMeta(Meta):
            def check(cls):
                cls.__init__(2)  # INHERITED
                cls.prepare()  # SUB_PREPARE


        class AbcMeta(abc.ABCMeta):
            def __init__(cls, name, bases, attrs):
                cls.__init__(1)  # ABC_DIRECT
                cls.helper()  # ABC_HELPER

            def helper(cls):
                pass

            def __repr__(cls):
                return "x"


        class Base(metaclass=Meta):
            def __init__(self, x=None):
                self.x = x


        class Plain:
            def __init__(self):
                pass

            @classmethod
            def make(cls):
                return cls()  # CLASSMETHOD
    ''',
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("meta") / "src", FILES)


@pytest.mark.parametrize(("marker", "expected"), [
    # the class's own __init__ (unknown here), never Meta.__init__
    ("GETATTR", set()),
    ("DIRECT", set()),
    ("INHERITED", set()),
    ("ABC_DIRECT", set()),
    # calling the class: the metaclass's __call__
    ("CALL", {"meta:Meta.__call__"}),
])
def test_object_attributes_of_a_metaclass_instance_are_the_class_own(pages, marker, expected):
    assert calls_at(pages, "pkg/meta.py", marker) == expected


@pytest.mark.parametrize(("marker", "expected"), [
    # guards (these pass before the change too): the metaclass's other methods, and a
    # class method's cls, the class itself
    ("PREPARE", {"meta:Meta.prepare"}),
    ("SUB_PREPARE", {"meta:Meta.prepare"}),
    ("ABC_HELPER", {"meta:AbcMeta.helper"}),
    ("CLASSMETHOD", {"meta:Plain.__init__"}),
])
def test_other_attributes_stay(pages, marker, expected):
    assert calls_at(pages, "pkg/meta.py", marker) == expected
