"""How an annotation splits into the alternatives it admits is told in one place
(:func:`indexgen.analyze.values.alternatives`), for both its readers: the values a name so
annotated may be (:class:`~indexgen.analyze.values.Annotations`) and the classes an
overload stub's parameter admits (:class:`~indexgen.analyze.fits.Fits`).  The wrapped and
nested forms below are read alike by both; every expected edge is read off the source by
hand.
"""

from __future__ import annotations

import ast

from ig_helpers import callees_by_mark
from indexgen.analyze.annotation_syntax import alternatives

FILES = {
    "pkg/__init__.py": "",
    "pkg/shapes.py": '''
        from __future__ import annotations

        import typing
        from typing import Annotated, Optional, Union, overload


        class A:
            def run(self):
                return 1


        class B:
            def run(self):
                return 2


        class C:
            def run(self):
                return 3


        @overload
        def pick(value: Annotated[Optional[A], "meta"]) -> B: ...
        @overload
        def pick(value: typing.Union[int, "str"]) -> C: ...
        def pick(value):
            return value


        def read(x: Annotated[Optional[Union[A, B]], "meta"], y: "typing.Optional[C | A]"):
            x.run()  # WRAPPED
            y.run()  # STRING


        def choose(a: A):
            pick(None).run()  # NONE_FITS
            pick(a).run()  # A_FITS
            pick(3).run()  # INT_FITS
            pick("s").run()  # STR_FITS
    ''',
}


def _split(text: str) -> list[str] | None:
    found = alternatives(ast.parse(text, mode="eval").body)
    return None if found is None else [ast.unparse(a) for a in found]


def test_alternatives_of_each_form():
    assert _split("A | B") == ["A", "B"]
    assert _split("typing.Union[A, B, C]") == ["A", "B", "C"]
    assert _split("Optional[A]") == ["A", "None"]
    assert _split("Annotated[A | B, 'meta']") == ["A | B"]  # one level: the reader recurses
    assert _split("typing_extensions.Final[A]") == ["A"]
    assert _split("list[A]") is None  # one alternative
    assert _split("Literal[1, 2]") is None
    assert _split("f().Optional[A]") is None  # no dotted name: no typing form
    assert _split("A + B") is None


def test_both_readers_split_wrapped_annotations_alike():
    found = callees_by_mark(FILES, "pkg/shapes.py")
    assert found["WRAPPED"] == {"A.run", "B.run"}, found
    assert found["STRING"] == {"C.run", "A.run"}, found
    # the first stub admits A and None, through Annotated and Optional; the second int, str
    assert found["NONE_FITS"] == {"pick", "B.run"}, found
    assert found["A_FITS"] == {"pick", "B.run"}, found
    assert found["INT_FITS"] == {"pick", "C.run"}, found
    assert found["STR_FITS"] == {"pick", "C.run"}, found
