"""Tests for indexgen.extract.pipeline: definitions, imports, identifiers, findings, bad files."""

from __future__ import annotations

import ast

import pytest
from ig_helpers import SAMPLE
from indexgen.extract.model import (
    STATUS_EMPTY,
    STATUS_OK,
    STATUS_SYNTAX_ERROR,
    STATUS_TIMEOUT,
    STATUS_TOO_LARGE,
    STATUS_UNDECODABLE,
)
from indexgen.extract.pipeline import extract_source
from indexgen.extract.source import module_name
from indexgen.extract.syntax import path

INVENTORY = (SAMPLE / "src/shop/inventory.py").read_bytes()
GATEWAY = (SAMPLE / "src/shop/payments/gateway.py").read_bytes()


def _extract(data: bytes, rel: str = "pkg/mod.py", max_bytes: int = 1_000_000,
             time_budget: float = 0):
    return extract_source(data, "src", rel, module_name(rel), max_bytes, time_budget)


def _ast_defs(data: bytes) -> list[tuple[str, int]]:
    """(qualname, line) of every class/function reachable without entering a function."""
    found = []

    def visit(body, prefix):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.append((prefix + node.name, node.lineno))
                if isinstance(node, ast.ClassDef):
                    visit(node.body, prefix + node.name + ".")
            elif isinstance(node, (ast.If, ast.Try, ast.With)):
                visit(node.body, prefix)
                visit(getattr(node, "orelse", []), prefix)

    visit(ast.parse(data).body, "")
    return found


def test_module_name():
    assert module_name("a/b/c.py") == "a.b.c"
    assert module_name("a/b/__init__.py") == "a.b"
    assert module_name("x.py", "torch.distributed") == "torch.distributed.x"


def test_every_definition_with_its_def_line():
    s = _extract(INVENTORY)
    assert s.status == STATUS_OK
    got = [(d.qualname, d.lineno) for d in s.definitions]
    assert sorted(got) == sorted(_ast_defs(INVENTORY))


def test_redefinitions_and_setters_get_distinct_anchors():
    s = _extract(INVENTORY)
    anchors = [d.anchor for d in s.definitions] + [a.anchor for a in s.attributes]
    assert len(anchors) == len(set(anchors))
    restocks = [d for d in s.definitions if d.qualname == "restock"]
    assert [d.anchor for d in restocks] == ["sym-restock", "sym-restock-2"]
    assert restocks[1].summary == "Second definition: indexgen must keep both."
    labels = [d for d in s.definitions if d.qualname == "Item.label"]
    assert len(labels) == 2 and all(d.kind == "property" for d in labels)


def test_kinds_labels_and_signatures_from_griffe():
    s = _extract(INVENTORY)
    by = {d.anchor: d for d in s.definitions}
    assert by["sym-Item"].labels == ["dataclass"]
    assert by["sym-Stock.refresh"].labels == ["async"]
    assert by["sym-Stock.add"].signature == "add(item: Item, count: int = 1) -> None"
    assert by["sym-Stock.Entry.total"].parent == "Stock.Entry"
    assert by["sym-Category"].bases == ["enum.Enum"]
    assert by["sym-Stock.add"].summary == "Add ``count`` units of ``item``."


def test_imports_with_scope_and_resolution():
    s = _extract(GATEWAY, rel="shop/payments/gateway.py")
    imports = {(i.written, i.module, i.name, i.alias, i.scope) for i in s.imports}
    assert ("..cart", "shop.cart", "Cart", "", "module") in imports
    assert ("torch.distributed", "torch.distributed", "", "dist", "module") in imports
    assert ("pickle", "pickle", "", "", "function") in imports
    inv = _extract(INVENTORY, rel="shop/inventory.py")
    scopes = {i.name: i.scope for i in inv.imports if i.name}
    assert scopes["Cart"] == "type-checking"


