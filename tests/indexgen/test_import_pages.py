"""What the pages say of imports: the folder graph's lines, the names of ``__all__``
nothing binds.

Every expected text below is written from the little source trees of the tests."""

from __future__ import annotations

import textwrap

from ig_helpers import build_files
from indexgen import Config, build
from indexgen.analyze.project import compact
from indexgen.extract.pipeline import extract_source
from indexgen.render.exports import unbound_exports


def _section(page: str, title: str) -> str:
    return page.split(f"## {title}\n")[1].split("\n## ")[0].strip("\n") + "\n"


def test_folder_graph_gives_the_line_the_import_statement_starts_on(tmp_path):
    # attrs' attr/__init__.py: `from ._make import (` on line 14, its first name on 15;
    # the graph said line 15, where no reader looks for the statement.
    root, out = build_files(tmp_path / "src", {
        "pkg/__init__.py": '''
            """Pkg."""
            import os

            from .core import (
                f,
                g,
            )
            from .util import h
            ''',
        "pkg/core.py": "def f():\n    return 1\n\n\ndef g():\n    return 2\n",
        "pkg/util.py": "def h():\n    return 3\n"})
    edges = ["- [`__init__.py`](__init__.py_docs.md) → [`core.py`](core.py_docs.md) (line 4)",
             "- [`__init__.py`](__init__.py_docs.md) → [`util.py`](util.py_docs.md) (line 8)"]
    graph = _section((out / "pkg/doc.md").read_text(), "Import graph")
    assert "\n".join(edges) in graph
    # each name keeps its own line on the importer's page
    deps = _section((out / "pkg/__init__.py_docs.md").read_text(), "Dependencies")
    assert "(lines [5](#L5), [6](#L6))" in deps
    # an incremental build reads __init__.py's imports from the manifest: same lines
    (root / "pkg/extra.py").write_text("import os\nfrom pkg.core import f\n")
    build(Config(roots=[root], out=out, base=root.parent, jobs=1))
    graph = _section((out / "pkg/doc.md").read_text(), "Import graph")
    assert "\n".join(edges) in graph
    assert "- [`extra.py`](extra.py_docs.md) → [`core.py`](core.py_docs.md) (line 2)" in graph


_EXPORTS = '''
    import os
    from typing import TYPE_CHECKING
    if TYPE_CHECKING:
        from collections import OrderedDict
    __all__ = ["os", "OrderedDict", "lazy", "f", "C", "X", "__doc__", "sub", "gone", "m"]
    X = 1
    def f():
        import json as lazy
        return lazy
    class C:
        def m(self):
            return 1
    '''


def test_unbound_exports_reads_a_full_and_a_compact_summary_alike():
    text = textwrap.dedent(_EXPORTS).lstrip("\n").encode()
    full = extract_source(text, "src", "pkg/__init__.py", "pkg", 10**6)
    # a lazy import binds a local name; C.m is no module-level name; sub is a submodule
    # (in the order of __all__, which a summary keeps sorted)
    assert unbound_exports(full, {"sub"}) == ["gone", "lazy", "m"]
    assert unbound_exports(compact(full), {"sub"}) == ["gone", "lazy", "m"]
    assert unbound_exports(full, ()) == ["gone", "lazy", "m", "sub"]
    star = extract_source(text + b"from os.path import *\n", "src", "pkg/__init__.py", "pkg",
                          10**6)
    assert unbound_exports(star, ()) == []  # the * import may bind any of them


def test_the_folder_page_and_the_package_page_name_the_same_unbound_exports(tmp_path):
    _root, out = build_files(tmp_path / "src", {"pkg/__init__.py": _EXPORTS,
                                                "pkg/sub.py": "S = 1\n"})
    overview = _section((out / "pkg/__init__.py_docs.md").read_text(), "High-Level Overview")
    assert ("`gone`, `lazy`, `m` are listed in `__all__` but bound by no statement here"
            in overview)
    doc = _section((out / "pkg/doc.md").read_text(), "Exported names")
    flagged = [line[3:].split("`")[0] for line in doc.split("\n")
               if line.endswith("(not bound in `__init__.py`)")]
    assert flagged == ["gone", "lazy", "m"]
