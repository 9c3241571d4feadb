"""Every claim of the pages against the ``ast`` oracle (tests/indexgen/oracle.py), on the
sample project and on code nobody here wrote: the installed torch's ``torch/distributed/fsdp``,
griffe and numpy (found with ``importlib.util.find_spec``, never imported).

Targets: precision and recall 1.00 for definitions, imports and importers, at least 0.95 for
the call edges the oracle resolves ("Calls" and "Called by"; typed edges beyond them are
measured against what really runs, in ``test_trace_recall.py``), every collective and
file-system call the oracle sees listed, and no literal reStructuredText role or
````literal```` pair in any rendered page.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import shutil
from pathlib import Path

import markdown
import pytest
from ig_helpers import SAMPLE
from indexgen import Config, build
from oracle import Oracle, precision_recall
from page_claims import page_call_edges, page_callers, page_entries, resolve_page
from reported_lines import reported_lines


def _installed(name: str, *sub: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        pytest.skip(f"{name} is not installed")
    return Path(list(spec.submodule_search_locations)[0]).joinpath(*sub)


TREES = {
    "sample": lambda: SAMPLE / "src",
    "torch-fsdp": lambda: _installed("torch", "distributed", "fsdp"),
    "griffe": lambda: _installed("griffe"),
    "numpy": lambda: _installed("numpy"),
}


@pytest.fixture(scope="module", params=sorted(TREES))
def tree(request, tmp_path_factory):
    """(oracle, output folder, source root) of one tree, built once per module."""
    root = TREES[request.param]()
    base = tmp_path_factory.mktemp(request.param)
    tests = []
    if request.param == "sample":
        shutil.copytree(SAMPLE, base / "sample")
        root, tests = base / "sample" / "src", [base / "sample" / "tests"]
    out = base / "out"
    build(Config(roots=[root], out=out, tests=tests, base=root.parent, jobs=2))
    return request.param, Oracle(root), out, root


def _pages(out: Path, rel: str) -> tuple[str, str]:
    return (out / f"{rel}_kw.md").read_text(), (out / f"{rel}_docs.md").read_text()


def test_definitions_and_imports_exactly(tree):
    name, oracle, out, _root = tree
    claimed_defs, true_defs, claimed_imports, true_imports = set(), set(), set(), set()
    for mod in oracle.mods.values():
        kw, _docs = _pages(out, mod.rel)
        claimed_defs |= {(mod.rel, *e) for e in page_entries(kw, "Classes")}
        claimed_defs |= {(mod.rel, *e) for e in page_entries(kw, "Functions")}
        true_defs |= {(mod.rel, d.qualname, d.line) for d in mod.defs}
        claimed_imports |= {(mod.rel, *e) for e in page_entries(kw, "Imports")}
        true_imports |= {(mod.rel, label, line) for label, line in _import_labels(mod.tree)}
    assert len(true_defs) > 5
    assert precision_recall(claimed_defs, true_defs) == (1.0, 1.0), (
        sorted(claimed_defs ^ true_defs)[:10])
    assert precision_recall(claimed_imports, true_imports) == (1.0, 1.0), (
        sorted(claimed_imports ^ true_imports)[:10])


def _import_labels(tree: ast.Module):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name + (f" as {a.asname}" if a.asname else ""), a.lineno
        elif isinstance(node, ast.ImportFrom):
            written = "." * node.level + (node.module or "")
            for a in node.names:
                sep = "" if written.endswith(".") else "."
                yield f"{written}{sep}{a.name}" + (f" as {a.asname}" if a.asname else ""), \
                    a.lineno


_IMPORTER = re.compile(r"^- \[[^\]]+\]\(([^)#]+)\): imports", re.M)


def test_importers_exactly(tree):
    name, oracle, out, _root = tree
    claimed, truth = set(), set()
    for mod in oracle.mods.values():
        _kw, docs = _pages(out, mod.rel)
        section = docs.split("\n### Imported by\n", 1)[1].split("\n### ", 1)[0]  # always there
        folder = mod.rel.rpartition("/")[0]
        for link in _IMPORTER.findall(section):
            claimed.add((resolve_page(folder, link), mod.rel))
        truth |= {(mod.rel, target) for target in oracle.import_targets(mod)}
    assert precision_recall(claimed, truth) == (1.0, 1.0), sorted(claimed ^ truth)[:10]


def test_call_edges(tree):
    name, oracle, out, _root = tree
    truth = oracle.call_edges()
    definitions = {(m.rel, a) for m in oracle.mods.values() for a in oracle.anchors(m).values()}
    calls, callers, overrides = set(), set(), set()
    for mod in oracle.mods.values():
        _kw, docs = _pages(out, mod.rel)
        calls |= page_call_edges(docs, mod.rel, overrides=False)
        overrides |= page_call_edges(docs, mod.rel, overrides=True)
        callers |= page_callers(docs, mod.rel)
    callers -= overrides - truth  # the overrides a call may run: checked below
    # The pages also resolve calls on values by their types, which the oracle does not: its
    # edges must all be there, and at the call sites it resolves the pages' edges must be
    # its own (a line holding a second, typed call may add one: hence 0.95).
    sites = {(e[0], e[1], e[4]) for e in truth}
    to_definitions = {e for e in truth if (e[2], e[3]) in definitions}
    for claimed, true in ((calls, truth), (callers, to_definitions)):
        at_sites = {e for e in claimed if (e[0], e[1], e[4]) in sites}
        p, r = precision_recall(at_sites, true)
        assert p >= 0.95 and r >= 0.95, (name, p, r, sorted(at_sites - true)[:6],
                                         sorted(true - at_sites)[:6])
    assert calls <= callers | {e for e in calls if (e[2], e[3]) not in definitions}
    # an override a call may run is a method of the name a call at that line calls (the
    # line Python reports: ``ma.array(...,\n  mask=m).view(t)``'s ``view`` is at its last),
    # or the ``__init__`` of a subclass where a class value is called (``cls(x)``,
    # ``type(x)()``)
    by_rel = {m.rel: m for m in oracle.mods.values()}
    # or a function a subclass binds to that method's name in its body (``_int =
    # staticmethod(legint)``, ``can_fuse_horizontal = can_fuse``): its own name differs
    rebound: dict[str, set[str]] = {}
    for m in oracle.mods.values():
        for cls in (n for n in ast.walk(m.tree) if isinstance(n, ast.ClassDef)):
            for stmt in cls.body:
                if isinstance(stmt, ast.Assign):
                    for t in stmt.targets:
                        for n in ast.walk(stmt.value) if isinstance(t, ast.Name) else ():
                            if isinstance(n, (ast.Name, ast.Attribute)):
                                rebound.setdefault(getattr(n, "id", None) or n.attr,
                                                   set()).add(t.id)
    methods_called: dict[str, set[tuple[int, str]]] = {}
    for caller_rel, _caller, _callee_rel, callee, line in overrides:
        called = methods_called.get(caller_rel)
        if called is None:
            calls_here = [n for n in ast.walk(by_rel[caller_rel].tree) if isinstance(n, ast.Call)]
            at = reported_lines(by_rel[caller_rel].tree)
            # a name bound to a bound method (``f = a.copy``, then ``f()``) calls it too
            bound: dict[str, set[str]] = {}
            for n in ast.walk(by_rel[caller_rel].tree):
                if isinstance(n, ast.Assign) and isinstance(n.value, ast.Attribute):
                    for t in n.targets:
                        if isinstance(t, ast.Name):
                            bound.setdefault(t.id, set()).add(n.value.attr)
            # so does a parameter a call hands one (``self._generate_string(self._str_term_ascii)``,
            # then ``term_method(...)`` in ``_generate_string``): virtual.method_reads
            params = {d.name: [a.arg for a in d.args.args] for d in ast.walk(by_rel[caller_rel].tree)
                      if isinstance(d, ast.FunctionDef)}
            for n in calls_here:
                fname = getattr(n.func, "attr", None) or getattr(n.func, "id", None)
                names = params.get(fname, [])
                skip = int(isinstance(n.func, ast.Attribute) and names[:1] in (["self"], ["cls"]))
                for i, arg in enumerate(n.args):
                    if isinstance(arg, ast.Attribute) and i + skip < len(names):
                        bound.setdefault(names[i + skip], set()).add(arg.attr)
            called = methods_called[caller_rel] = {
                (at[id(n)], n.func.attr) for n in calls_here if isinstance(n.func, ast.Attribute)
            } | {(at[id(n)], attr) for n in calls_here if isinstance(n.func, ast.Name)
                 for attr in bound.get(n.func.id, ())
            } | {(at[id(n)], "__init__") for n in calls_here
                 if isinstance(n.func, (ast.Name, ast.Call)) or isinstance(
                     n.func, ast.Attribute) and n.func.attr == "__class__"}
        last = callee.rpartition(".")[2]
        names = {last, *rebound.get(last.removeprefix("sym-"), ())}
        assert any((line, n) in called for n in names), (caller_rel, line, callee)
    if name in ("sample", "torch-fsdp"):
        assert len({e for e in truth if e[1]}) >= 10


_COLLECTIVES = {"all_reduce", "all_gather_into_tensor", "reduce_scatter_tensor", "all_gather",
                "reduce_scatter", "all_to_all_single", "barrier"}
_PATH_IO = {"read_text", "write_text", "read_bytes", "write_bytes", "mkdir", "iterdir"}


def test_collectives_and_file_system_calls_are_listed(tree):
    _name, oracle, out, _root = tree
    for mod in oracle.mods.values():
        _kw, docs = _pages(out, mod.rel)
        if "\n## Performance Considerations\n" not in docs:  # a page of nothing analyzed
            assert not any(isinstance(n, ast.Call) for n in ast.walk(mod.tree)), mod.rel
            assert "\n- **Status**: `empty`" in docs, mod.rel
            continue
        perf = docs.split("\n## Performance Considerations\n", 1)[1].split("\n## ", 1)[0]
        sec = docs.split("\n## Security & Safety\n", 1)[1].split("\n## ", 1)[0]
        at = reported_lines(mod.tree)
        for node in ast.walk(mod.tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            attr = func.attr if isinstance(func, ast.Attribute) else ""
            head = func.value.id if isinstance(func, ast.Attribute) and isinstance(
                func.value, ast.Name) else ""
            where = f"[line {at[id(node)]}](#L{at[id(node)]})"
            if attr in _COLLECTIVES and head in ("dist", "c10d", "funcol"):
                assert where in perf.split("### Collective communication", 1)[-1], (mod.rel, where)
            is_file = (isinstance(func, ast.Name) and func.id == "open") or (
                head == "os" and attr in ("scandir", "listdir", "walk", "remove", "makedirs")
            ) or attr in _PATH_IO
            if is_file and "### File system access" in sec:
                assert where in sec.split("### File system access", 1)[1], (mod.rel, where)
            elif is_file:
                pytest.fail(f"{mod.rel}: file access at line {at[id(node)]} not listed")


_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|exc|obj|const):`")


_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`).+?(?<!`)\1(?!`)", re.S)


def _prose(page: str, render: bool) -> str:
    """What a reader sees of a page outside code: rendered with Python-Markdown, or (for the
    large tree, to keep the suite fast) the Markdown with its code spans and blocks cut out
    by CommonMark's backtick-run rule."""
    prose = re.sub(r"<details.*?</details>|<pre.*?</pre>", "", page, flags=re.S)
    if not render:
        return _CODE_SPAN.sub("", re.sub(r"<code>.*?</code>", "", prose, flags=re.S))
    html = markdown.markdown(prose, extensions=["tables", "md_in_html", "toc"])
    return re.sub(r"<code>.*?</code>", "", html, flags=re.S)


