"""An ``isinstance`` test of a name or an attribute path in a conditional expression that a
``return`` or an assignment gives narrows its branches
(:func:`indexgen.extract.instance_tests.conditional`).

``self.x.run() if isinstance(self.x, A) else None`` calls ``A.run`` only, and with ``not`` the
other branch is the narrowed one; where the other branch reads the path too, on the same
lines, nothing is narrowed (a line is the unit).  Every expected edge is read off the
source by hand.
"""

from __future__ import annotations

from ig_helpers import callees_by_mark

FILES = {
    "pkg/__init__.py": "",
    "pkg/box.py": '''
        class A:
            def run(self):
                return 1

            def stop(self):
                return 1


        class B:
            def run(self):
                return 2

            def stop(self):
                return 2


        class Box:
            def __init__(self, x: A | B):
                self.x = x

            def go(self):
                a = self.x.run() if isinstance(self.x, A) else None  # BODY
                return a

            def other(self):
                return None if not isinstance(self.x, A) else self.x.run()  # ORELSE

            def both(self):
                return self.x.run() if isinstance(self.x, A) else self.x.stop()  # BOTH


        def plain(y: A | B):
            a = y.run() if isinstance(y, A) else None  # NAME
            b = None if not isinstance(y, B) else y.stop()  # NAME_NOT
            return y.run() if isinstance(y, A) else y.stop()  # NAME_BOTH
    ''',
}


def test_a_conditional_expression_narrows_its_branch():
    found = callees_by_mark(FILES, "pkg/box.py")
    assert found["BODY"] == {"A.run"}, found
    assert found["ORELSE"] == {"A.run"}, found
    # both branches on one line read the path: neither is narrowed
    assert found["BOTH"] == {"A.run", "B.run", "A.stop", "B.stop"}, found
    assert found["NAME"] == {"A.run"}, found  # a name, as a path
    assert found["NAME_NOT"] == {"B.stop"}, found
    assert found["NAME_BOTH"] == {"A.run", "B.run", "A.stop", "B.stop"}, found
