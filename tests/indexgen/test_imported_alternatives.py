"""A name imported from a module of the build that binds it under a condition reaches each
definition it may be (issue 31; sqlglot's ``@trait`` from a helper that does ``try: from
sqlglotc import trait`` / ``except ImportError: def trait``, 18 missed calls of its suite):
the import alone reaches only the outside one.  Expected edges read off the source by hand."""

from __future__ import annotations

import pytest
from ig_helpers import build_files, calls_at

FILES = {
    "pkg/__init__.py": "from pkg.helper import trait as trait\n",
    "pkg/helper.py": '''
        try:
            from fastlib import trait
        except ImportError:
            def trait(cls):
                return cls


        def plain(x):
            return x
    ''',
    "pkg/core.py": '''
        from pkg import trait as reexported
        from pkg.helper import plain, trait


        class Node:
            pass


        def make():
            trait(Node)  # direct
            reexported(Node)  # through-package
            plain(Node)  # unconditional
    ''',
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("importedalt") / "src", FILES)


@pytest.mark.parametrize(("marker", "expected"), [
    ("# direct", {"helper:trait"}),
    ("# through-package", {"helper:trait"}),
    ("# unconditional", {"helper:plain"}),
])
def test_an_imported_name_reaches_each_definition_it_may_be(pages, marker, expected):
    assert calls_at(pages, "pkg/core.py", marker) == expected
