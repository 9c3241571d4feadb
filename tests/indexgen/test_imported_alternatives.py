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


PICKED = {
    "pkg/__init__.py": "",
    "pkg/_win32.py": '''
        def zone():
            return "w"


        def quick():
            return "w"


        def slow():
            return "w"


        class Clock:
            pass
    ''',
    "pkg/_unix.py": '''
        def zone():
            return "u"


        def quick():
            return "u"


        def slow():
            return "u"


        class Clock:
            pass
    ''',
    "pkg/local.py": '''
        import sys

        if sys.platform == "win32":
            from pkg._win32 import zone
        else:
            from ._unix import zone

        try:
            from pkg._win32 import quick as fast_zone
        except ImportError:
            from pkg._unix import quick as fast_zone

        from pkg._win32 import Clock

        if sys.version_info >= (3, 12):
            from pkg import _win32 as impl
        else:
            import pkg._unix as impl


        def here():
            zone()  # platform
            fast_zone()  # try-import
            Clock()  # once
            impl.slow()  # module
    ''',
}


@pytest.fixture(scope="module")
def picked(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("pickedimports") / "src", PICKED)


@pytest.mark.parametrize(("marker", "expected"), [
    # babel.localtime: `if sys.platform == 'win32': from ._win32 import ...` / `else:`
    ("# platform", {"_win32:zone", "_unix:zone"}),
    # torch's distributed tensor: `try: from torch.utils._cxx_pytree import tree_map_only`
    # / `except ImportError: from torch.utils._pytree import tree_map_only`
    ("# try-import", {"_win32:quick", "_unix:quick"}),
    ("# once", {"_win32:Clock"}),
    ("# module", {"_win32:slow", "_unix:slow"}),  # through the module either imports
])
def test_a_name_a_condition_imports_from_two_modules_reaches_both(picked, marker, expected):
    assert calls_at(picked, "pkg/local.py", marker) == expected


def test_each_import_a_condition_picks_is_marked_with_its_condition(picked):
    page = (picked[1] / "pkg/local.py_docs.md").read_text()
    calls = next(line for line in page.split("\n") if line.startswith("- **Calls**"))
    assert "(_win32.py_docs.md#sym-zone) (if sys.platform == 'win32')" in calls, calls
    assert "(_unix.py_docs.md#sym-zone) (if not (sys.platform == 'win32'))" in calls, calls
    assert "(_unix.py_docs.md#sym-quick) (if the try block raises ImportError)" in calls, calls
