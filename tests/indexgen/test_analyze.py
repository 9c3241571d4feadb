"""Tests for indexgen.analyze.project: import resolution, imported-by, tests, folders."""

from __future__ import annotations

from ig_helpers import SAMPLE, broken_links, build_files
from indexgen.analyze.project import Project, compact
from indexgen.extract.discover import discover
from indexgen.extract.pipeline import extract_file


def _project() -> Project:
    files = [extract_file(s.path, s.root, s.relpath, s.module, 1_000_000)
             for s in discover(SAMPLE / "src")]
    test = SAMPLE / "tests" / "test_cart.py"
    tests = {"tests/test_cart.py": extract_file(test, "tests", "tests/test_cart.py", "", 10**6)}
    return Project([compact(f) for f in files], tests)


def test_categories_and_targets():
    project = _project()
    cart = project.files["src/shop/cart.py"]
    project.classify_imports(cart)
    cats = {(i.module, i.name): (i.category, i.target) for i in cart.imports}
    assert cats[("json", "")] == ("stdlib", "")
    assert cats[("shop.inventory", "Item")] == ("project", "src/shop/inventory.py")
    gateway = project.files["src/shop/payments/gateway.py"]
    project.classify_imports(gateway)
    cats = {(i.module, i.name): i.category for i in gateway.imports}
    assert cats[("torch", "")] == "third-party"
    assert cats[("shop.cart", "Cart")] == "project"


def test_imported_by_and_names():
    ctx = _project().contexts()
    inv = ctx["src/shop/inventory.py"]
    assert inv.imported_by == ["src/shop/__init__.py", "src/shop/cart.py"]
    assert inv.imported_names["src/shop/cart.py"] == ["Item", "Stock"]
    cart = ctx["src/shop/cart.py"]
    assert "src/shop/payments/gateway.py" in cart.imported_by
    # inventory imports Cart only for type checking; it still counts as an import edge
    assert "src/shop/inventory.py" in cart.imported_by


def test_base_class_links_to_project_definition(tmp_path):
    pkg = tmp_path / "src" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("class Base:\n    pass\n")
    (pkg / "b.py").write_text("from pkg import a\nfrom pkg.a import Base\n\n"
                              "class One(Base):\n    pass\n\nclass Two(a.Base):\n    pass\n"
                              "\nclass Three(Unknown):\n    pass\n")
    files = [extract_file(s.path, s.root, s.relpath, s.module, 10**6)
             for s in discover(tmp_path / "src")]
    ctx = Project([compact(f) for f in files], {}).contexts()
    assert ctx["src/pkg/b.py"].base_links == {
        "Base": ("src/pkg/a.py", "sym-Base"), "a.Base": ("src/pkg/a.py", "sym-Base")}


def test_tests_that_import_a_module():
    ctx = _project().contexts()
    refs = ctx["src/shop/cart.py"].tests
    assert [(r.path, r.lines, r.names) for r in refs] == [
        ("tests/test_cart.py", [1], ["Cart", "checkout"])]
    assert [r.names for r in ctx["src/shop/inventory.py"].tests] == [["Item"]]
    assert ctx["src/shop/payments/gateway.py"].tests == []


def test_folders_and_edges():
    folders = {f.relpath: f for f in _project().folders()}
    assert set(folders) == {"", "shop", "shop/payments"}
    shop = folders["shop"]
    assert shop.package == "src/shop/__init__.py"
    assert shop.subfolders == ["shop/payments"]
    edges = {(a.rpartition("/")[2], b.rpartition("/")[2]) for a, b, _ in shop.edges}
    assert ("cart.py", "inventory.py") in edges and ("__init__.py", "cart.py") in edges
    assert folders[""].files == [] and folders[""].subfolders == ["shop"]


