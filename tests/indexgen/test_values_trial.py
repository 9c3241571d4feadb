"""Reading values and annotations, cases the trial on jinja2 (2026-11-28) found: each
expected edge, and each edge that must not be there, is read off the small tree below by
hand."""

from __future__ import annotations

import pytest
from ig_helpers import build_files
from page_claims import page_call_edges

FILES = {
    "pkg/__init__.py": "",
    "pkg/nested.py": '''
        class Inner:
            def g(self) -> int:  # the module's Inner: no annotation below names it
                return 0


        class Outer:
            class Inner:
                def f(self) -> int:
                    return 1

                class Deeper:
                    def h(self) -> int:
                        return 2

            def quoted(self, x: "Inner") -> int:
                return x.f()  # the class body's Inner, not the module's

            def bare(self, x: Inner) -> int:
                return x.f()

            def dotted(self, x: Inner.Deeper) -> int:
                return x.h()

            def full(self, x: "Outer.Inner") -> int:
                return x.f()

            def made(self) -> "Inner":
                return self.Inner()

            def returned(self) -> int:
                return self.made().f()


        def module_level(x: "Inner") -> int:
            return x.g()  # outside the class: the module's Inner
    ''',
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("values") / "src", FILES)


def _callees(pages, rel: str, caller: str) -> set[str]:
    _root, out = pages
    docs = (out / f"{rel}_docs.md").read_text()
    return {e[3] for e in page_call_edges(docs, rel) if e[1] == f"sym-{caller}"}


@pytest.mark.parametrize(("caller", "callee"), [
    ("Outer.quoted", "Outer.Inner.f"),
    ("Outer.bare", "Outer.Inner.f"),
    ("Outer.dotted", "Outer.Inner.Deeper.h"),
    ("Outer.full", "Outer.Inner.f"),
    ("Outer.returned", "Outer.Inner.f"),
    ("module_level", "Inner.g"),
])
def test_an_annotation_names_a_class_nested_in_the_methods_class(pages, caller, callee):
    callees = _callees(pages, "pkg/nested.py", caller)
    assert f"sym-{callee}" in callees
    assert callees & {"sym-Inner.g", "sym-Outer.Inner.f"} <= {f"sym-{callee}"}
