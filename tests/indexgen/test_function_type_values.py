"""A value typed (or tested) as ``types.FunctionType`` is some function, which what the
callers hand says (issue 31; pyparsing's ``replaced_by_pep8``: an ``isinstance(fn,
types.FunctionType)`` after a closure that calls ``fn`` made every such call an outside
call, 35 missed calls of its suite).  Expected edges read off the source by hand."""

from __future__ import annotations

import pytest
from ig_helpers import build_files, calls_at

FILES = {
    "pkg/__init__.py": "",
    "pkg/compat.py": '''
        import types


        def replaced_by(name, fn):
            def _inner(*args):
                return fn(*args)  # closure

            if isinstance(fn, types.FunctionType):
                _inner.__kwdefaults__ = fn.__kwdefaults__
            return _inner


        def run_it(fn: types.FunctionType, x):
            return fn(x)  # annotated


        def parse_string(s):
            return s


        def scan_string(s):
            return s


        parseString = replaced_by("parseString", parse_string)
        run_it(scan_string, "x")
    ''',
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("functype") / "src", FILES)


@pytest.mark.parametrize(("marker", "expected"), [
    ("# closure", {"compat:parse_string"}),
    ("# annotated", {"compat:scan_string"}),
])
def test_a_function_typed_value_is_what_callers_hand(pages, marker, expected):
    assert calls_at(pages, "pkg/compat.py", marker) == expected