def test_package_root_only_its_own_modules_are_project(tmp_path):
    sub = tmp_path / "lib" / "pkg" / "sub"
    sub.mkdir(parents=True)
    (tmp_path / "lib" / "pkg" / "__init__.py").write_text("")
    (sub / "__init__.py").write_text("")
    (sub / "a.py").write_text("X = 1\n")
    (sub / "b.py").write_text("import pkg.other\nfrom pkg.sub.a import X\nfrom . import a\n")
    files = [extract_file(s.path, s.root, s.relpath, s.module, 10**6) for s in discover(sub)]
    assert {f.module for f in files} == {"pkg.sub", "pkg.sub.a", "pkg.sub.b"}
    project = Project([compact(f) for f in files], {})
    b = project.files["sub/b.py"]
    project.classify_imports(b)
    cats = {(i.module, i.name): (i.category, i.target) for i in b.imports}
    assert cats[("pkg.other", "")] == ("third-party", "")
    assert cats[("pkg.sub.a", "X")] == ("project", "sub/a.py")
    assert cats[("pkg.sub", "a")] == ("project", "sub/a.py")


def _tests_project(tmp_path, tests_text: dict[str, str], more: str = ""):
    """A package ``pkg`` (``a.f``, ``b.g``, ``c``: ``more``) and test files, related by a
    Project."""
    pkg = tmp_path / "src" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    return 1\n")
    (pkg / "b.py").write_text("def g():\n    return 2\n")
    if more:
        (pkg / "c.py").write_text(more)
    tests = {}
    for rel, text in tests_text.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        tests[rel] = extract_file(path, "tests", rel, "", 10**6)
    files = [extract_file(s.path, s.root, s.relpath, s.module, 10**6)
             for s in discover(tmp_path / "src")]
    return Project([compact(f) for f in files], tests).contexts()


def test_a_literal_dynamic_import_counts_as_an_import_and_others_are_named(tmp_path):
    ctx = _tests_project(tmp_path, {
        "tests/test_dyn.py": "import importlib\n\ndef test_f():\n"
                             "    assert importlib.import_module('pkg.a').f() == 1\n",
        "tests/test_names.py": "import importlib\nMODS = {'x': 'pkg.b'}\n\ndef test_g(k):\n"
                               "    assert importlib.import_module(MODS[k]).g() == 2\n",
        "tests/test_opaque.py": "import importlib\n\ndef test_h(name):\n"
                                "    importlib.import_module(name)\n"})
    a, b = ctx["src/pkg/a.py"], ctx["src/pkg/b.py"]
    assert [(t.path, t.lines, t.names) for t in a.tests] == [("tests/test_dyn.py", [4], ["f"])]
    assert [(t.path, t.lines, t.names) for t in b.tests] == [("tests/test_names.py", [5], ["g"])]
    assert a.dynamic_tests == ["tests/test_opaque.py"]  # a name computed at run time


def test_a_literal_dynamic_import_of_another_test_file_is_no_test_of_the_build(tmp_path):
    # tests/conformance/scenarios_compat.py imports tests.conformance.thirdparty this way; the
    # build ended in a KeyError on the test file's key before.
    ctx = _tests_project(tmp_path, {
        "tests/helper.py": "from pkg.a import f\n",
        "tests/test_dyn.py": "import importlib\nH = 'tests.helper'\n\ndef test_f():\n"
                             "    importlib.import_module(H)\n"})
    assert ctx["src/pkg/a.py"].tests[0].path == "tests/helper.py"
    assert "test:tests/helper.py" not in ctx


def test_harness_strings_reach_what_the_named_functions_call(tmp_path):
    ctx = _tests_project(tmp_path, {
        "tests/scenarios.py": "from pkg.a import f\n\ndef run_f(rank):\n    return f()\n",
        "tests/test_pool.py": "def test_f(pool):\n"
                              "    pool.run('tests.scenarios:run_f')\n",
        "tests/test_prefix.py": "S = 'tests.scenarios:'\n\ndef test_f(pool):\n"
                                "    pool.run(S + 'run_f')\n",
        "tests/test_other.py": "def test_nothing(pool):\n    pool.run('tests.scenarios:nope')\n"})
    calls = ctx["src/pkg/a.py"].test_calls
    assert calls == {"tests/test_pool.py": ["f"], "tests/test_prefix.py": ["f"]}
    assert [t.path for t in ctx["src/pkg/a.py"].tests] == ["tests/scenarios.py"]


