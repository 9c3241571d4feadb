"""Extraction's shortcuts skip work only where it finds nothing (issue 31, speed).

Each shortcut is checked on a file that does need the skipped work: the summary made with
the shortcut is the one made without it, and holds what that work adds.
"""

from __future__ import annotations

import dataclasses
import textwrap

import pytest
from indexgen.extract import pipeline
from indexgen.extract.pipeline import extract_source

# ``isinstance`` tests of an attribute path in every form attribute_narrowing reads, each in
# a function after others that test none (their statements are not read), one in a closure
# (its lines are its enclosing method's) and one on a continuation line of its statement.
NARROWED = textwrap.dedent('''
    class A:
        def run(self):
            pass


    class Box:
        def plain(self):
            if self.data:
                self.data.run()
            return self.data and self.data.run()

        def tested(self):
            if (
                    isinstance(self.data, A)):
                self.data.run()
            else:
                self.data.stop()

        def asserted(self):
            x = 1
            assert isinstance(self.data, A)
            self.data.run()

        def conjunction(self):
            ok = isinstance(self.data, A) and self.data.run()
            return isinstance(self.item.data, A) and self.item.data.run()

        def closure(self):
            def inner():
                if not isinstance(self.data, A):
                    return
                self.data.run()
            return inner

        def later(self):
            self.data.run()
''').encode()


def _extract(data: bytes):
    return extract_source(data, "src", "pkg/box.py", "pkg.box", 1_000_000)


def _unflagged(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the pipeline run attribute_narrowing without the walk's lines of tests."""
    walk = pipeline.walk
    monkeypatch.setattr(pipeline, "walk",
                        lambda tree, structure: walk(tree, structure)._replace(path_tests=None))


def test_attribute_narrowing_with_the_walks_lines_is_the_same_as_reading_every_statement(
        monkeypatch: pytest.MonkeyPatch):
    shortcut = _extract(NARROWED)
    _unflagged(monkeypatch)
    full = _extract(NARROWED)
    assert dataclasses.asdict(shortcut) == dataclasses.asdict(full)
    narrowed = {d.qualname: sorted(k for k in d.names if "@" in k)
                for d in shortcut.definitions if any("@" in k for k in d.names)}
    assert narrowed == {"Box.tested": ["self.data@16", "self.data@18"],
                        "Box.asserted": ["self.data@23"],
                        "Box.conjunction": ["self.data@26", "self.item.data@27"],
                        "Box.closure": ["self.data@33"]}
    calls = {c.text for c in shortcut.calls if "@" in c.text}
    assert calls == {"self.data@16.run", "self.data@18.stop", "self.data@23.run",
                     "self.data@26.run", "self.item.data@27.run", "self.data@33.run"}


def test_a_file_without_tests_of_an_attribute_is_left_as_it_is(monkeypatch: pytest.MonkeyPatch):
    source = NARROWED.replace(b"isinstance(self.", b"callable(self.")
    shortcut = _extract(source)
    _unflagged(monkeypatch)
    assert dataclasses.asdict(shortcut) == dataclasses.asdict(_extract(source))
    assert not any("@" in c.text for c in shortcut.calls)


# A method that assigns its own ``cls``: the local is what it is assigned, so a call on it is
# a call on a local value (shadows.rebound), here and in no other method.
REBOUND = textwrap.dedent('''
    class Template:
        pass


    class Env:
        def make(self, flag):
            cls = Template if flag else None
            return cls.build(1)

        def other(self):
            return self.build(2)

        @classmethod
        def named(cls):
            return cls.build(3)
''').encode()


def _always_self(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the pipeline look for rebound self/cls names whatever the walk saw."""
    walk = pipeline.walk
    monkeypatch.setattr(pipeline, "walk", lambda tree, structure: walk(
        tree, structure)._replace(assigns_self=True))


def test_rebound_self_with_the_walks_flag_is_the_same_as_looking_in_every_file(
        monkeypatch: pytest.MonkeyPatch):
    shortcut = _extract(REBOUND)
    _always_self(monkeypatch)
    assert dataclasses.asdict(shortcut) == dataclasses.asdict(_extract(REBOUND))
    local = {(c.caller, c.text) for c in shortcut.calls if c.local}
    assert local == {("sym-Env.make", "cls.build")}


def test_a_file_that_assigns_no_self_is_left_as_it_is(monkeypatch: pytest.MonkeyPatch):
    source = REBOUND.replace(b"cls = Template", b"kind = Template")
    shortcut = _extract(source)
    _always_self(monkeypatch)
    assert dataclasses.asdict(shortcut) == dataclasses.asdict(_extract(source))
    assert not any(c.local for c in shortcut.calls)


@pytest.mark.parametrize("source, exports, computed", [
    ("__all__ = ['a', 'b']\n", ["a", "b"], False),
    ("__all__: list[str] = ['a']\n__all__ += ['b']\n", ["a", "b"], False),
    ("import m\n__all__ = ['a']\nif m.ok:\n    __all__.extend(['b'])\n", ["a", "b"], False),
    ("__all__ = []\nfor k in 'ab':\n    __all__.append(k)\n", None, True),
    ("all_names = ['a']\n", None, False),
])
def test_all_is_read_where_the_file_names_it(source: str, exports, computed: bool):
    summary = _extract(source.encode())
    assert (summary.exports, summary.all_computed) == (exports, computed)


@pytest.mark.parametrize("source, names, spans", [
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from x import A\n", ["A"],
     [(3, 3)]),
    ("import typing\nif typing.TYPE_CHECKING:\n    import y\n\n    B = 1\n", ["B", "y"],
     [(3, 5)]),
    ("import typing as t\nif t.TYPE_CHECKING:\n    from x import A\nelse:\n    A = None\n",
     [], [(3, 3)]),
    ("CHECKING = False\nif CHECKING:\n    from x import A\n", [], []),
])
def test_type_checking_names_are_read_where_the_file_names_it(source: str, names, spans):
    summary = _extract(source.encode())
    assert (summary.type_checking, summary.checking_spans) == (names, spans)