def test_identifiers_come_from_code_not_comments():
    s = _extract(INVENTORY)
    assert "MAX_STOCK" in s.identifiers and "levels" in s.identifiers
    assert "because" not in s.identifiers and "therefore" not in s.identifiers
    assert "Markdown" not in s.identifiers  # only in the docstring
    first, uses = s.identifiers["MAX_STOCK"]
    assert first == INVENTORY.decode().split("\n").index("MAX_STOCK = 1000") + 1
    assert uses == 3


def test_findings_classify_calls():
    s = _extract(GATEWAY, rel="shop/payments/gateway.py")
    found = {(f.category, f.text, f.note) for f in s.findings}
    assert ("collective", "dist.all_reduce", "") in found
    assert ("synchronization", "work.wait", "") in found
    assert ("stream", "torch.cuda.Stream", "") in found
    assert ("event", "torch.cuda.Event", "") in found
    assert ("event", "event.record", "") in found
    assert ("synchronization", "torch.cuda.synchronize", "") in found
    assert ("allocation", "torch.empty", "") in found
    assert ("deserialization", "torch.load", "torch.load without weights_only") in found
    assert ("network", "socket.create_connection", "") in found
    # torch.load(..., weights_only=True) is safe and not reported
    loads = [f for f in s.findings if f.text == "torch.load"]
    assert len(loads) == 1
    lines = GATEWAY.decode().split("\n")
    for f in s.findings:
        if f.category in ("collective", "deserialization"):
            assert f.text.split(".")[-1] in lines[f.lineno - 1]


def test_a_call_through_an_import_alias_is_classified_as_what_it_stands_for():
    src = (b"import subprocess as sp\n"                       # 1
           b"from subprocess import run as sh\n"              # 2
           b"from pickle import loads as unpickle\n"          # 3
           b"from importlib import import_module as imp\n"    # 4
           b"from torch import load as tload\n"               # 5
           b"def f(b):\n"                                     # 6
           b"    sp.run(['ls'])\n"                            # 7
           b"    sh(['ls'])\n"                                # 8
           b"    unpickle(b)\n"                               # 9
           b"    imp(b)\n"                                    # 10: a computed name
           b"    tload(b, weights_only=True)\n"               # 11
           b"    from os import system as shell\n"            # 12: a function's own import
           b"    shell('ls')\n"                               # 13
           b"    sh2 = 1\n"                                   # 14
           b"    sh2()\n"                                     # 15: no import: nothing
           b"    tload(b)\n"                                  # 16
           b"    from os import system as system\n"           # 17: re-exported, not renamed
           b"    system('ls')\n")                             # 18: once
    s = _extract(src)
    found = {(f.category, f.lineno, f.text, f.note) for f in s.findings
             if f.category not in ("generator", "global-state")}
    assert found == {("subprocess", 7, "sp.run", ""), ("subprocess", 8, "sh", ""),
                     ("deserialization", 9, "unpickle", ""), ("dynamic-import", 10, "imp", ""),
                     ("subprocess", 13, "shell", ""),  # torch.load(weights_only=True): safe
                     ("deserialization", 16, "tload", "torch.load without weights_only"),
                     ("subprocess", 18, "system", "")}
    assert len([f for f in s.findings if f.lineno == 18]) == 1


def test_an_import_of_a_module_the_source_names_is_lazy_not_dynamic():
    # rich's SystemPager._pager: __import__("pydoc").pager(content) was a "Dynamic imports"
    # finding, and 51 rich pages said so through the project functions reaching it.
    src = (b"import importlib\n"                              # 1
           b"from importlib import import_module as imp\n"   # 2
           b"PAGER = 'pydoc'\n"                               # 3
           b"MODS = {'a': 'json'}\n"                          # 4
           b"NAMES = ['json', 'csv']\n"                       # 5
           b"def f(name, k):\n"                               # 6
           b"    __import__('pydoc').pager('x')\n"            # 7
           b"    importlib.import_module('json')\n"           # 8
           b"    imp(PAGER)\n"                                # 9
           b"    imp(MODS[k])\n"                              # 10: one module all the same
           b"    importlib.import_module(name)\n"             # 11: computed
           b"    __import__(f'x{name}')\n"                    # 12: computed
           b"    imp(NAMES[k])\n"                             # 13: one of two
           b"    imp('a' if name else 'b')\n")                # 14: one of two
    found = {(f.category, f.lineno) for f in _extract(src).findings
             if f.category == "dynamic-import"}
    assert found == {("dynamic-import", n) for n in (11, 12, 13, 14)}


