"""Every call is accounted for (issue 31, item 1): a call site either makes an edge on its
caller's "Calls" (a project callee, an override, a name outside the build), or is counted
under "Not resolved statically" with its reason, or calls a builtin -- never none of these.

Checked on every file of the sample project and of all of the installed torch.  The call
sites are found independently of indexgen, by walking each file's ``ast`` for ``Call``
nodes, each at the line Python reports it at (``reported_lines.py``); indexgen's own records
of them (the file summaries) must cover every such line, and the global pass's ledger (:data:`indexgen.analyze.callgraph.Ledger`) must give each
record an outcome that the contexts the pages are rendered from show: an edge at that line,
or that line under its reason (the calls on local values whose type is unknown are counted by
the page itself: :func:`indexgen.render.calls.unresolved`); a definition's calls not resolved
are exactly its records with no edge, line for line.  A builtin must exist
(``list.render`` does not: the ``.append`` retyping bug of issue 31 made such calls vanish),
and the names of the standard library given as callees mostly exist (:data:`STDLIB_MADE_UP`).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from ig_helpers import SAMPLE
from indexgen.analyze.containers import builtin_exists
from indexgen.analyze.project import Project, compact
from indexgen.extract.discover import discover, walk_python_files
from indexgen.extract.model import FileSummary
from indexgen.extract.needed import typed_local
from indexgen.extract.pipeline import read_and_extract
from reported_lines import reported_lines


def _extract(job: tuple) -> tuple[FileSummary, list, list, int]:
    """One file, in a worker: the compact summary the global pass reads, the file's call
    records (one per callee and line: ``f(x) + f(y)`` is one, the pages list lines) that
    the pass must account for, the problems found without it (an ``ast.Call`` line, the
    oracle's, with no record) and how many records the page itself counts (calls on local
    values whose type is unknown).  The full summary stays here: only what the check reads
    crosses the process boundary."""
    path, root, rel, module = job
    summary = read_and_extract(Path(path), root, rel, module, 2_000_000, later=[])[0]
    if summary.status != "ok":
        return compact(summary), [], [], 0
    try:
        tree = ast.parse(Path(path).read_bytes())
    except (SyntaxError, ValueError):  # indexgen read it: the oracle must too
        return compact(summary), [], [(summary.key, 0, "ast cannot parse it")], 0
    lines = set(reported_lines(tree).values())  # the line Python reports each call at
    records = list(dict.fromkeys(c for c in summary.calls if c.text[0] not in "&^<"))
    missing = lines - {c.line for c in records}
    problems = [(summary.key, line, "a call with no record") for line in sorted(missing)]
    names = {d.anchor: d.names for d in summary.definitions if d.names}
    kept = [c for c in records if not (c.local and not typed_local(c, names))]
    return compact(summary), kept, problems, len(records) - len(kept)


def _problems(root: Path, tests: Path | None = None,
              outside: Counter | None = None) -> tuple[list, Counter]:
    """What breaks the accounting in the tree ``root`` (with its test folder), and how many
    call sites ended each way; ``outside`` counts the names outside the build the pages
    give as callees."""
    sources = [(str(s.path), s.root, s.relpath, s.module) for s in discover(root)]
    test_jobs = [(str(tests / rel), "tests", rel, "") for rel in
                 walk_python_files(tests)] if tests else []
    with ProcessPoolExecutor(2) as pool:
        done = list(pool.map(_extract, sources + test_jobs, chunksize=16))
    test_summaries = {f"{tests.name}/{s.relpath}": s for s, *_ in done[len(sources):]}
    project = Project([s for s, *_ in done[:len(sources)]], test_summaries)
    ledger: dict = {}
    contexts = project.contexts(ledger)
    problems: list = []
    ends: Counter = Counter()
    for s, records, found, local in done[:len(sources)]:
        if s.status != "ok":
            continue
        problems += found
        if local:
            ends["counted by the page (local value)"] += local
        ctx = contexts[s.key]
        if outside is not None:
            outside.update(e.label for out in ctx.calls.values() for e in out
                           if e.kind == "external")
        counted: dict[str, Counter] = {}  # caller -> the lines of its calls not resolved
        for c in records:
            kinds = [k for k in ledger.get((s.key, c.caller, c.line, c.text), ())
                     if k != "read"]  # a property read on the way: not the call's end
            if not kinds:
                problems.append((s.key, c.line, c.text, "no outcome"))
                continue
            for kind in kinds:
                if kind.startswith("builtin:") and not builtin_exists(kind[8:]):
                    problems.append((s.key, c.line, c.text, f"no such builtin: {kind}"))
            if "unresolved" in kinds:
                counted.setdefault(c.caller, Counter())[c.line] += 1
                ends["not resolved"] += 1
            elif any(k in ("project", "override", "closure", "external") for k in kinds):
                ends["edge"] += 1
                if not any(e.line == c.line for e in ctx.calls.get(c.caller, ())):
                    # into a test's code: counted instead
                    counted.setdefault(c.caller, Counter())[c.line] += 1
            elif all(k.startswith("builtin:") for k in kinds):
                ends["builtin"] += 1
            else:
                problems.append((s.key, c.line, c.text, f"no edge on the page: {kinds}"))
        for caller in set(counted) | set(ctx.unresolved):
            shown = Counter(line for lines in ctx.unresolved.get(caller, {}).values()
                            for line in lines)
            missed = counted.get(caller, Counter())
            if shown != missed:
                problems.append((s.key, caller, f"shows lines {sorted(shown.elements())}, "
                                 f"not resolved {sorted(missed.elements())}"))
    return problems, ends


#: Calls that once made no edge and no count: a value typed by its annotation and appended
#: to (it was retyped as a list, whose ``render`` then vanished as a builtin's), a called
#: lambda (no record), an instance without ``__call__`` called (counted twice), a call
#: resolved in the second round to nothing but a property read on the way (uncounted).  And
#: a call the second round resolves between two it does not (``h.work()`` in ``use``): its
#: line, not another's, leaves the lines not resolved.
CASES = '''
class Cont2:
    def append(self, k, it): ...
    def render(self): ...

class Abs:
    def __init__(self, value: Cont2):
        self._value = value

class Tab(Abs):
    def add(self, k, it):
        self._value.append(k, it)

    def show(self):
        return self._value.render()

class Plain:
    pass

class Holder:
    @property
    def plain(self) -> Plain:
        return Plain()

def run(a: Plain, b: Plain | Holder):
    (lambda: 1)()
    a()
    b()

def relay(h):
    return h.plain.go()

def start():
    holder = Holder()
    relay(holder)

class Worker:
    def work(self): ...

def use(h, g):
    g.first()
    h.work()
    g.last()

def begin(x):
    worker = Worker()
    use(worker, x)
'''


def test_every_call_of_the_cases_is_accounted_for(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "cases.py").write_text(CASES)
    problems, ends = _problems(tmp_path / "pkg")
    assert problems == []
    # (lambda: 1)() is an edge: a lambda is a closure of run (indexgen.analyze.lambdas)
    assert dict(ends) == {"edge": 9, "not resolved": 5}, ends


def test_every_call_of_the_sample_is_accounted_for():
    problems, ends = _problems(SAMPLE / "src", SAMPLE / "tests")
    assert problems == []
    assert ends["edge"] >= 20 and ends["builtin"] >= 5 and ends["not resolved"] >= 1, ends


def _missing_from_stdlib(name: str) -> bool:
    """Whether ``name`` starts with a module of the standard library and, imported (here,
    in the test: indexgen never imports what it documents), names nothing."""
    parts = name.split(".")
    if parts[0] not in sys.stdlib_module_names:
        return False
    for i in range(len(parts) - 1, 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for part in parts[i:]:
            found = getattr(found, part, _NOTHING)
            if found is _NOTHING:
                return True
        return False
    return False


_NOTHING = object()
#: The edges of torch's pages to a name of the standard library that does not exist, at
#: most (181 on 2026-11-29, from 1,246 before that day's fix: a mixin's ``abc.ABC.assertEqual``,
#: ``typing.Any.size`` through an alias of ``Any``, ``math.inf.clone``, ``typing.TypedDict.
#: get``; what is left: a ``NamedTuple``'s generated methods, Windows' and newer Pythons'
#: names, calls on unions of unrelated types).
STDLIB_MADE_UP = 250


def test_every_call_of_torch_is_accounted_for():
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("torch is not installed")
    outside: Counter = Counter()
    problems, ends = _problems(Path(list(spec.submodule_search_locations)[0]),
                               outside=outside)
    assert problems[:20] == [] and len(problems) == 0, len(problems)
    assert sum(ends.values()) > 200_000, ends
    made_up = Counter({n: k for n, k in outside.items() if _missing_from_stdlib(n)})
    assert sum(made_up.values()) <= STDLIB_MADE_UP, made_up.most_common(20)
    assert sum(outside.values()) > 15_000, len(outside)  # the check read the pages' names
