"""``isinstance`` tests narrow attribute paths as they narrow names (issue 31), on a small
project written here: every expected edge is read off the source by hand.

``self.data`` may be an ``A``, a ``B`` or a ``C`` (the constructor's annotation); inside
``if isinstance(self.data, A):`` ``self.data.run()`` runs ``A.run`` only, in the ``else``
``B.run`` or ``C.run``; the same after ``assert isinstance(...)``, after an ``if not
isinstance(...): return``, in the operands after the test of an ``and``, and for a tuple of
types.  The narrowing ends where the function assigns the path (or a prefix of it) again,
not at a call (mypy's rule: ``self.reset()`` may assign ``self.data``, mypy keeps it narrowed);
an assignment's value reads the narrowed path (or name) on all its lines.
A value of a base class is narrowed to the tested subclasses of it (a ``Base`` tested for
``(A, D)``, ``D`` a ``Base``: a ``D``), for names and paths alike.
"""

from __future__ import annotations

import pytest
from ig_helpers import build_files, calls_at, project_of, symbol_section

FILES = {
    "pkg/__init__.py": "",
    "pkg/nodes.py": '''
        class A:
            def run(self) -> None:
                pass


        class B:
            def run(self) -> None:
                pass


        class C:
            def run(self) -> None:
                pass


        class Base:
            def run(self) -> None:
                pass


        class D(Base):
            def run(self) -> None:
                pass


        class E(Base):
            def run(self) -> None:
                pass
    ''',
    "pkg/box.py": '''
        from pkg.nodes import A, B, Base, C, D


        class Inner:
            def __init__(self, data: A | B | C) -> None:
                self.data = data


        class Box:
            def __init__(self, data: A | B | C, inner: Inner) -> None:
                self.data = data
                self.inner = inner

            def reset(self) -> None:
                pass

            def branch(self) -> None:
                if isinstance(self.data, A):
                    self.data.run()  # if-branch
                else:
                    self.data.run()  # else-branch
                self.data.run()  # after-if

            def asserted(self) -> None:
                assert isinstance(self.data, A)
                self.data.run()  # asserted

            def conjunct(self) -> object:
                if isinstance(self.data, B) and self.data.run():  # if-and
                    return None
                return isinstance(self.data, A) and self.data.run()  # return-and

            def both(self) -> None:
                if isinstance(self.data, (A, B)):
                    self.data.run()  # tuple

            def assigned(self) -> None:
                if isinstance(self.data, A):
                    self.data.run()  # before-assignment
                    self.data = B()
                    self.data.run()  # after-assignment

            def rebuilt(self) -> None:
                assert isinstance(self.data, A)
                self.data = wrap(
                    self.data.run(),  # read-in-value
                )

            def called(self) -> None:
                if isinstance(self.data, A):
                    self.reset()
                    self.data.run()  # after-call

            def deeper(self) -> None:
                if isinstance(self.inner.data, C):
                    self.inner.data.run()  # two-dots
                    self.data.run()  # other-path


        class Mixed:
            def __init__(self, item: A | Base) -> None:
                self.item = item

            def pick(self, other: A | Base) -> None:
                if isinstance(self.item, (A, D)):
                    self.item.run()  # base-narrowed
                if isinstance(other, (A, D)):
                    other.run()  # name-base-narrowed


        def scoped(box: Box, flag: bool) -> None:
            if flag:
                assert isinstance(box.data, A)
                box.data.run()  # in-block
            box.data.run()  # after-block


        def wrap(value: object) -> A:
            return A()


        def name_rebuilt(x: A | B) -> None:
            assert isinstance(x, A)
            x = wrap(
                x.run(),  # name-read-in-value
            )


        def early(box: Box) -> None:
            if not isinstance(box.data, A):
                return
            box.data.run()  # early-return


        def prefix(box: Box, other: Box) -> None:
            if isinstance(box.data, A):
                box.data.run()  # before-prefix
                box = other
                box.data.run()  # after-prefix
    ''',
}

_ALL = {"nodes:A.run", "nodes:B.run", "nodes:C.run"}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("attrnarrow") / "src", FILES)


@pytest.mark.parametrize(("marker", "expected"), [
    ("# if-branch", {"nodes:A.run"}),
    ("# else-branch", {"nodes:B.run", "nodes:C.run"}),
    ("# after-if", _ALL),
    ("# asserted", {"nodes:A.run"}),
    ("# if-and", {"nodes:B.run"}),
    ("# return-and", {"nodes:A.run"}),
    ("# tuple", {"nodes:A.run", "nodes:B.run"}),
    ("# before-assignment", {"nodes:A.run"}),
    ("# after-assignment", {"nodes:B.run"}),  # what was assigned (test_assignment_narrowing)
    ("# after-call", {"nodes:A.run"}),
    # an assignment's value, on every line of it, reads the old (narrowed) value
    ("# read-in-value", {"nodes:A.run"}),
    ("# name-read-in-value", {"nodes:A.run"}),
    ("# two-dots", {"nodes:C.run"}),
    ("# other-path", _ALL),
    ("# early-return", {"nodes:A.run"}),
    # an assert narrows up to the end of its block: flag false, box.data is any
    ("# in-block", {"nodes:A.run"}),
    ("# after-block", _ALL),
    # a value of a base class (Base) may be the tested subclass (D): A or D, never E
    ("# base-narrowed", {"nodes:A.run", "nodes:D.run"}),
    ("# name-base-narrowed", {"nodes:A.run", "nodes:D.run"}),
    ("# before-prefix", {"nodes:A.run"}),
    ("# after-prefix", _ALL),
])
def test_isinstance_narrows_attribute_paths(pages, marker, expected):
    assert calls_at(pages, "pkg/box.py", marker) == expected


def test_summary_keeps_only_paths_calls_use():
    """A test of a path no call inside reads adds nothing to the function's names."""
    files = {"pkg/__init__.py": "", "pkg/nodes.py": FILES["pkg/nodes.py"], "pkg/box.py": '''
        from pkg.nodes import A


        class Box:
            def __init__(self, data: A, other: A) -> None:
                self.data = data
                self.other = other

            def check(self) -> None:
                if isinstance(self.data, A):
                    self.other.run()
                if isinstance(self.other, A):
                    self.other.run()
    '''}
    box = project_of(files).files["src/pkg/box.py"]
    check = next(d for d in box.definitions if d.qualname == "Box.check")
    assert [n for n in check.names if "@" in n] == ["self.other@13"]


def test_reading_the_assignments_leaves_the_syntax_tree_as_it_was(tmp_path):
    # the narrowing's end rule reads what each assignment of a narrowed function assigns;
    # it once popped an assignment's own target list, and the page then lost the
    # attributes assigned there (torch's grad_mode, dataloader, scheduler pages)
    _root, out = build_files(tmp_path / "src", {"pkg/__init__.py": "", "pkg/holder.py": '''
        class A:
            def run(self) -> None:
                pass


        class Holder:
            def __init__(self, data: A | None) -> None:
                if isinstance(self.data, A):
                    self.data.run()
                self.first = 1
                self.second = self.third = 2
    '''})
    section = symbol_section((out / "pkg/holder.py_docs.md").read_text(), "Holder")
    line = next((x for x in section.splitlines() if x.startswith("- **Assigned attributes**")),
                "no Assigned attributes line")
    for name in ("first", "second", "third"):
        assert f"`{name}`" in line, line
