"""Names outside the build that a page gives as callees must exist.

A call the build cannot follow into its own code is listed as a name outside the build
(``unittest.TestCase.assertEqual``) when a base outside the build, or an annotation naming
an outside class, may hold the callee.  Three ways that gave a name that does not exist,
each seen on torch's pages (``tests/indexgen/test_call_accounting.py`` counts what is left
over all of torch):

- a mixin whose only base is ``abc.ABC`` (torch's ``RpcAgentTestFixture(ABC)``), calling
  ``self.assertEqual`` that its test subclasses get from ``TestCase``: ``abc.ABC`` gives a
  class no attribute, so the call is not resolved, as for a ``Protocol`` or ``Generic``
  base; a class with another outside base names that base;
- an alias of ``Any`` (torch's ``PyTree = Any``) in an annotation says nothing of the
  value: ``typing.Any.size`` is no callee;
- a ``TypedDict`` is a ``dict`` at run time: its ``get`` is ``dict.get``, a builtin's
  (no edge), not ``typing.TypedDict.get``; a ``NamedTuple`` a ``tuple`` with the methods
  ``namedtuple`` makes (``_replace``);
- a constant of the standard library handed on (``math.inf``, which a test's parameter
  may be) is a ``float``: ``t.clone()`` is no ``math.inf.clone``; a name written as a
  constant (``signal.SIGTERM``, torch's ``ReduceOp.MAX``) has its type's attributes,
  unknown; a module's attribute is still named under it (``os.path.join``);
- a class of the standard library that certainly lacks an attribute (``enum.Enum`` has no
  ``brush``) is not where a subclass's call of it goes;
- an unpacked ``TypeVarTuple`` (``tuple[Unpack[Ts]]``) is a tuple of any length, its
  items unknown, not one ``Unpack``.

Every expected outcome is read off the source by hand.
"""

from __future__ import annotations

from ig_helpers import project_of

FILES = {
    "pkg/__init__.py": "",
    "pkg/mixins.py": '''
        import enum
        import math
        import os
        import signal
        import unittest
        from abc import ABC
        from typing import Any, NamedTuple, TypedDict

        PyTree = Any


        class Fixture(ABC):
            def check(self):
                self.assertEqual(1, 1)  # MIXIN
                super().__init__()  # SUPER


        class Case(ABC, unittest.TestCase):
            def check(self):
                self.assertEqual(1, 1)  # CASE


        class Options(TypedDict):
            size: int


        def sizes(tree: PyTree, leaves: list[PyTree], options: Options):
            tree.size()  # ALIAS
            [leaf.numel() for leaf in leaves]  # ELEMENTS
            options.get("size")  # TYPEDDICT
            options.setdefault("size", 1)  # TYPEDDICT2


        def clone_of(t):
            return t.clone()  # CONSTANT


        def start():
            clone_of(math.inf)
            clone_of(signal.SIGTERM)
            return os.path.join("a", "b")  # MODULE


        class Point(NamedTuple):
            x: int

            def moved(self, other):
                self._replace(x=1)  # MADE
                self.count(1)  # TUPLE
                return self.paint()  # LACKS


        class Color(enum.Enum):
            RED = 1

            def paint(self):
                return self.brush()  # ENUM
    ''',
}


def _outcomes() -> dict[str, list[tuple[str, str]]]:
    """Marker -> the (kind, label) of each edge the call at that marker's line made."""
    project = project_of(FILES)
    ledger: dict = {}
    ctx = project.contexts(ledger)["src/pkg/mixins.py"]
    lines = FILES["pkg/mixins.py"].split("\n")[1:]
    marks = {line.split("# ")[1]: i for i, line in enumerate(lines, 1) if "# " in line}
    out: dict[str, list] = {m: [] for m in marks}
    for edges in ctx.calls.values():
        for e in edges:
            for m, at in marks.items():
                if e.line == at:
                    out[m].append((e.kind, e.label))
    for (_key, _caller, line, _text), kinds in ledger.items():
        for m, at in marks.items():
            if line == at:
                out[m] += [(k, "") for k in kinds if k == "unresolved" or k.startswith("b")]
    return out


def test_outside_names_that_exist():
    out = _outcomes()
    assert out["MIXIN"] == [("unresolved", "")], out["MIXIN"]  # not abc.ABC.assertEqual
    assert ("external", "unittest.TestCase.assertEqual") in out["CASE"], out["CASE"]
    assert out["SUPER"] == [("builtin:super", ""), ("builtin:object.__init__", "")], out["SUPER"]
    for mark in ("ALIAS", "ELEMENTS"):  # not typing.Any.size / typing.Any.numel
        assert all(kind != "external" for kind, _ in out[mark]), out[mark]
    assert out["TYPEDDICT"] == [("builtin:dict.get", "")], out["TYPEDDICT"]
    assert out["TYPEDDICT2"] == [("builtin:dict.setdefault", "")], out["TYPEDDICT2"]
    # not math.inf.clone, nor signal.SIGTERM.clone (a name written as a constant)
    assert out["CONSTANT"] == [("unresolved", "")], out["CONSTANT"]
    assert out["MODULE"] == [("external", "os.path.join")], out["MODULE"]
    assert out["ENUM"] == [("unresolved", "")], out["ENUM"]  # not enum.Enum.brush
    assert out["MADE"] == [("external", "typing.NamedTuple._replace")], out["MADE"]
    assert out["TUPLE"] == [("builtin:tuple.count", "")], out["TUPLE"]
    assert out["LACKS"] == [("unresolved", "")], out["LACKS"]  # not NamedTuple.paint



UNPACKED = {
    "pkg/__init__.py": "",
    "pkg/calls.py": '''
        from typing_extensions import TypeVarTuple, Unpack

        Ts = TypeVarTuple("Ts")


        def run(tensors: tuple[Unpack[Ts]]):
            return tensors[0].size()  # RUN
    ''',
}


def test_an_unpacked_type_variable_tuple_says_nothing_of_its_items():
    """``tuple[Unpack[Ts]]`` (torch's ``wrap_key``) is a tuple of any length whose items
    are unknown, not a tuple of one ``Unpack``: ``tensors[0].size()`` is not resolved (it
    was ``typing_extensions.Unpack.size``)."""
    ledger: dict = {}
    ctx = project_of(UNPACKED).contexts(ledger)["src/pkg/calls.py"]
    line = next(i for i, text in enumerate(UNPACKED["pkg/calls.py"].split("\n")[1:], 1)
                if "# RUN" in text)
    assert [e for e in ctx.calls.get("sym-run", ()) if e.line == line] == []
    assert [k for (_f, _c, at, _t), k in ledger.items() if at == line] == [["unresolved"]]
