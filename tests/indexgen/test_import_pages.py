"""What the pages say of imports: the folder graph's lines, namespace packages, re-exports
from a file that does not parse, the names of ``__all__`` nothing binds, lazy imports.

Every expected text below is written from the little source trees of the tests."""

from __future__ import annotations

import textwrap

from ig_helpers import broken_links, build_files
from indexgen import Config, build
from indexgen.analyze.exports import public_names, unbound_exports
from indexgen.analyze.project import Project, compact
from indexgen.extract.pipeline import extract_source
from indexgen.extract.served import served_names
from indexgen.extract.source import module_name


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


def test_from_a_namespace_package_import_a_module_is_an_import_of_this_project(tmp_path):
    _root, out = build_files(tmp_path / "src", {
        "ns/sub.py": "X = 1\n",
        "ns/deep/leaf.py": "Y = 2\n",
        "app/__init__.py": "",
        "app/run.py": """
            from ns import sub
            from ns import elsewhere
            from ns.deep import leaf


            def go():
                return sub.X, leaf.Y, elsewhere
            """})
    sub = _section((out / "ns/sub.py_docs.md").read_text(), "Dependencies")
    assert "- [`src/app/run.py`](../app/run.py_docs.md): imports the module" in sub
    leaf = _section((out / "ns/deep/leaf.py_docs.md").read_text(), "Dependencies")
    assert "- [`src/app/run.py`](../../app/run.py_docs.md): imports the module" in leaf
    run = _section((out / "app/run.py_docs.md").read_text(), "Dependencies")
    # ns.elsewhere is no module of the build: another distribution may supply it
    assert "**Third party**\n\n- `ns`: `elsewhere` ([line 2](#L2))\n" in run
    assert ("**This project**\n\n- `ns`: [`sub`](../ns/sub.py_docs.md) ([line 1](#L1))\n"
            "- `ns.deep`: [`leaf`](../ns/deep/leaf.py_docs.md) ([line 3](#L3))\n") in run
    assert broken_links(out) == []


def test_the_packages_above_a_root_that_is_a_package_are_no_namespace_of_the_build():
    # a root like torch/distributed/fsdp: its modules are named top.mid.fsdp.*, and top,
    # top.mid are folders outside the build
    sources = {"__init__.py": "", "x.py": "import top\nfrom top import mid\n",
               "inner/y.py": "Y = 1\n"}
    project = Project([compact(extract_source(text.encode(), "fsdp", rel,
                                              module_name(rel, "top.mid.fsdp"), 10**6))
                       for rel, text in sources.items()], {})
    assert project.namespaces == {"top.mid.fsdp.inner"}
    x = project.files["fsdp/x.py"]
    assert [project.category(i) for i in x.imports] == ["third-party", "third-party"]


def test_a_name_re_exported_from_a_file_that_does_not_parse_is_followed_there(tmp_path):
    _root, out = build_files(tmp_path / "src", {
        "pkg/__init__.py": '"""Pkg."""\nfrom .broken import thing\nfrom .core import f\n',
        "pkg/broken.py": "def thing(:\n    pass\n",
        "pkg/core.py": "def f():\n    return 1\n",
        "outer/__init__.py": "from pkg import thing\n",
        "cyc/__init__.py": "",
        "cyc/a.py": "from cyc.b import x\n",
        "cyc/b.py": "from cyc.a import x\n",
        "app/use.py": "from pkg import f, thing\nfrom outer import thing as again\n"
                      "from cyc.a import x\n"})
    use = (out / "app/use.py_docs.md").read_text()
    deps = _section(use, "Dependencies")
    # linked to the page of the file, with no anchor: no definition is claimed
    assert ("- `outer`: [`thing as again`](../pkg/broken.py_docs.md) ([line 2](#L2))\n"
            "- `pkg`: [`f`](../pkg/core.py_docs.md#sym-f), [`thing`](../pkg/broken.py_docs.md)"
            " ([line 1](#L1))\n") in deps
    assert "- `cyc.a`: `x` ([line 3](#L3))\n" in deps  # a cycle of re-exports: nowhere
    related = _section(use, "Related Files")
    assert "- [`src/pkg/broken.py`](../pkg/broken.py_docs.md): not analyzed: does not parse" \
        in related
    broken = (out / "pkg/broken.py_docs.md").read_text()
    assert "- [`src/app/use.py`](../app/use.py_docs.md): imports `thing`\n" in broken
    assert ("Names other files of the project import from it (not analyzed: whether it "
            "defines them is not known):\n\n- `thing`: [`src/app/use.py`](../app/use.py_docs.md),"
            " [`src/outer/__init__.py`](../outer/__init__.py_docs.md), "
            "[`src/pkg/__init__.py`](__init__.py_docs.md)\n") in broken
    init = _section((out / "pkg/__init__.py_docs.md").read_text(), "Dependencies")
    assert "- [`src/app/use.py`](../app/use.py_docs.md): imports `f`, `thing`\n" in init
    assert broken_links(out) == []


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


