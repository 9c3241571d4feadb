"""A name a function imports itself is that import's within the function, whatever the
module binds under that name (click 8.5.1's trial, issue 31: ``termui.get_pager_file``
does ``from ._termui_impl import get_pager_file`` and returns its call; the pages listed
the function calling itself).  Every expected edge is read off the small tree by hand, as
``(callee file, callee anchor)``."""

from __future__ import annotations

import gc
import weakref

import pytest
from ig_helpers import build_files, project_of
from indexgen.analyze.local_imports import local_imports
from indexgen.analyze.resolve import Resolver
from page_claims import page_call_edges, page_callers

FILES = {
    # the package's own name for its submodule's function (fsdp_ref's fully_shard)
    "pkg/__init__.py": "from pkg.runner import runner\n",
    # a package whose function imports a name its submodule has: no attribute of the
    # package (torch._inductor's compile_fx)
    "pkg/lazy/__init__.py": '''
        def make():
            from pkg.lazy.tool import tool
            return tool()
    ''',
    "pkg/lazy/tool.py": '''
        def tool():
            return 1


        def helper():
            return 2
    ''',
    "pkg/runner.py": '''
        def runner(x):
            return x
    ''',
    "pkg/impl.py": '''
        class Pager:
            def write(self, text):
                return text


        def open_pager():
            return Pager()


        def helper(x):
            return x


        class Graph:
            def size(self):
                return 0


        class Holder:
            def __init__(self):
                self.graph = Graph()


        holder = Holder()
    ''',
    "pkg/other.py": '''
        def helper(x):
            return x
    ''',
    "pkg/front.py": '''
        from pkg.other import helper


        class Local:
            def write(self, text):
                return text


        def open_pager():
            from .impl import open_pager
            return open_pager()  # mark: same-name


        def page(text):
            from pkg.impl import open_pager
            pager = open_pager()
            return pager.write(text)  # mark: value


        def uses_impl(x):
            from .impl import helper
            return helper(x)  # mark: shadows-import


        def uses_module(x):
            return helper(x)  # mark: module-import


        def closure(x):
            from pkg import impl as helper

            def inner():
                return helper.helper(x)  # mark: nested

            return inner()


        def local_pager():
            return open_pager()  # mark: module-def


        def branches(x, new):
            if new:
                from .impl import helper
            else:
                from pkg.other import helper
            return helper(x)  # mark: branches


        holder = Local()


        def via_instance():
            from .impl import holder
            return holder.graph.size()  # mark: instance-path


        def api(x, ours):
            if ours:
                import pkg as lib
            else:
                import json as lib
            return lib.runner(x)  # mark: package-attribute


        lib = None


        def submodule():
            from pkg.lazy import tool
            return tool.helper()  # mark: submodule
    ''',
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("local-imports") / "src", FILES)


def _callees(pages, marker: str) -> set[tuple[str, str]]:
    """(callee file, anchor) of the "Calls" edges at the line marked ``# mark: marker`` of
    pkg/front.py, checked against the "Called by" of the callees' pages."""
    root, out = pages
    rel = "pkg/front.py"
    source = (root / rel).read_text().split("\n")
    line = next(n for n, text in enumerate(source, 1) if text.endswith(f"# mark: {marker}"))
    calls = {(e[2], e[3]) for e in page_call_edges((out / f"{rel}_docs.md").read_text(), rel)
             if e[4] == line}
    callers = set()
    for callee in ("pkg/front.py", "pkg/impl.py", "pkg/other.py", "pkg/runner.py",
                   "pkg/lazy/tool.py"):
        callers |= {(e[2], e[3]) for e in page_callers((out / f"{callee}_docs.md").read_text(),
                                                      callee) if e[0] == rel and e[4] == line}
    assert calls == callers
    return calls


@pytest.mark.parametrize("marker, callees", [
    # the function's own import, not the function itself
    ("same-name", {("pkg/impl.py", "sym-open_pager")}),
    # what the imported function returns, not what the module's open_pager would
    ("value", {("pkg/impl.py", "sym-Pager.write")}),
    # the function's import, not the module-level import of the same name
    ("shadows-import", {("pkg/impl.py", "sym-helper")}),
    # a nested function sees its enclosing function's import
    ("nested", {("pkg/impl.py", "sym-helper")}),
    # an import in each branch: either may have run (one is the module's own import)
    ("branches", {("pkg/impl.py", "sym-helper"), ("pkg/other.py", "sym-helper")}),
    # an attribute path from the imported instance: its value's type says the callee
    ("instance-path", {("pkg/impl.py", "sym-Graph.size")}),
    # an attribute of the imported package is what the package binds (its re-export of
    # a function), not its submodule of the same name
    ("package-attribute", {("pkg/runner.py", "sym-runner")}),
    # the package's submodule, not what one of its functions imports under that name
    ("submodule", {("pkg/lazy/tool.py", "sym-helper")}),
])
def test_a_name_a_function_imports_is_that_import_in_the_function(pages, marker, callees):
    assert _callees(pages, marker) == callees


@pytest.mark.parametrize("marker, callees", [
    ("module-import", {("pkg/other.py", "sym-helper")}),
    ("module-def", {("pkg/front.py", "sym-open_pager")}),
])
def test_elsewhere_in_the_module_the_name_is_the_modules(pages, marker, callees):
    """The same call text in a function without the import: the module's binding (one
    function's import does not leak into the others)."""
    assert _callees(pages, marker) == callees


def test_the_tables_of_local_imports_leave_the_resolver_to_reference_counting():
    """A build frees its project by reference counting with the cyclic collector paused:
    the tables made on first use must not hold the resolver that holds them (a cycle)."""
    resolver = Resolver(project_of(FILES).files)
    assert local_imports(resolver, "src/pkg/front.py", "sym-open_pager")  # tables made
    gone = weakref.ref(resolver)
    enabled = gc.isenabled()
    gc.disable()
    try:
        del resolver
        assert gone() is None
    finally:
        if enabled:
            gc.enable()
