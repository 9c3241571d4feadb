"""A value typed ``typing.IO``, ``BinaryIO`` or ``TextIO`` may be a project subclass of one
of :mod:`io`'s classes (``indexgen.analyze.outside_bases.stands_for``): click hands a
``BytesIOCopy(io.BytesIO)`` where ``_output: t.BinaryIO`` is read, and the call on it runs
``BytesIOCopy.write``.  A bytes class is no ``TextIO``.  Every expected edge is read off the
source by hand.
"""

from __future__ import annotations

from ig_helpers import callees_by_mark

FILES = {
    "pkg/__init__.py": "",
    "pkg/streams.py": '''
        import io
        import typing as t
        from typing import IO


        class BytesIOCopy(io.BytesIO):
            def write(self, b):
                return super().write(b)


        class Upper(io.StringIO):
            def write(self, s):
                return super().write(s.upper())


        class Echo:
            def __init__(self, output: t.BinaryIO):
                self._output = output

            def emit(self, rv):
                self._output.write(rv)  # BINARY

            def text(self, out: t.TextIO):
                out.write("x")  # TEXT

            def any(self, out: IO[str]):
                out.write("x")  # ANY
    ''',
}


def test_a_typing_io_value_may_be_a_project_subclass_of_an_io_class():
    found = callees_by_mark(FILES, "pkg/streams.py")
    assert found["BINARY"] == {"typing.BinaryIO.write", "BytesIOCopy.write"}, found
    assert found["TEXT"] == {"typing.TextIO.write", "Upper.write"}, found
    assert found["ANY"] == {"typing.IO.write", "BytesIOCopy.write", "Upper.write"}, found
