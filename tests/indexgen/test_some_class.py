"""A value annotated ``type`` (or ``typing.Type``) is some class, not which: calling it is
a call not resolved (on a value of unknown type), never a call of the builtin ``type`` that
the page would drop as a builtin's (so no line said the call was not resolved), nor of a
made-up ``typing.Type``.  A probe of click found ``c()`` with ``c: type`` hidden so."""

from __future__ import annotations

from ig_helpers import project_of

SOURCE = '''
import typing


def make(c: type, d: typing.Type):
    c()
    d()
'''


def test_calling_a_value_annotated_type_is_not_resolved():
    ctx = project_of({"pkg/__init__.py": "", "pkg/m.py": SOURCE}).contexts()["src/pkg/m.py"]
    assert not ctx.calls.get("sym-make"), ctx.calls  # no typing.Type, no builtin type
    lines = [n for lines in ctx.unresolved["sym-make"].values() for n in lines]
    assert sorted(lines) == [5, 6], ctx.unresolved