def test_command_line_options_in_source_order():
    src = (b"import argparse\n"
           b"if __name__ == '__main__':\n"
           b"    p = argparse.ArgumentParser()\n"
           b"    p.add_argument('path')\n"
           b"    p.add_argument('-c', '--code-theme')\n"
           b"    if True:\n"
           b"        p.add_argument('-w', '--width'); p.add_argument('--wrap')\n"
           b"    p.add_argument('--page')\n")
    s = _extract(src)
    assert s.cli_options == ["path", "-c", "--code-theme", "-w", "--width", "--wrap", "--page"]


def test_empty_file():
    s = _extract(b"")
    assert s.status == STATUS_EMPTY and s.size == 0 and "empty" in s.error


def test_huge_file():
    s = _extract(b"x = 1\n" * 100, max_bytes=50)
    assert s.status == STATUS_TOO_LARGE
    assert "600" in s.error and "50" in s.error and s.n_lines == 100


def test_undecodable_file():
    s = _extract(b"x = '\xff\xfe'\n")
    assert s.status == STATUS_UNDECODABLE
    assert "0xff" in s.error


def test_declared_latin1_and_bom_are_fine():
    s = _extract(b"# -*- coding: latin-1 -*-\nname = '\xe9t\xe9'\n")
    assert s.status == STATUS_OK and s.encoding == "iso-8859-1"
    assert [a.name for a in s.attributes] == ["name"]
    s = _extract(b"\xef\xbb\xbfdef f():\n    pass\n")
    assert s.status == STATUS_OK and s.definitions[0].qualname == "f"


def test_syntax_error_reports_line():
    s = _extract(b"def ok():\n    pass\n\ndef broken(:\n")
    assert s.status == STATUS_SYNTAX_ERROR
    assert "line 4" in s.error
    assert s.definitions == []


def test_exports_from_all():
    s = _extract((SAMPLE / "src/shop/__init__.py").read_bytes(), rel="shop/__init__.py")
    assert s.is_package and s.module == "shop"
    assert s.exports == ["Cart", "Item", "Stock"]


def _many_attributes(n: int) -> bytes:
    """A module of ``n`` documented constants and as many small classes."""
    parts = ['"""Generated."""\n']
    for i in range(n):
        parts.append(f'C_{i} = {i}\n"""Doc of C_{i}."""\nclass K{i}:\n    a_{i} = {i}\n')
    return "".join(parts).encode()


def test_time_budget_gives_up_and_says_so():
    s = _extract(_many_attributes(3000), time_budget=0.001)
    assert s.status == STATUS_TIMEOUT
    assert s.error == "took longer than 0.001 s"
    assert s.definitions == [] and s.n_lines == 12001
    fine = _extract(_many_attributes(3), time_budget=30)
    assert fine.status == STATUS_OK


def test_time_budget_restores_an_existing_alarm_handler():
    import signal

    def mine(signum, frame):  # pragma: no cover - never fires
        raise AssertionError

    previous = signal.signal(signal.SIGALRM, mine)
    before = signal.getitimer(signal.ITIMER_REAL)[0]  # pytest-timeout may have one running
    try:
        _extract(_many_attributes(3), time_budget=5)
        assert signal.getsignal(signal.SIGALRM) is mine
        after = signal.getitimer(signal.ITIMER_REAL)[0]
        assert (0 < after <= before) if before else after == 0
    finally:
        signal.signal(signal.SIGALRM, previous)


