"""Reading values and annotations, cases the trial on jinja2 (2026-11-28) found: each
expected edge, and each edge that must not be there, is read off the small tree below by
hand."""

from __future__ import annotations

import pytest
from ig_helpers import build_files, symbol_section
from page_claims import page_call_edges

REL = "pkg/__init__.py"

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
    "pkg/streams.py": '''
        import threading
        import typing as t
        from io import StringIO


        class Gen:
            def __init__(self, stream: t.Optional[t.TextIO] = None) -> None:
                if stream is None:
                    stream = StringIO()
                self.stream = stream

            def out(self) -> str:
                return self.stream.getvalue()  # TextIO has none: the StringIO's


        def only(s: t.TextIO) -> str:
            s.write("x")  # TextIO.write: one of its methods
            return s.getvalue()  # none of TextIO's: some other class's


        def run(job: threading.Thread) -> None:
            job._target()  # no attribute of the class: one its __init__ sets
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


def _section(pages, rel: str, symbol: str) -> str:
    _root, out = pages
    return symbol_section((out / f"{rel}_docs.md").read_text(), symbol)


def test_an_outside_attribute_its_class_lacks_is_not_made_up(pages):
    out = _section(pages, "pkg/streams.py", "Gen.out")
    only = _section(pages, "pkg/streams.py", "only")
    assert "getvalue" not in out and "getvalue" not in only
    assert "[line 13](#L13)" in out.split("Not resolved statically")[1]
    assert "[line 18](#L18)" in only.split("Not resolved statically")[1]
    assert "`typing.TextIO.write` ([line 17](#L17))" in only  # one it has stays


def test_an_attribute_an_outside_classs_init_sets_is_kept(pages):
    assert "`threading.Thread._target` ([line 22](#L22))" in _section(
        pages, "pkg/streams.py", "run")


def _page(tmp_path, source: str) -> str:
    _root, out = build_files(tmp_path / "src", {REL: source})
    return (out / "pkg/__init__.py_docs.md").read_text()


def test_a_constant_key_reads_that_key_of_a_dict_literal_only(tmp_path):
    docs = _page(tmp_path, '''
        import typing as t


        def f():
            pass


        def g():
            pass


        OPS = {"a": f, "b": g}


        def keyed():
            ns = {"a": f, "b": g}
            ns["a"]()


        def missing(code):
            ns = {"a": f, "b": g}
            exec(code, ns)  # defines "root"
            ns["root"]()


        def unknown(k):
            ns = {"a": f, "b": g}
            ns[k]()


        def module_table():
            OPS["b"]()


        def nested():
            table = {"x": {"a": f}, "y": {"a": g}}
            table["y"]["a"]()


        def read(ns: t.MutableMapping[str, t.Any]):
            ns["root"]()


        def hands():
            read({"a": f})
        ''')
    edges = page_call_edges(docs, REL)
    f, g = (REL, "sym-f"), (REL, "sym-g")
    assert (REL, "sym-keyed", *f, 17) in edges and (REL, "sym-keyed", *g, 17) not in edges
    assert not {e for e in edges if e[1] == "sym-missing"}
    assert "Not resolved" in symbol_section(docs, "missing")
    assert {e for e in edges if e[1] == "sym-unknown"} == {(REL, "sym-unknown", *f, 28),
                                                          (REL, "sym-unknown", *g, 28)}
    assert {e for e in edges if e[1] == "sym-module_table"} == {
        (REL, "sym-module_table", *g, 32)}
    assert {e for e in edges if e[1] == "sym-nested"} == {(REL, "sym-nested", *g, 37)}
    assert not {e for e in edges if e[1] == "sym-read"}


def test_a_name_of_the_module_only_written_into_stays_the_modules(tmp_path):
    """``_REGISTRY[key] = obj`` and ``ops.add(a)`` in a function bind no local name (read as
    puts into a container, they made one): ``_REGISTRY`` and ``ops`` are still the module's
    objects, so their other methods are reached."""
    docs = _page(tmp_path, '''
        class Registry:
            def __setitem__(self, key, value):
                pass

            def get(self, key):
                return None


        class Ops:
            def add(self, a):
                return a

            def mul(self, a):
                return a


        _REGISTRY = Registry()
        ops = Ops()


        def register(key, obj):
            _REGISTRY[key] = obj
            return _REGISTRY.get(key)


        def both(a):
            ops.add(a)
            return ops.mul(a)
        ''')
    edges = page_call_edges(docs, REL)
    assert (REL, "sym-register", REL, "sym-Registry.get", 23) in edges
    assert (REL, "sym-both", REL, "sym-Ops.mul", 28) in edges