def test_a_call_settled_in_the_first_round_resolves_the_same_in_the_second(tmp_path,
                                                                            monkeypatch):
    # The second round takes a settled call's first answer instead of asking again
    # (second_round._retried); here every settled call is asked again after it, in the test
    # files' graph too, which is resolved after the build's (whose call sites are known by
    # then: what the test files hand spy_on must still count as not known in their first
    # round).
    from indexgen.analyze import callgraph, second_round

    real, checked = second_round._retried, []

    def checking(resolver, types, retry):
        found = real(resolver, types, retry)
        for (key, call, cls, names, _why, _text, known), got in zip(retry, found):
            if known is not None:
                types.begin_file()
                again = [e for e in callgraph.resolve_call(resolver, key, call, cls, types,
                                                           names) if e.kind != "unresolved"]
                checked.append((call.text, [e[2:] for e in got], [e[2:] for e in again]))
        return found

    monkeypatch.setattr(second_round, "_retried", checking)
    _tests_project(tmp_path, {
        "tests/spy.py": "def spy_on(on_call):\n    return on_call()\n",
        "tests/test_spy.py": "from tests.spy import spy_on\n\ndef test_x():\n"
                             "    def record():\n        return 1\n"
                             "    spy_on(record)\n\n"
                             "def test_y():\n    v = make()\n    return v.go()\n",
        # type(value) is resolved once for both functions (it starts with no name of
        # either), settled for a only: b's value is what test_b hands it
        "tests/test_kinds.py": "class K:\n    def __init__(self):\n        pass\n\n"
                               "def a():\n    value = make()\n    return type(value)()\n\n"
                               "def b(value):\n    return type(value)()\n\n"
                               "def test_b():\n    b(K())\n"},
                   # the build's own second round: its call sites are known before the tests'
                   more="def apply(fn):\n    return fn()\n\ndef use():\n    return apply(len)\n")
    assert sorted(c[0] for c in checked) == ["make", "make", "type(value)", "v.go"]
    assert [c for c in checked if c[1] != c[2]] == []


def test_compact_copies_records_as_dataclasses_replace_would():
    # compact() copies definitions and imports with a shortcut; it must make what
    # dataclasses.replace makes, and leave the full summary's records as they were.
    import dataclasses

    full = extract_file(SAMPLE / "src/shop/cart.py", "src", "shop/cart.py", "shop.cart", 10**6)
    before = [dataclasses.asdict(d) for d in full.definitions]
    small = compact(full)
    expected = [dataclasses.replace(d, signature="", summary="", decorators=[], labels=[],
                                    attributes=[], doc=[], type_refs=[])
                for d in full.definitions]
    assert small.definitions == expected and len(expected) > 3
    assert all(type(d) is type(e) for d, e in zip(small.definitions, expected))
    assert small.imports == [dataclasses.replace(i, category="", target="", anchor="")
                             for i in full.imports]
    assert [dataclasses.asdict(d) for d in full.definitions] == before


def _pkg_project(tmp_path, sources: dict[str, str]) -> Project:
    pkg = tmp_path / "src" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    for name, text in sources.items():
        (pkg / name).write_text(text)
    return Project([compact(extract_file(s.path, s.root, s.relpath, s.module, 10**6))
                    for s in discover(tmp_path / "src")], {})