def test_each_name_of_a_multiline_import_has_its_own_line():
    s = _extract(b"from os import (\n    path,\n    sep as separator,\n)\n")
    assert [(i.name, i.lineno) for i in s.imports] == [("path", 2), ("sep", 3)]


def test_calls_know_their_caller_and_whether_they_are_on_local_values():
    src = (b"import helpers\n\n"
           b"class A(Base):\n"
           b"    def run(self, x):\n"
           b"        y = make()\n"
           b"        y.go()\n"
           b"        x.go()\n"
           b"        self.step()\n"
           b"        super().run(x)\n"
           b"        helpers.work()\n\n"
           b"helpers.setup()\n")
    s = _extract(src)
    calls = {(c.caller, c.text, c.local) for c in s.calls if c.text[0] != "<"}
    # what a call hands its callee: one flow record (never local), read by analyze.flows
    # (and, all its arguments given by position, how many)
    assert [c.text for c in s.calls if c.text[0] == "<"] == ["<super().run\t0=x,#=1"]
    assert calls == {("sym-A.run", "make", False), ("sym-A.run", "y.go", True),
                     ("sym-A.run", "x.go", True), ("sym-A.run", "self.step", False),
                     ("sym-A.run", "super().run", False), ("sym-A.run", "super", False),
                     ("sym-A.run", "helpers.work", False),
                     ("", "helpers.setup", False)}


def test_isinstance_tests_and_appends_say_what_a_local_name_holds():
    # The walk leaves most calls at once; isinstance(x, T) and xs.append(v) it keeps, as
    # bindings: x may be a T (+: among what else it is), xs holds what x is.
    s = _extract(b"def f(x, xs):\n"
                 b"    if isinstance(x, Engine):\n"
                 b"        x.run()\n"
                 b"    xs.append(x)\n"
                 b"    xs[0].stop()\n")
    names = s.definitions[0].names
    assert "+:Engine" in names["x"] and "~[x]" in names["xs"]
    assert names["x@3"] == [":Engine", "#3"]  # inside the if: an Engine only


def test_global_declaration_is_not_a_local_binding():
    s = _extract(b"def f():\n    global g\n    g = make()\n    g.run()\n")
    assert [(c.text, c.local) for c in s.calls] == [("make", False), ("g.run", False)]


def test_file_system_calls_include_listing_and_path_methods():
    src = (b"import os\nfrom pathlib import Path\n\n"
           b"def f(p: Path):\n"
           b"    os.scandir('.')\n    p.open()\n    os.path.exists('x')\n    os.path.join('a')\n")
    s = _extract(src)
    assert [(f.text, f.lineno) for f in s.findings if f.category == "file"] == [
        ("os.scandir", 5), ("p.open", 6), ("os.path.exists", 7)]
    assert s.definitions[0].effects == ["file"]


def test_archives_opened_for_writing_are_file_system_access():
    src = (b"import tarfile\nimport zipfile\nfrom zipfile import ZipFile\n\n"
           b"def f(t):\n"
           b"    zipfile.ZipFile(t, 'w')\n    ZipFile(t)\n    tarfile.open(t)\n    t.ZipFile()\n")
    s = _extract(src)
    assert [(f.text, f.lineno) for f in s.findings if f.category == "file"] == [
        ("zipfile.ZipFile", 6), ("ZipFile", 7), ("tarfile.open", 8)]


def test_whole_docstrings_are_parsed_into_sections():
    s = _extract(b'def f(x: int = 1):\n    """Do.\n\n    More.\n\n    Args:\n        x: The x.\n    """\n')
    kinds = [sec.kind for sec in s.definitions[0].doc]
    assert kinds == ["text", "parameters"]
    item = s.definitions[0].doc[1].items[0]
    assert (item.name, item.annotation, item.default, item.description) == ("x", "int", "1",
                                                                             "The x.")
    assert s.definitions[0].doc[0].text == "Do.\n\nMore."


