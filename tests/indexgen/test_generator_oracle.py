"""The trace oracle puts an observed call of a generator back where the caller made it.

A generator's body starts when it is first resumed: the profiler reports the call at the
resuming line (``next(it)``, ``list(it)``), and calling the generator function reports
nothing.  :func:`trace_recall.truth` moves such a call to the caller's last call of the
generator's name at or before that line, the call the pages list; a generator the caller
resumes without having made it keeps the resuming line.  Checked on a real run: the
workload below is traced, and each edge's line is compared with the lines read off the
source by hand (``# made``, ``# resumed-elsewhere``).
"""

from __future__ import annotations

import importlib
import sys

from indexgen import Config, build
from trace_recall import page_edges, truth
from trace_workload import record

GEN = '''
def numbers(n):
    for i in range(n):
        yield i


def made_then_resumed():
    it = numbers(3)  # made
    first = next(it)
    return [first, *it]


def resumes(it):
    return next(it)  # resumed-elsewhere


def made_here_resumed_there():
    return resumes(numbers(2))  # closed-here


def run():
    made_then_resumed()
    made_here_resumed_there()
    return list(numbers(1))  # same-line
'''


def test_a_generator_call_is_put_at_the_line_that_made_it(tmp_path):
    pkg = tmp_path / "src" / "gen_pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "gens.py").write_text(GEN)
    sys.path.insert(0, str(pkg.parent))
    try:
        observed = record(lambda: importlib.import_module("gen_pkg.gens").run(), str(pkg))
    finally:
        sys.path.remove(str(pkg.parent))
        for name in [m for m in sys.modules if m.split(".")[0] == "gen_pkg"]:
            del sys.modules[name]
    rows = GEN.split("\n")
    at = {mark: rows.index(next(r for r in rows if r.endswith(mark))) + 1
          for mark in ("# made", "# resumed-elsewhere", "# closed-here", "# same-line")}
    true, _left_out = truth(pkg, observed)
    into = {(e[1], e[4]) for e in true if e[3] == "sym-numbers"}
    # the profiler saw next(it) one line below and the list's unpacking two below: both are
    # the call made at '# made'; the generator resumes() leaves unfinished is closed (a
    # GeneratorExit thrown in, reported as a call too) where its last reference goes, the
    # line that made it
    assert into == {("sym-made_then_resumed", at["# made"]),
                    ("sym-resumes", at["# resumed-elsewhere"]),
                    ("sym-made_here_resumed_there", at["# closed-here"]),
                    ("sym-run", at["# same-line"])}, into
    out = tmp_path / "out"
    build(Config(roots=[pkg], out=out, tests=[], base=pkg.parent, jobs=1))
    calls, _callers = page_edges(pkg, out)
    listed = {(e[1], e[4]) for e in calls if e[3] == "sym-numbers"}
    # the pages list the calls that made a generator; resumes() makes none
    assert listed == into - {("sym-resumes", at["# resumed-elsewhere"])}, listed
