"""An attribute path read after the function assigned it holds what was assigned (issue 31),
on a small project written here: every expected edge is read off the source by hand.

marshmallow's ``Enum`` field: ``self.field: Field = String()`` then
``self.field._serialize(...)`` runs ``String._serialize``, not the ``_serialize`` of every
``Field`` subclass the annotation allows.  The narrowing holds over the statements after the
assignment in its block; after a branch that assigns the path otherwise, in a loop that
assigns it again, and for an attribute the class defines as a property, the path reads as
it did without it.  An ``isinstance`` test after the assignment narrows the assigned value,
and the value's own narrowing survives the test's (``if isinstance(self.op, Hop): return``).
Where the assigned value says nothing (a call of a function whose result nothing states, a
literal list the function then appends to), the path reads as before.
"""

from __future__ import annotations

import pytest
from ig_helpers import build_files, calls_at

FILES = {
    "pkg/__init__.py": "",
    "pkg/fields.py": '''
        class Field:
            def _serialize(self, v):
                return v


        class String(Field):
            def _serialize(self, v):
                return str(v)


        class Raw(Field):
            def _serialize(self, v):
                return v


        def make():
            return globals()["made"]


        class Enum(Field):
            def __init__(self, by_value, items: list[Field]) -> None:
                if by_value is False:
                    self.field: Field = String()
                    self.text = self.field._serialize(1)  # in-branch
                else:
                    self.field = Raw()
                self.field._serialize(2)  # after-branches
                for item in items:
                    self.field._serialize(item)  # loop-top
                    self.field = String()
                self.held = []
                self.held.append(Raw())
                self.held[0]._serialize(3)  # appended
                self.made: Raw = make()
                self.made._serialize(6)  # unknown-value

            def later(self):
                return self.field._serialize(4)  # other-method


        class Op:
            def name(self):
                return "op"


        class Hop:
            def name(self):
                return "hop"


        class Kernel:
            def __init__(self, kernel: Op | Hop, size: Field) -> None:
                self.op = kernel
                self.extra = 1

                if isinstance(self.op, Hop):
                    self.op.name()  # tested-after
                    return

                if "x" in self.op.name():  # after-leaving-test
                    pass
                self.size = Raw()
                self.size._serialize(5)  # property


            @property
            def size(self) -> String:
                return String()

            @size.setter
            def size(self, value: Field) -> None:
                pass
    ''',
}

ALL = {"fields:Field._serialize", "fields:String._serialize", "fields:Raw._serialize"}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("assignnarrow") / "src", FILES)


@pytest.mark.parametrize(("marker", "expected"), [
    ("# in-branch", {"fields:String._serialize"}),
    ("# after-branches", ALL),  # either branch's value: read as without the narrowing
    ("# loop-top", ALL),  # a later turn sees the String the loop assigns
    ("# appended", {"fields:Raw._serialize"}),  # [] says nothing: what was appended
    ("# unknown-value", {"fields:Raw._serialize"}),  # make() says nothing: as annotated
    ("# other-method", ALL),
    ("# tested-after", {"fields:Hop.name"}),
    ("# after-leaving-test", {"fields:Op.name"}),
    ("# property", {"fields:String._serialize"}),  # the getter's, not what was set
])
def test_an_assigned_attribute_path_holds_what_was_assigned(pages, marker, expected):
    assert calls_at(pages, "pkg/fields.py", marker) == expected