def test_overload_stubs_get_their_own_anchors():
    src = (b"from typing import overload\n@overload\ndef f(x: int) -> int: ...\n"
           b"@overload\ndef f(x: str) -> str: ...\ndef f(x):\n    return x\n")
    s = _extract(src)
    assert [(d.anchor, d.overload) for d in s.definitions] == [
        ("sym-f-overload-1", True), ("sym-f-overload-2", True), ("sym-f", False)]


def test_signature_defaults_read_as_ast_unparse_writes_them():
    source = ("def f(a=1, b=-2, c=True, d=None, e=0x10, f=10**20, g=name, h=os.sep,\n"
              "      i='x', j=1.5, k=(1, 2), l=None if x else 3): pass\n")
    tree = ast.parse(source)
    summary = extract_source(source.encode(), "r", "m.py", "m", 10**6)
    expected = ", ".join(f"{a.arg}={ast.unparse(d)}"
                         for a, d in zip(tree.body[0].args.args, tree.body[0].args.defaults))
    assert summary.definitions[0].signature == f"f({expected})"


def test_signatures_and_docstrings_left_for_later_come_out_the_same():
    # A build's worker leaves them for its idle time (indexgen.extract.enrich.finish); the
    # summary must then be the one a plain extraction makes.
    from indexgen.extract.enrich import finish

    for data, rel in ((INVENTORY, "shop/inventory.py"), (GATEWAY, "shop/payments/gateway.py")):
        now = _extract(data, rel)
        later: list = []
        left = extract_source(data, "src", rel, module_name(rel), 1_000_000, 0, later)
        assert later and any(d.signature for d in now.definitions)
        assert all(not d.doc for d in left.definitions)
        assert all(not d.signature for d in left.definitions if d.kind != "class")
        finish(left, later)
        assert left == now and not later


@pytest.mark.parametrize("source, text", [
    ('getattr(self, "parse_" + name)', 'getattr(self, "parse_*")'),
    ('getattr(self, f"visit_{kind}_end", None)', 'getattr(self, "visit_*_end", _)'),
    ('getattr(self, f"_compare_{ops[op]}")', 'getattr(self, "_compare_*")'),
    ('getattr(self, "run")', 'getattr(self, "run")'),
    ('getattr(self, name)', 'getattr(self, _)'),  # nothing stated
    ('getattr(self, "_" + name)', 'getattr(self, _)'),  # too little stated
    ('getattr(mod, "a.b")', 'getattr(mod, _)'),  # no attribute name
])
def test_a_name_given_to_getattr_is_kept_as_a_pattern(source, text):
    assert path(ast.parse(source).body[0].value) == text


def test_names_bound_only_under_type_checking():
    # What type checkers alone see: a class, a function, an alias and an import under
    # ``if TYPE_CHECKING:`` (nested blocks too); a name bound at run time as well (the
    # else branch, a later import) is importable.
    s = _extract(b"import typing as t\nfrom typing import TYPE_CHECKING\n"
                 b"if t.TYPE_CHECKING:\n    class Proto(t.Protocol): ...\n"
                 b"    def helper(): ...\n    Alias = t.Union[int, str]\n"
                 b"    from os import sep\n    try:\n        import json as js\n"
                 b"    except ImportError:\n        pass\n"
                 b"    class Both: ...\nelse:\n    Both = object\n"
                 b"if TYPE_CHECKING:\n    from os import path as later\n"
                 b"from os import path as later\nclass Runtime: ...\n")
    assert s.status == STATUS_OK
    assert s.type_checking == ["Alias", "Proto", "helper", "js", "sep"]
    assert {a.name for a in s.attributes} >= {"Alias", "Both"}  # still documented


def test_a_module_getattr_may_make_any_name_at_run_time():
    s = _extract(b"from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                 b"    class Lazy: ...\n\ndef __getattr__(name): ...\n")
    assert s.type_checking == []
