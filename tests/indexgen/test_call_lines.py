"""A call is listed at the line Python reports for it (tracebacks, ``frame.f_lineno``, the
profiler): for a method call written over lines, the line of the method's name.

:func:`test_pages_list_each_call_at_the_line_python_reports` runs the forms a call may be
written in under :func:`sys.setprofile` (``trace_workload.record``, the real oracle) and
finds every observed call on the pages at the line it was observed at; the lines marked
``# <-`` in the source say, by hand, where the interpreter reports them, so that the forms
keep being the ones that matter.  :func:`test_call_line_is_the_compilers_on_real_code`
holds :func:`indexgen.extract.calls.call_line` and the oracles' own rule
(``reported_lines.by_syntax``) to CPython's compiled positions on that source and on
torch's ``torch/distributed/fsdp``.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
from pathlib import Path

import pytest
from indexgen import Config, build
from indexgen.extract.calls import call_line, imported_names
from indexgen.extract.pipeline import read_and_extract
from reported_lines import by_syntax, module_imports, reported_lines
from trace_recall import page_edges, truth
from trace_workload import record

HELPERS = '''\
def work(text):
    return text
'''

CHAINS = '''\
import contextlib

from lines_pkg import helpers


class Parser:
    def __init__(self):
        self.name = ""

    def set_name(self, name):
        self.name = name
        return self

    def parse_string(self, text, *rest, **kw):
        return text

    def opened(self):
        return contextlib.nullcontext(self)

    def wrap(self, k):
        return lambda fn: fn


class Child(Parser):
    def parse_string(self, text, *rest, **kw):
        return (super()
                .parse_string(text))  # <-


def make() -> Parser:
    return Parser()  # <-


def chained(p: Parser, text):
    return (p
            .set_name("x")  # <-
            .parse_string(text))  # <-


def keyword(p: Parser, text):
    return (p
            .parse_string(text, strict=True))  # <-


def late_paren(p: Parser, text):
    return (p
            .parse_string  # <-
            (text))


def grouped(p: Parser, text):
    return (p
            .parse_string)(text)  # <-


def on_a_result(text):
    return (make()  # <-
            .parse_string(text))  # <-


def in_a_comprehension(p: Parser, texts):
    return [p
            .parse_string(t) for t in texts]  # <-


def in_a_with(p: Parser):
    with (p
          .opened()):  # <-
        pass


def decorated(p: Parser):
    @(p
      .wrap(1))  # <-
    def inner():
        return 1
    return inner


def starred(p: Parser, args):
    return (p  # <-
            .parse_string(*args))


def double_starred(p: Parser, text, kw):
    return (p  # <-
            .parse_string(text, **kw))


def thirty(p: Parser):  # 30 arguments: no method call to the compiler
    return (p  # <-
            .parse_string(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
                          15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29))


def twenty_nine(p: Parser):
    return (p
            .parse_string(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,  # <-
                          15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28))


def through_a_module(text):
    return (helpers  # <-
            .work(text))


def spread(text):
    return helpers.work(  # <-
        text)


def run():
    p = Parser()
    chained(p, "t")
    keyword(p, "t")
    late_paren(p, "t")
    grouped(p, "t")
    on_a_result("t")
    in_a_comprehension(p, ["t"])
    in_a_with(p)
    decorated(p)
    starred(p, ["t"])
    double_starred(p, "t", {"k": 1})
    thirty(p)
    twenty_nine(p)
    through_a_module("t")
    spread("t")
    Child().parse_string("t")
'''


def test_pages_list_each_call_at_the_line_python_reports(tmp_path):
    pkg = tmp_path / "src" / "lines_pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text(HELPERS)
    (pkg / "chains.py").write_text(CHAINS)
    out = tmp_path / "out"
    build(Config(roots=[pkg], out=out, tests=[], base=pkg.parent, jobs=1))
    sys.path.insert(0, str(pkg.parent))
    try:
        def work() -> None:
            importlib.import_module("lines_pkg.chains").run()
        observed = record(work, str(pkg))
    finally:
        sys.path.remove(str(pkg.parent))
        for name in [m for m in sys.modules if m.split(".")[0] == "lines_pkg"]:
            del sys.modules[name]
    true, _left_out = truth(pkg, observed)
    marked = {n for n, row in enumerate(CHAINS.split("\n"), 1) if row.endswith("# <-")}
    run_line = CHAINS.split("\n").index("def run():") + 1
    assert {e[4] for e in true if e[4] < run_line} == marked  # the forms are the ones meant
    calls, callers = page_edges(pkg, out)
    assert true - calls == set(), sorted(true - calls)
    assert true - callers == set(), sorted(true - callers)


def _fsdp() -> Path:
    spec = importlib.util.find_spec("torch")
    return Path(list(spec.submodule_search_locations)[0]) / "distributed" / "fsdp"


@pytest.mark.parametrize("tree_name", ["chains", "torch-fsdp"])
def test_call_line_is_the_compilers_on_real_code(tree_name, tmp_path):
    if tree_name == "chains":
        root = tmp_path / "lines_pkg"
        root.mkdir()
        (root / "chains.py").write_text(CHAINS)
    else:
        root = _fsdp()
    compared = moved = 0
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_bytes())
        compiled = reported_lines(tree, fallback=None)
        imports = module_imports(tree)
        summary = read_and_extract(path, root, path.relative_to(root).as_posix(), "m",
                                   2_000_000, later=[])[0]
        imported = imported_names(summary.imports)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and id(node) in compiled:
                line = compiled[id(node)]
                assert call_line(node, imported) == line, (path, node.lineno, line)
                assert by_syntax(node, imports) == line, (path, node.lineno, line)
                compared += 1
                moved += line != node.lineno
    assert compared > 30 and moved >= 10, (compared, moved)
