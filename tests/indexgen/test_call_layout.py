"""Where the "Calls" and "Called by" lines put each entry: an override group beside the method
it is an alternative to, a recursive call apart from a call of a nested function, a module's
calls under ``if TYPE_CHECKING:`` marked as never run; and that ``page_claims`` reads them.

Every expected text below is written from the little source trees of the tests."""

from __future__ import annotations

from ig_helpers import build_files, calls_line, symbol_section
from page_claims import page_call_edges, page_callers

_OVERRIDES = '''
    class Param:
        def get_default(self) -> int:
            return 0


    class Option(Param):
        def get_default(self) -> int:
            return 1

        def only(self) -> None:
            pass


    def helper() -> None:
        pass


    def finish() -> None:
        pass


    def invoke(p: Param) -> None:
        p.get_default()  # Param.get_default, or Option.get_default
        helper()
        p.only()  # Option.only: the call names no callee of its own
        finish()
    '''


def _link(name: str) -> str:
    return f"[`{name}`](#sym-{name})"


def _lines(*numbers: int) -> str:
    if len(numbers) == 1:
        return f"([line {numbers[0]}](#L{numbers[0]}))"
    return "(lines " + ", ".join(f"[{n}](#L{n})" for n in numbers) + ")"


def test_an_override_group_follows_its_method_and_one_of_keeps_the_line_order(tmp_path):
    _root, out = build_files(tmp_path / "src", {"pkg/__init__.py": _OVERRIDES})
    docs = (out / "pkg/__init__.py_docs.md").read_text()
    assert calls_line(symbol_section(docs, "invoke")) == (
        f"- **Calls**: {_link('Param.get_default')} {_lines(23)}, or an override in: "
        f"{_link('Option.get_default')} {_lines(23)}; {_link('helper')} {_lines(24)}; "
        f"one of: {_link('Option.only')} {_lines(25)}; {_link('finish')} {_lines(26)}")
    # the tests' reader parts the overrides from the callees named
    rel, caller = "pkg/__init__.py", "sym-invoke"
    assert page_call_edges(docs, rel, overrides=True) == {
        (rel, caller, rel, "sym-Option.get_default", 23)}
    assert page_call_edges(docs, rel, overrides=False) == {
        (rel, caller, rel, "sym-Param.get_default", 23), (rel, caller, rel, "sym-helper", 24),
        (rel, caller, rel, "sym-Option.only", 25), (rel, caller, rel, "sym-finish", 26)}
    assert len(page_call_edges(docs, rel)) == 5


def test_a_recursive_call_is_not_folded_into_a_call_of_a_nested_function(tmp_path):
    _root, out = build_files(tmp_path / "src", {"pkg/__init__.py": '''
        class Node:
            def run(self, other: "Node") -> None:
                def helper() -> None:
                    pass

                helper()
                other.run(self)  # a recursive call, not a call of helper
                helper()
        '''})
    docs = (out / "pkg/__init__.py_docs.md").read_text()
    section = symbol_section(docs, "Node.run")
    called_by = next(x for x in section.split("\n") if x.startswith("- **Called by**"))
    assert called_by == (f"- **Called by**: {_link('Node.run')} (lines [6](#L6), [8](#L8): "
                         f"its nested `helper`); {_link('Node.run')} {_lines(7)}")
    rel = "pkg/__init__.py"
    assert {e for e in page_callers(docs, rel) if e[3] == "sym-Node.run"} == {
        (rel, "sym-Node.run", rel, "sym-Node.run", n) for n in (6, 7, 8)}


def test_two_nested_functions_called_on_one_line_are_both_listed(tmp_path):
    # jinja2's prepare_select_or_reject: `modfunc(func(transfunc(item)))` listed func only
    _root, out = build_files(tmp_path / "src", {"pkg/__init__.py": '''
        def prep(name):
            def tf(x):
                return x

            def func(item):
                return name

            return func(tf(1))
        '''})
    section = symbol_section((out / "pkg/__init__.py_docs.md").read_text(), "prep")
    lines = section.split("\n")
    calls = next(x for x in lines if x.startswith("- **Calls**"))
    assert calls == ("- **Calls**: [<code>prep.&lt;locals&gt;.func</code>](#sym-prep) "
                     "([line 8](#L8)); [<code>prep.&lt;locals&gt;.tf</code>](#sym-prep) "
                     "([line 8](#L8))")
    called_by = next(x for x in lines if x.startswith("- **Called by**"))
    assert called_by == ("- **Called by**: [`prep`](#sym-prep) ([line 8](#L8): its nested "
                         "`func`); [`prep`](#sym-prep) ([line 8](#L8): its nested `tf`)")


def test_module_level_calls_under_type_checking_are_marked(tmp_path):
    _root, out = build_files(tmp_path / "src", {"pkg/__init__.py": '''
        import typing as t


        def make(name: str) -> object:
            return name


        if t.TYPE_CHECKING:
            import typing_extensions as te

            P = te.ParamSpec("P")  # never runs
            Q = t.TypeVar("Q")
            M = make("M")

        R = t.TypeVar("R")
        N = make("N")
        '''})
    docs = (out / "pkg/__init__.py_docs.md").read_text()
    module = docs.split('<a id="module-level"></a>')[1].split("\n## ")[0]
    never = " (type checkers only: under `if TYPE_CHECKING:`)"
    assert calls_line(module) == (
        f"- **Calls**: {_link('make')} {_lines(13)}{never}; {_link('make')} {_lines(16)}; "
        f"outside this build: `typing_extensions.ParamSpec` {_lines(11)}{never}, "
        f"`typing.TypeVar` {_lines(12)}{never}, `typing.TypeVar` {_lines(15)}")
    rel = "pkg/__init__.py"  # both are read as calls still
    assert page_call_edges(docs, rel) == {(rel, "", rel, "sym-make", 13),
                                          (rel, "", rel, "sym-make", 16)}


def test_a_class_body_alias_of_a_method_is_that_method(tmp_path):
    # jinja2's RootVisitor: visit_Template = _simple_visit, reached by the getattr dispatch
    # of visit_*; torch's Module: __call__ = _wrapped_call_impl. `Handler = Handler` in a
    # class body reads the module's name, not itself.
    _root, out = build_files(tmp_path / "src", {"pkg/__init__.py": '''
        class Handler:
            def handle(self):
                pass


        class Visitor:
            Handler = Handler

            def visit(self, node):
                f = getattr(self, f"visit_{node}", None)
                if f is not None:
                    return f(node)

            def _simple_visit(self, node):
                return node

            visit_Template = _simple_visit

            def run(self):
                self.Handler().handle()
        '''})
    docs = (out / "pkg/__init__.py_docs.md").read_text()
    rel = "pkg/__init__.py"
    edges = page_call_edges(docs, rel)
    assert (rel, "sym-Visitor.visit", rel, "sym-Visitor._simple_visit", 12) in edges
    assert (rel, "sym-Visitor.run", rel, "sym-Handler.handle", 20) in edges
