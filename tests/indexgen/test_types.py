"""Calls resolved through the types the code states (issue 21, item 1), on a small project
written here: every expected edge below is read off the source by hand.

Each case names the rule it exercises; the pages are read back with ``page_claims.py``, so a
"Calls" edge must also be on the callee's "Called by" (one graph, two views).
"""

from __future__ import annotations

import os
import re

import pytest
from ig_helpers import build_files, calls_line, symbol_section
from page_claims import page_call_edges, page_callers

FILES = {
    "pkg/__init__.py": "from . import parts\n",  # the package binds its own submodule
    "pkg/engine.py": '''
        from __future__ import annotations

        from typing import TYPE_CHECKING, Optional

        if TYPE_CHECKING:
            from pkg.parts import Part


        class Stream:
            def wait(self) -> None:
                pass

            def event(self) -> "Event":
                return Event()


        class Event:
            def sync(self) -> None:
                pass


        class Engine:
            label: str
            backup: Stream

            def __init__(self, parts: list[Part], table: dict[str, Part]) -> None:
                self.parts = parts
                self.table = table
                self.stream = Stream()
                self.pending = []

            @property
            def main(self) -> Stream:
                return self.stream

            def current(self):
                return self.stream

            def run(self, extra: Optional[Part], other: "Part | None", anything) -> None:
                for p in self.parts:
                    p.step()  # a loop over list[Part]
                for name, part in self.table.items():
                    part.reset()  # dict[str, Part].items()
                for i, (p, q) in enumerate(zip(self.parts, self.parts)):
                    q.reset()
                extra.step()  # Optional[Part]
                other.reset()  # a string annotation
                self.stream.wait()  # an attribute assigned a constructor call
                self.backup.wait()  # a class-level annotation
                self.main.wait()  # a property: read, then its type's method called
                done = self.current().event()  # an inferred return, then an annotated one
                done.sync()
                anything.step()  # a parameter nobody annotated: not resolved
                self.pending.append(Event())
                self.pending.pop().sync()  # what the list was given

            def hooks(self, register) -> None:
                register(self.on_done)  # a bound method handed to any call
                self.register_hook(self.on_done)  # a *hook* call
                print(self.label)  # an attribute that is no function

            def register_hook(self, fn) -> None:
                pass

            def on_done(self) -> None:
                pass
        ''',
    "pkg/parts.py": '''
        from pkg.engine import Engine


        class Part:
            def step(self) -> None:
                pass

            def reset(self) -> None:
                pass


        class FastPart(Part):
            def step(self) -> None:
                super().step()  # super() in the project
                self.reset()  # inherited


        ENGINE = Engine([], {})  # a module-level instance


        def drive() -> None:
            ENGINE.run(None, None, None)


        class Cycle:
            def __iter__(self):
                return self  # iterating over a Cycle gives... what __next__ gives


        def spin(c: Cycle) -> None:
            for x in c:
                x.step()  # not known: the evaluation ends instead of recursing
        ''',
    "pkg/user.py": '''
        from . import parts


        def use(flag: bool, a: list[parts.Part], b: list[parts.FastPart]) -> None:
            parts.drive()  # a submodule the package imports itself
            for p in a if flag else b:
                p.reset()  # the elements of either list
        ''',
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("types") / "src", FILES)


def _edges(pages) -> tuple[set, set]:
    """("file:qualname line" of the caller, "file:qualname" of the callee) from Calls, and
    the same pairs from Called by."""
    root, out = pages
    calls, callers = set(), set()
    for rel in ("pkg/engine.py", "pkg/parts.py", "pkg/user.py"):
        docs = (out / f"{rel}_docs.md").read_text()
        calls |= page_call_edges(docs, rel)
        callers |= page_callers(docs, rel)

    def named(edges):
        return {(f"{a.split('/')[1][:-3]}:{b[4:] or '<module>'} {line}",
                 f"{c.split('/')[1][:-3]}:{d[4:]}") for a, b, c, d, line in edges}

    return named(calls), named(callers)


def _line(pages, rel: str, text: str) -> int:
    source = (pages[0] / rel).read_text().split("\n")
    return next(i for i, line in enumerate(source, 1) if text in line)


@pytest.mark.parametrize("caller, marker, callee", [
    ("engine:Engine.run", "p.step()  # a loop", "parts:Part.step"),
    ("engine:Engine.run", "part.reset()  # dict", "parts:Part.reset"),
    ("engine:Engine.run", "q.reset()", "parts:Part.reset"),
    ("engine:Engine.run", "extra.step()", "parts:Part.step"),
    ("engine:Engine.run", "other.reset()", "parts:Part.reset"),
    ("engine:Engine.run", "self.stream.wait()", "engine:Stream.wait"),
    ("engine:Engine.run", "self.backup.wait()", "engine:Stream.wait"),
    ("engine:Engine.run", "self.main.wait()", "engine:Stream.wait"),
    ("engine:Engine.run", "done = self.current()", "engine:Engine.current"),
    ("engine:Engine.run", "done = self.current()", "engine:Stream.event"),
    ("engine:Engine.run", "done.sync()", "engine:Event.sync"),
    ("engine:Engine.run", "self.pending.pop().sync()", "engine:Event.sync"),
    ("engine:Engine.__init__", "self.stream = Stream()", "engine:Stream"),
    ("engine:Stream.event", "return Event()", "engine:Event"),
    ("parts:FastPart.step", "super().step()", "parts:Part.step"),
    ("parts:FastPart.step", "self.reset()", "parts:Part.reset"),
    ("parts:drive", "ENGINE.run(", "engine:Engine.run"),
    ("parts:<module>", "ENGINE = Engine(", "engine:Engine.__init__"),
    ("user:use", "parts.drive()", "parts:drive"),
    ("user:use", "p.reset()  # the elements", "parts:Part.reset"),
])
def test_typed_calls_are_on_both_pages(pages, caller, marker, callee):
    calls, callers = _edges(pages)
    rel = f"pkg/{caller.split(':')[0]}.py"
    edge = (f"{caller} {_line(pages, rel, marker)}", callee)
    assert edge in calls
    assert edge in callers  # the callee's Called by: the same edge


