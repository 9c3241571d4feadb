"""What the calls of an attrs class hand its fields (issue 31; jsonschema's ``_Outputter``:
``_formatter = field()`` set by ``cls(formatter=...)``, ``field(alias="resolver")``, a field
handed by place; 8 missed calls of its suite).  attrs' ``__init__`` takes a private field
without its leading underscore, or by its alias, and the ``field()`` names of a body that
binds one without an annotation in order; a field of ``init=False`` takes no argument.
Expected edges read off the source by hand."""

from __future__ import annotations

import pytest
from ig_helpers import callees_by_mark

FILES = {
    "pkg/__init__.py": "",
    "pkg/out.py": '''
        from dataclasses import dataclass, field as dc_field

        from attrs import define, field


        class Plain:
            def error(self):
                return "p"


        class Pretty:
            def error(self):
                return "P"


        class Loud:
            def error(self):
                return "L"


        @define
        class Outputter:
            _formatter = field()
            _stream = field(default=None)

            @classmethod
            def from_arguments(cls, kind):
                formatter = Plain() if kind == "plain" else Pretty()
                return cls(formatter=formatter)

            def error(self):
                return self._formatter.error()  # PRIVATE_KEYWORD

            def write(self):
                return self._stream.error()  # SECOND_BY_PLACE


        @define
        class Aliased:
            _resolver = field(default=None, alias="resolver")

            def go(self):
                return self._resolver.error()  # ALIAS


        @define
        class Skipping:
            _cache = field(init=False, factory=dict)
            handler = field()

            def go(self):
                return self.handler.error()  # AFTER_INIT_FALSE


        @dataclass
        class Data:
            _x: object
            y: object = dc_field(default=None)

            def go(self):
                return self._x.error()  # DATACLASS_PRIVATE


        def make():
            Outputter(Loud(), Plain())
            Aliased(resolver=Plain())
            Skipping(Pretty())
            Data(_x=Loud())
    ''',
}


@pytest.fixture(scope="module")
def marks():
    return callees_by_mark(FILES, "pkg/out.py", called_only=True)


@pytest.mark.parametrize(("mark", "expected"), [
    ("PRIVATE_KEYWORD", {"Plain.error", "Pretty.error", "Loud.error"}),  # formatter=, place 0
    ("SECOND_BY_PLACE", {"Plain.error"}),  # place 1
    ("ALIAS", {"Plain.error"}),  # resolver=
    ("AFTER_INIT_FALSE", {"Pretty.error"}),  # place 0: _cache takes no argument
    ("DATACLASS_PRIVATE", {"Loud.error"}),  # a dataclass's _x= (its own name)
])
def test_what_the_calls_hand_an_attrs_field(marks, mark, expected):
    assert marks[mark] == expected
