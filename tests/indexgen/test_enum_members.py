"""An enum's member is an instance of its enum (issue 31; sqlglot's
``exp.DType.DATE.into_expr()``, 27 missed calls of its suite): the names an ``Enum``
subclass's body binds, to ``auto()`` or to a constant, through a base of the project too,
and what iterating the enum class gives.
Expected edges read off the source by hand."""

from __future__ import annotations

import pytest
from ig_helpers import build_files, calls_at

FILES = {
    "pkg/__init__.py": "",
    "pkg/kinds.py": '''
        from enum import Enum, auto


        class AutoName(Enum):
            def describe(self):
                return self.name


        class DType(AutoName):
            DATE = auto()
            TEXT = "text"
            _hidden = 3

            def into_expr(self):
                return self.value


        class Plain:
            LIMIT = 3


        def use(kind: DType):
            DType.DATE.into_expr()  # auto-member
            d = DType.TEXT
            d.into_expr()  # constant-member
            DType.DATE.describe()  # base-method
            kind.TEXT.into_expr()  # on-instance
            Plain.LIMIT.bit_length()  # not-an-enum
            for t in DType:
                t.into_expr()  # iterated
    ''',
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("enums") / "src", FILES)


@pytest.mark.parametrize(("marker", "expected"), [
    ("# auto-member", {"kinds:DType.into_expr"}),
    ("# constant-member", {"kinds:DType.into_expr"}),
    ("# base-method", {"kinds:AutoName.describe"}),
    ("# on-instance", {"kinds:DType.into_expr"}),
    ("# iterated", {"kinds:DType.into_expr"}),  # iterating an enum gives its members
    ("# not-an-enum", set()),  # an int's method: a builtin's, not listed
])
def test_an_enum_member_is_an_instance_of_its_enum(pages, marker, expected):
    assert calls_at(pages, "pkg/kinds.py", marker) == expected