def test_imports_in_function_bodies_are_listed_as_lazy_imports(tmp_path):
    _root, out = build_files(tmp_path / "src", {"m.py": """
        def f():
            import json
            return json

        class C:
            def m(self):
                from os import path
                return path

            async def a(self):
                import csv
                return csv

        def outer():
            def inner():
                import zlib
                return zlib
            try:
                import gzip
            except ImportError:
                gzip = None
            return inner, gzip

        class D:
            import bz2
        """})
    patterns = _section((out / "m.py_docs.md").read_text(), "Code Patterns & Idioms")
    # bz2 is imported when the class body runs, with the module: not lazy
    assert patterns == ("- **Lazy imports**: `json` ([line 2](#L2)), `os.path` ([line 7](#L7)), "
                        "`csv` ([line 11](#L11)), `zlib` ([line 16](#L16)), `gzip` "
                        "([line 19](#L19))\n")


_REEXPORT = {  # click's __init__: `X as X` re-exports, no __all__, a lazy import too
    "pkg/__init__.py": '''
        """A package."""

        from __future__ import annotations

        from .core import Thing as Thing
        from .core import Helper
        import typing as t


        def __getattr__(name: str) -> object:
            if name == "OldThing":
                from .core import _OldThing

                return _OldThing
            raise AttributeError(name)
        ''',
    "pkg/core.py": "class Thing:\n    pass\n\n\nclass _OldThing:\n    pass\n\n\nclass Helper:\n"
                   "    pass\n",
    "pkg/use.py": '''
        from .core import Thing as Thing
        from .core import _OldThing as Old
        from .core import Thing as Other
        import os
        ''',
}


def test_public_names_of_a_full_and_a_compact_summary_alike():
    # a package exports what it imports from its modules, a module only `X as X` re-exports
    for rel, names in (("pkg/__init__.py", ["Helper", "Thing"]), ("pkg/use.py", ["Thing"])):
        text = textwrap.dedent(_REEXPORT[rel]).lstrip("\n").encode()
        full = extract_source(text, "src", rel, module_name(rel), 10**6)
        # neither __future__'s annotations nor a module only used (typing as t) is an export
        assert public_names(full) == names
        assert public_names(compact(full)) == names


def test_the_package_page_and_the_folder_page_export_the_same_names(tmp_path):
    _root, out = build_files(tmp_path / "src", _REEXPORT)
    page = (out / "pkg/__init__.py_docs.md").read_text()
    overview = _section(page, "High-Level Overview")
    assert ("Public API (names without a leading underscore): `Helper` (re-exported), `Thing` "
            "(re-exported).") in overview
    assert "Import: `from pkg import Helper, Thing`\n" in _section(page, "Testing & Usage")
    doc = _section((out / "pkg/doc.md").read_text(), "Exported names")
    assert doc == ("`pkg` exports 2 names (public names defined in `__init__.py` or "
                   "imported from the package's modules (no `__all__`)):"
                   "\n\n- `Helper` (from `.core`)\n- `Thing` (from `.core`)\n\n"
                   "Served by the `__getattr__` of `__init__.py` alone (PEP 562): "
                   "`OldThing`.\n")
    use = _section((out / "pkg/use.py_docs.md").read_text(), "High-Level Overview")
    assert "Public API (names without a leading underscore): `Thing` (re-exported)." in use


def test_a_top_level_and_a_lazy_import_of_one_module_are_two_entries(tmp_path):
    _root, out = build_files(tmp_path / "src", _REEXPORT)
    deps = _section((out / "pkg/__init__.py_docs.md").read_text(), "Dependencies")
    entries = [line for line in deps.split("\n") if line.startswith("- `.core`")]
    assert entries == [
        "- `.core`: [`Helper`](core.py_docs.md#sym-Helper), [`Thing as Thing`]"
        "(core.py_docs.md#sym-Thing) (lines [5](#L5), [6](#L6))",
        "- `.core`: [`_OldThing`](core.py_docs.md#sym-_OldThing) ([line 12](#L12))"
        " — inside a function (lazy import)"]


def _served(source: str, exports: list[str] | None = None) -> list[str]:
    import ast
    return served_names(ast.parse(textwrap.dedent(source)), exports)