def test_an_iterator_that_returns_itself_ends_the_evaluation(pages):
    spin = symbol_section((pages[1] / "pkg/parts.py_docs.md").read_text(), "spin")
    line = _line(pages, "pkg/parts.py", "x.step()  # not known")
    assert ("- **Not resolved statically**: 1 call (1 on a value of unknown type: "
            f"[line {line}](#L{line}))") in spin


def test_nothing_is_guessed(pages):
    calls, _ = _edges(pages)
    line = _line(pages, "pkg/engine.py", "anything.step()")
    assert not [e for e in calls if e[0].endswith(f" {line}")]
    run = symbol_section((pages[1] / "pkg/engine.py_docs.md").read_text(), "Engine.run")
    assert ("- **Not resolved statically**: 1 call (1 on a value of unknown type: "
            f"[line {line}](#L{line}))") in run
    assert "anything.step" not in run  # counted, not listed


def test_property_reads_are_listed_apart(pages):
    docs = (pages[1] / "pkg/engine.py_docs.md").read_text()
    run = symbol_section(docs, "Engine.run")
    line = _line(pages, "pkg/engine.py", "self.main.wait()")
    assert f"- **Reads**: [`Engine.main`](#sym-Engine.main) ([line {line}](#L{line}))" in run
    calls = calls_line(run)
    assert "Engine.main" not in calls
    main = symbol_section(docs, "Engine.main")
    assert f"- **Read by**: [`Engine.run`](#sym-Engine.run) ([line {line}](#L{line}))" in main


def test_functions_handed_to_calls_are_callbacks(pages):
    docs = (pages[1] / "pkg/engine.py_docs.md").read_text()
    hooks = symbol_section(docs, "Engine.hooks")
    first = _line(pages, "pkg/engine.py", "register(self.on_done)")
    second = _line(pages, "pkg/engine.py", "self.register_hook(self.on_done)")
    assert (f"- **Passes as a callback**: [`Engine.on_done`](#sym-Engine.on_done) "
            f"(lines [{first}](#L{first}), [{second}](#L{second}))") in hooks
    assert "label" not in hooks.split("Passes as a callback")[1].split("\n")[0]
    on_done = symbol_section(docs, "Engine.on_done")
    assert "- **Passed as a callback by**: [`Engine.hooks`]" in on_done


def test_file_level_counts_are_the_sums_of_the_symbol_edges(pages):
    calls, callers = _edges(pages)
    docs = (pages[1] / "pkg/parts.py_docs.md").read_text()
    graph = docs.split("\n### Call graph\n", 1)[1].split("\n## ", 1)[0]
    into = int(re.search(r"\*\*Calls into\*\*: \[`src/pkg/engine.py`\]\([^)]*\) \((\d+) call",
                         graph).group(1))
    assert into == len({e for e in calls if e[0].startswith("parts:") and
                        e[1].startswith("engine:")})
    back = int(re.search(r"\*\*Called from\*\*: \[`src/pkg/engine.py`\]\([^)]*\) \((\d+) call",
                         graph).group(1))
    assert back == len({e for e in callers if e[0].startswith("engine:") and
                        e[1].startswith("parts:")})


CYCLE = '''
class Runner:
    def run(self) -> None:
        pass


class P:
    def __init__(self, q: "Q") -> None:
        self.other = q.other  # P.other is Q.other ...

    def reset(self) -> None:
        self.other = Runner()


class Q:
    def __init__(self, p: P) -> None:
        self.other = p.other  # ... and Q.other is P.other: a cycle the evaluation cuts


def f(x: "P | Q") -> None:
    x.other.run()  # evaluates P.other and Q.other in the order of a set


def g(q: Q) -> None:
    q.other.run()
'''


def test_the_pages_do_not_depend_on_the_hash_seed(tmp_path):
    # Which member of a union is evaluated first decides where a cycle is cut (and what is
    # memoized); the order of a set of strings changes with PYTHONHASHSEED, and half the seeds
    # gave another page before the evaluation took unions in a fixed order.
    import subprocess
    import sys

    (tmp_path / "src" / "cyc").mkdir(parents=True)
    (tmp_path / "src" / "cyc" / "__init__.py").write_text("")
    (tmp_path / "src" / "cyc" / "mod.py").write_text(CYCLE.lstrip("\n"))
    code = ("import sys; from pathlib import Path; from indexgen import Config, build; "
            "root = Path(sys.argv[1]); out = Path(sys.argv[2]); "
            "build(Config(roots=[root], out=out, base=root.parent, jobs=1)); "
            "sys.stdout.write((out / 'cyc/mod.py_docs.md').read_text())")
    pages = set()
    for seed in range(6):
        done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "src"),
                               str(tmp_path / f"out{seed}")], capture_output=True, text=True,
                              check=True, env={**os.environ, "PYTHONHASHSEED": str(seed)})
        pages.add(done.stdout)
    assert len(pages) == 1
