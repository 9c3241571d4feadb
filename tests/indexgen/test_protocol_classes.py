"""A class value typed by a ``Protocol`` (``type[P]``) is some class that conforms, never
the protocol itself (issue 31; jsonschema's ``create() -> type[Validator]``: 9 of 100
sampled edges listed the protocol's stubs).

PEP 544: a protocol cannot be instantiated (``Validator(...)`` raises ``TypeError``), and
a value typed ``type[Validator]`` is a class that has the protocol's members.  So calling
it lists no ``Validator.__init__`` (but its explicit subclasses' ``__init__``, as for any
class value the code leaves open), and ``cls.check_schema()`` no stub of the protocol, as
``v.check()`` on an instance typed by it lists none.  Named literally
(``Validator.check_schema(s)``), a protocol's classmethod is what runs.  Every expected
edge is read off the source by hand.
"""

from __future__ import annotations

from ig_helpers import callees_by_mark

FILES = {
    "pkg/__init__.py": "",
    "pkg/proto.py": '''
        from typing import Protocol


        class Validator(Protocol):
            def __init__(self, schema: dict) -> None: ...

            @classmethod
            def check_schema(cls, schema: dict) -> None:
                """Check the schema."""


        class Explicit(Validator):
            def __init__(self, schema: dict) -> None:
                self.schema = schema

            @classmethod
            def check_schema(cls, schema: dict) -> None:
                return None


        def create(name: str) -> type[Validator]:
            class Made:
                def __init__(self, schema):
                    self.schema = schema
            return Made


        Draft = create("draft")


        def validate(schema, cls: type[Validator]):
            cls.check_schema(schema)  # CLASSMETHOD_ON_TYPE
            return cls(schema)  # CONSTRUCT_TYPE


        def direct(schema):
            return Draft(schema)  # CONSTRUCT_RETURNED


        def literal(schema):
            Validator.check_schema(schema)  # LITERAL
    ''',
}


def test_a_class_value_typed_by_a_protocol_lists_none_of_its_stubs():
    found = callees_by_mark(FILES, "pkg/proto.py", called_only=True)
    assert found["CLASSMETHOD_ON_TYPE"] == {"Explicit.check_schema"}, found
    assert found["CONSTRUCT_TYPE"] == {"Explicit.__init__"}, found  # a subclass's
    assert found["CONSTRUCT_RETURNED"] == {"Explicit.__init__"}, found
    assert found["LITERAL"] == {"Validator.check_schema"}, found