def test_no_literal_rst_in_rendered_pages(tree):
    name, _oracle, out, _root = tree
    checked = 0
    for page in sorted(out.rglob("*.md")):
        text = _prose(page.read_text(), render=name != "numpy")
        assert "``" not in text, (page, text[text.index("``") - 200: text.index("``") + 100])
        assert not _ROLE.search(text), (page, _ROLE.search(text).group())
        checked += 1
    assert checked > 5


def test_test_references_of_the_sample(tmp_path):
    shutil.copytree(SAMPLE, tmp_path / "sample")
    root, out = tmp_path / "sample" / "src", tmp_path / "out"
    build(Config(roots=[root], out=out, tests=[root.parent / "tests"], base=root.parent,
                 jobs=1))
    oracle, tests = Oracle(root), Oracle(root.parent / "tests")
    truth = set()
    for test in tests.mods.values():
        for node in ast.walk(test.tree):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    target = oracle.module_attr(node.module, [alias.name], 0)
                    if target and target[1] in oracle.mods:
                        truth.add((f"tests/{test.rel}", oracle.mods[target[1]].rel))
                        if node.module in oracle.mods:
                            truth.add((f"tests/{test.rel}", oracle.mods[node.module].rel))
    claimed = set()
    for mod in oracle.mods.values():
        _kw, docs = _pages(out, mod.rel)
        section = docs.split("\n### Tests\n", 1)[1].split("\n### ", 1)[0]
        for path in re.findall(r"^- `([^`]+)` \(import at", section, re.M):
            claimed.add((path, mod.rel))
    assert len(truth) >= 4
    assert precision_recall(claimed, truth) == (1.0, 1.0), sorted(claimed ^ truth)