def test_a_file_that_does_not_parse_is_imported_by_either_form(tmp_path):
    project = _pkg_project(tmp_path, {
        "broken.py": "def f(:\n    pass\n", "a.py": "from pkg.broken import thing\n",
        "b.py": "from pkg import broken\n", "c.py": "from .broken import other, more\n"})
    assert project.files["src/pkg/broken.py"].status == "syntax-error"
    broken = project.contexts()["src/pkg/broken.py"]
    assert broken.imported_by == ["src/pkg/a.py", "src/pkg/b.py", "src/pkg/c.py"]
    assert broken.imported_names == {"src/pkg/a.py": ["thing"], "src/pkg/b.py": [],
                                     "src/pkg/c.py": ["more", "other"]}
    a = project.files["src/pkg/a.py"]
    project.classify_imports(a)
    assert [(i.target, i.anchor) for i in a.imports] == [("src/pkg/broken.py", "")]


def test_an_import_graph_edge_goes_to_the_module_its_line_names(tmp_path):
    # env.py's line 2 imports defaults, which re-exports filters' FILTERS: the edge at that
    # line is env.py -> defaults.py (jinja2's environment.py showed "-> filters.py").
    project = _pkg_project(tmp_path, {
        "filters.py": "FILTERS = {}\n",
        "defaults.py": "from .filters import FILTERS as DEFAULT_FILTERS\n",
        "env.py": "import os\nfrom .defaults import DEFAULT_FILTERS\nfrom . import filters\n"
                  "from pkg import defaults\nimport pkg.filters\n",
        "__init__.py": "from .filters import FILTERS\n",
        "user.py": "from pkg import FILTERS\n"})
    (pkg,) = [f for f in project.folders() if f.relpath == "pkg"]
    edges = {(a.rpartition("/")[2], b.rpartition("/")[2], line) for a, b, line in pkg.edges}
    assert edges == {("__init__.py", "filters.py", 1), ("defaults.py", "filters.py", 1),
                     ("env.py", "defaults.py", 2), ("env.py", "filters.py", 3),
                     ("user.py", "__init__.py", 1)}


def test_a_module_attribute_whose_value_is_an_attribute_is_a_name_its_module_defines(tmp_path):
    # attrs' NOTHING = _Nothing.NOTHING and _OBJ_SETATTR = object.__setattr__: imported
    # elsewhere, neither was linked nor counted under "Imported by", the graph's line went to
    # the next name, and a call of the second was "to a name bound at run time".
    _root, out = build_files(tmp_path / "src", {
        "pkg/__init__.py": "",
        "pkg/a.py": """
            import enum
            class _Nothing(enum.Enum):
                NOTHING = enum.auto()
            NOTHING = _Nothing.NOTHING
            SETATTR = object.__setattr__
            def f():
                return 1
            """,
        "pkg/b.py": """
            from .a import (
                NOTHING,
                SETATTR,
                f,
            )
            def g(x=NOTHING):
                SETATTR(x, "y", 1)
                return f()
            """,
        "pkg/c.py": "from pkg.b import SETATTR\n"})
    b, a = (out / "pkg/b.py_docs.md").read_text(), (out / "pkg/a.py_docs.md").read_text()
    assert ("- `.a`: [`NOTHING`](a.py_docs.md#sym-NOTHING), [`SETATTR`](a.py_docs.md#sym-"
            "SETATTR), [`f`](a.py_docs.md#sym-f)") in b
    assert "bound at run time" not in b and "Not resolved statically" not in b
    assert "- [`src/pkg/b.py`](b.py_docs.md): imports `NOTHING`, `SETATTR`, `f`" in a
    assert "- [`src/pkg/c.py`](c.py_docs.md): imports `SETATTR`" in a  # through b's import
    graph = (out / "pkg/doc.md").read_text()
    # the line the statement starts on (NOTHING, its first name, is on line 2)
    assert "[`b.py`](b.py_docs.md) → [`a.py`](a.py_docs.md) (line 1)" in graph
    assert broken_links(out) == []