def test_the_names_a_module_getattr_compares_its_parameter_with_are_served():
    # click's __init__ (name == "X"), click.parser (name in {...}), torch.ao (name in
    # __all__), a module-level table, a match statement
    assert _served("""
        _LAZY = {"lazy_a": ".core", "lazy_b": ".core"}
        NAMES = ("t1",)
        def __getattr__(attr):
            if attr == "Old" or "Older" == attr:
                return 1
            if attr in {"p1", "p2"} or attr in _LAZY or attr in NAMES or attr in __all__:
                return 2
            match attr:
                case "m1" | "m2":
                    return 3
            raise AttributeError(attr)
        """, ["x1"]) == ["Old", "Older", "lazy_a", "lazy_b", "m1", "m2", "p1", "p2", "t1",
                         "x1"]
    # what it cannot list: no name is made up for a prefix test or a computed table
    assert _served("""
        TABLE = make()
        def __getattr__(name):
            if name.startswith("old_") or name in TABLE or other == "x":
                return 1
        """) == []
    # only the module's own function: a class's __getattr__ serves its instances
    assert _served("class C:\n    def __getattr__(self, name):\n"
                   "        return name == 'x'\n") == []


def test_pages_say_which_names_only_the_module_getattr_serves(tmp_path):
    _root, out = build_files(tmp_path / "src", {
        "pkg/__init__.py": """
            from .core import Thing
            __all__ = ["Thing", "Gone", "Later"]
            def __getattr__(name):
                if name in ("Later", "OldThing", "core", "Thing"):
                    return Thing
                raise AttributeError(name)
            """,
        "pkg/core.py": "class Thing:\n    pass\n",
        "pkg/star.py": """
            from .core import *
            def __getattr__(name):
                if name == "Thing":
                    return 1
            """})
    page = _section((out / "pkg/__init__.py_docs.md").read_text(), "High-Level Overview")
    # in __all__: said of the unbound name; not in __all__: a line of its own; never the
    # submodule (a link of its own) nor a bound name (Python never asks __getattr__ for it)
    assert ("`Gone` is listed in `__all__` but bound by no statement here: importing it "
            "fails") not in page
    assert "`Later` is listed in `__all__` but bound by no statement here: the module's " \
           "`__getattr__` serves it." in page
    assert ("Served by the module's [`__getattr__`](#sym-__getattr__) alone (PEP 562; no "
            "statement binds it): `OldThing`.") in page
    doc = _section((out / "pkg/doc.md").read_text(), "Exported names")
    assert "- `Gone` (not bound in `__init__.py`)\n" in doc
    assert "- `Later` (served by its `__getattr__`)\n" in doc
    assert doc.endswith("\n\nServed by the `__getattr__` of `__init__.py` alone (PEP 562): "
                        "`OldThing`.\n")
    star = (out / "pkg/star.py_docs.md").read_text()
    assert "Served by" not in star  # the * import may bind Thing
    assert broken_links(out) == []


def test_a_package_exports_what_its_star_imports_bring(tmp_path):
    # more-itertools' __init__ is `from .more import *` and `from .recipes import *`: its
    # pages said "exports no names", "Public API: none" and drew no import graph edge
    _root, out = build_files(tmp_path / "src", {
        "pkg/__init__.py": '"""Pkg."""\nfrom .core import *\nfrom .chain import *\n'
                           "from .dyn import *\nfrom os.path import *\n",
        "pkg/core.py": "__all__ = ['work']\ndef work():\n    return 1\ndef other():\n    return 2\n",
        "pkg/chain.py": "from .deep import *\ndef _hidden():\n    pass\n",
        "pkg/deep.py": "def deep():\n    return 3\n",
        "pkg/dyn.py": "__all__ = []\nfor n in ('a', 'b'):\n    __all__.append(n)\n"
                      "def a():\n    pass\n",
    })
    page = (out / "pkg/__init__.py_docs.md").read_text()
    overview = _section(page, "High-Level Overview")
    # core's __all__ (not `other`), deep's through chain's own * import; nothing of dyn, whose
    # __all__ is filled in a loop, nor of a module outside the build
    assert ("Public API (names without a leading underscore): `deep` (re-exported), `work` "
            "(re-exported).") in overview
    assert "Import: `from pkg import deep, work`\n" in _section(page, "Testing & Usage")
    assert "[`src/pkg/core.py`](core.py_docs.md)" in _section(page, "Related Files")
    doc = (out / "pkg/doc.md").read_text()
    assert _section(doc, "Exported names") == (
        "`pkg` exports 2 names (public names defined in `__init__.py` or imported from the "
        "package's modules (no `__all__`)):\n\n- `deep` (from `pkg.deep`, by its `*` import)\n"
        "- `work` (from `pkg.core`, by its `*` import)\n")
    graph = _section(doc, "Import graph")
    for target, line in (("core", 2), ("chain", 3), ("dyn", 4)):
        assert (f"- [`__init__.py`](__init__.py_docs.md) → [`{target}.py`]({target}.py_docs.md)"
                f" (line {line})") in graph
    dyn = _section((out / "pkg/dyn.py_docs.md").read_text(), "High-Level Overview")
    assert ("Public API (names without a leading underscore; its `__all__` is computed, not "
            "read): [`a`](#sym-a).") in dyn
    assert broken_links(out) == []
