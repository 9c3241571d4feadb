"""A class attribute read on an instance or a class may be a documented subclass's own
binding of it, as a method call may reach an override (issue 31; sqlglot's dialect
parsers: ``FUNCTIONS = {**Parser.FUNCTIONS, ...}`` in each subclass, read as
``self.FUNCTIONS.get(name)(args)`` in the base, 155 missed calls of its suite).  Read on a
class value (``cls.FUNCTIONS``, ``Parser.FUNCTIONS``) it is that class's own binding: the
pass does not tell a classmethod's ``cls`` from a class a subclass's body names
(``{**Parser.FUNCTIONS, ...}``), whose own binding is meant.  Expected edges read off the
source by hand."""

from __future__ import annotations

import pytest
from ig_helpers import build_files, calls_at

FILES = {
    "pkg/__init__.py": "",
    "pkg/parsers.py": '''
        def build_base(args):
            return args


        def build_sub(args):
            return args


        def build_deeper(args):
            return args


        class Tokens:
            def run(self):
                return 1


        class SubTokens(Tokens):
            def run(self):
                return 2


        class Parser:
            FUNCTIONS = {"BASE": build_base}
            TOKENS = Tokens
            NAME = "base"

            def parse_call(self, name):
                return self.FUNCTIONS.get(name)([])  # table

            def tokens(self):
                return self.TOKENS()  # class-attr

            @classmethod
            def on_class(cls, name):
                return cls.FUNCTIONS[name]([])  # classmethod


        class SubParser(Parser):
            FUNCTIONS = {**Parser.FUNCTIONS, "SUB": build_sub}
            TOKENS = SubTokens


        class DeeperParser(SubParser):
            FUNCTIONS = {**SubParser.FUNCTIONS, "DEEP": build_deeper}


        def build_other(args):
            return args


        class OtherParser(Parser):
            FUNCTIONS = {**Parser.FUNCTIONS, "OTHER": build_other}


        class Other:
            FUNCTIONS = {"OTHER": build_sub}


        def use(p: SubParser):
            return p.FUNCTIONS["x"]([])  # from-subclass
    ''',
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("classattrs") / "src", FILES)


ALL = {"parsers:build_base", "parsers:build_sub", "parsers:build_deeper",
       "parsers:build_other"}


@pytest.mark.parametrize(("marker", "expected"), [
    ("# table", ALL),
    ("# class-attr", {"parsers:Tokens", "parsers:SubTokens"}),  # the classes constructed
    ("# classmethod", {"parsers:build_base"}),  # on a class value: its own binding only
    # SubParser's own and DeeperParser's; not OtherParser's, a sibling's: Parser.FUNCTIONS
    # named in a subclass's body is Parser's own
    ("# from-subclass", {"parsers:build_base", "parsers:build_sub", "parsers:build_deeper"}),
])
def test_a_class_attribute_may_be_a_subclass_binding(pages, marker, expected):
    assert calls_at(pages, "pkg/parsers.py", marker) == expected
