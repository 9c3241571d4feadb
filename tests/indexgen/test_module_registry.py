"""A plugin registry at module level (issue 31): ``_REGISTRY = {}``, filled by a decorator
(``_REGISTRY[f.__name__] = f``, ``_HANDLERS.append(f)``, ``_BY_KEY[key] = f`` in a decorator
factory's closure), read elsewhere (``_REGISTRY[name](x)``).  The callers of the table list
the functions put into it, in the module and where another module imports the table; every
expected edge is read off the source by hand, on the pages (Calls, checked against the
callees' Called by)."""

from __future__ import annotations

from itertools import permutations

import pytest
from ig_helpers import build_files, project_of
from indexgen.analyze import callgraph
from indexgen.analyze.types import Types
from page_claims import page_call_edges, page_callers

FILES = {
    "pkg/__init__.py": "",
    "pkg/reg.py": '''
        _REGISTRY = {}
        _HANDLERS = []
        _BY_KEY = {}
        _SIZES = {}  # nobody puts a function here


        def register(f):
            _REGISTRY[f.__name__] = f
            return f


        def handler(f):
            _HANDLERS.append(f)
            return f


        def keyed(key):
            def inner(f):
                _BY_KEY[key] = f
                return f
            return inner


        def count(name):
            _SIZES[name] = len(name)


        def local_table(f):
            _REGISTRY = {}  # a local of the same name: not the module's
            _REGISTRY["x"] = f
            return _REGISTRY


        @register
        def alpha(x):
            return x


        @register
        def beta(x):
            return x


        @handler
        def gamma(x):
            return x


        @keyed("d")
        def delta(x):
            return x


        def epsilon(x):
            return x


        local_table(epsilon)


        def run(name, x):
            return _REGISTRY[name](x)


        def run_get(name, x):
            return _REGISTRY.get(name)(x)


        def run_all(x):
            for h in _HANDLERS:
                h(x)


        def run_keyed(key, x):
            return _BY_KEY[key](x)


        def run_sizes(name, x):
            return _SIZES[name](x)
    ''',
    "pkg/use.py": '''
        from pkg import reg
        from pkg.reg import _REGISTRY


        def run_imported(name, x):
            return _REGISTRY[name](x)


        def run_module(name, x):
            return reg._REGISTRY[name](x)
    ''',
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("registry") / "src", FILES)


def _callees(pages, rel: str, caller: str) -> set[str]:
    """The project callees (``rel#anchor``) the page of ``rel`` lists for ``caller``, each
    edge also listed in its callee's Called by."""
    out = pages[1]
    edges = {e for e in page_call_edges((out / f"{rel}_docs.md").read_text(), rel)
             if e[1] == caller}
    for edge in edges:
        assert edge in page_callers((out / f"{edge[2]}_docs.md").read_text(), edge[2]), edge
    return {f"{e[2]}#{e[3]}" for e in edges}


REG = "pkg/reg.py"


@pytest.mark.parametrize("rel, caller, expected", [
    (REG, "sym-run", {"alpha", "beta"}),  # _REGISTRY[name](x)
    (REG, "sym-run_get", {"alpha", "beta"}),  # _REGISTRY.get(name)(x)
    (REG, "sym-run_all", {"gamma"}),  # for h in _HANDLERS: h(x)
    (REG, "sym-run_keyed", {"delta"}),  # a decorator factory's closure puts it
    ("pkg/use.py", "sym-run_imported", {"alpha", "beta"}),  # from pkg.reg import _REGISTRY
    ("pkg/use.py", "sym-run_module", {"alpha", "beta"}),  # reg._REGISTRY
])
def test_a_module_table_holds_what_its_functions_put_in(pages, rel, caller, expected):
    assert _callees(pages, rel, caller) == {f"{REG}#sym-{name}" for name in expected}


def test_a_table_of_no_functions_and_a_local_namesake_add_nothing(pages):
    # the registry is followed (alpha, beta) but not the local _REGISTRY of local_table
    # (epsilon), and _SIZES, which holds lengths, calls nothing
    assert _callees(pages, REG, "sym-run") == {f"{REG}#sym-alpha", f"{REG}#sym-beta"}
    assert _callees(pages, REG, "sym-run_sizes") == set()
    assert f"{REG}#sym-epsilon" not in _callees(pages, "pkg/use.py", "sym-run_imported")


def test_every_order_of_the_files_gives_the_same_graph():
    # the puts read a parameter (f): provisional in the first round, found in the second
    project = project_of(FILES)
    graphs = []
    for keys in permutations(sorted(project.files)):
        found = callgraph.edges(project.resolver, list(keys), Types(project.resolver), {})
        graphs.append({k: found[k] for k in sorted(found)})
    assert {e.label for e in graphs[0]["src/pkg/use.py"]["sym-run_imported"]} == {
        "alpha", "beta"}
    assert all(g == graphs[0] for g in graphs[1:])
