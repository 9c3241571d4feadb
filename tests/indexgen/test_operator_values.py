"""What an operator expression gives: what the dunder method Python picks returns
(pyparsing's ``(a | b).set_name("x")``, ``self.not_ender = ~ender``,
``("::ffff:" + ipv4_address).set_name(...)``).

- ``a | b`` gives what the left operand's ``__or__`` returns, where its class defines one;
  where it does not (a literal, a builtin, an unknown value), the right operand's
  ``__ror__``; the right one's first where its class is a proper subclass of the left one's
  and overrides the reflected dunder;
- ``~a``, ``-a``, ``+a``: what ``__invert__``, ``__neg__``, ``__pos__`` return (``-> Self``
  read on the operand);
- a name assigned an operator expression holds what it gives;
- a builtin list added to another holds the elements of both (``list(a) + list(b)``), one
  repeated (``xs * 2``) its own.

The operators make no call edge of their own to the dunder (the guide: calls the language
makes implicitly are not listed); an explicit ``a.__or__(b)`` does, as before.

Every expected edge is read off the source by hand.
"""

from __future__ import annotations

import pytest
from ig_helpers import build_files, calls_at

FILES = {
    "pkg/__init__.py": "",
    "pkg/ops.py": '''
        from __future__ import annotations

        from typing import Self


        class Element:
            def __or__(self, other) -> Element:
                return self

            def __invert__(self) -> Element:
                return self

            def __neg__(self) -> Self:
                return self

            def __add__(self, other) -> Element:
                return self

            def __radd__(self, other) -> Element:
                return self

            def __mul__(self, n: int) -> Element:
                return self

            def set_name(self, name: str) -> Element:
                return self


        class Sub(Element):
            def __radd__(self, other) -> Other:
                return Other()

            def own(self):
                pass


        class Other:
            def __ror__(self, other) -> Third:
                return Third()

            def set_name(self, name: str):
                pass


        class Third:
            def set_name(self, name: str):
                pass


        class Holder:
            item: object

            def run(self, b: Element):
                if isinstance(self.item, Element):
                    (self.item | b).set_name("n")  # at_NARROWED


        WORD = Element()
        NUMBER = Element()
        GRAMMAR = (WORD | NUMBER).set_name("g")  # at_MODULE


        def build(a: Element, b: Element, s: Sub, o: Other, n: int, u):
            (a | b).set_name("x")  # at_OR
            c = a | b
            c.set_name("w")  # at_ASSIGNED
            (~a).set_name("y")  # at_INVERT
            (-s).own()  # at_NEG_SELF
            ("(" + a).set_name("v")  # at_STR_LEFT
            (n + a).set_name("v")  # at_INT_LEFT
            (u + a).set_name("v")  # at_UNKNOWN_LEFT
            (a + s).set_name("v")  # at_SUBCLASS_RIGHT
            (a + b).set_name("v")  # at_SAME_CLASS
            (a | o).set_name("v")  # at_LEFT_WINS
            (n | o).set_name("v")  # at_REFLECTED
            ((":" + a) * 7).set_name("v")  # at_CHAIN
            (a | [b]).set_name("v")  # at_RIGHT_LITERAL
            a.__or__(b).set_name("e")  # at_EXPLICIT


        def walk(es: dict[str, Element], os: dict[str, Other]):
            for x in list(es.values()) + list(os.values()):
                x.set_name("s")  # at_CONCAT
            for y in list(es.values()) * 2:
                y.set_name("s")  # at_REPEAT
    ''',
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("ops") / "src", FILES)


@pytest.mark.parametrize("marker", ["at_OR", "at_ASSIGNED", "at_INVERT", "at_STR_LEFT", "at_INT_LEFT",
                                    "at_UNKNOWN_LEFT", "at_SAME_CLASS", "at_LEFT_WINS", "at_CHAIN",
                                    "at_RIGHT_LITERAL"])
def test_operator_gives_what_its_dunder_returns(pages, marker):
    assert calls_at(pages, "pkg/ops.py", marker) == {"ops:Element.set_name"}


def test_unary_dunder_returning_self_gives_the_operand(pages):
    assert calls_at(pages, "pkg/ops.py", "at_NEG_SELF") == {"ops:Sub.own"}


def test_right_subclass_reflected_dunder_comes_first(pages):
    assert calls_at(pages, "pkg/ops.py", "at_SUBCLASS_RIGHT") == {"ops:Other.set_name"}


def test_builtin_left_gives_the_right_reflected_dunder(pages):
    assert calls_at(pages, "pkg/ops.py", "at_REFLECTED") == {"ops:Third.set_name"}


def test_module_level_and_narrowed_operands(pages):
    assert calls_at(pages, "pkg/ops.py", "at_MODULE") == {"ops:Element.set_name"}
    assert calls_at(pages, "pkg/ops.py", "at_NARROWED") == {"ops:Element.set_name"}


def test_explicit_dunder_call_keeps_its_edge(pages):
    assert calls_at(pages, "pkg/ops.py", "at_EXPLICIT") == {"ops:Element.__or__",
                                                         "ops:Element.set_name"}


def test_builtin_sequences_added_hold_both_elements(pages):
    assert calls_at(pages, "pkg/ops.py", "at_CONCAT") == {"ops:Element.set_name",
                                                          "ops:Other.set_name"}
    assert calls_at(pages, "pkg/ops.py", "at_REPEAT") == {"ops:Element.set_name"}
