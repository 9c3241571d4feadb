"""A project subclass of a builtin sequence (``class Stack(list)``) that keeps the builtin's
constructor holds the elements it is made with: ``Stack([Frame()])`` and ``Stack(frames)``
hold ``Frame``s, as ``list([Frame()])`` does, so iterating it, subscripting it and its
``pop()`` give them (:meth:`indexgen.analyze.held.Held.built`).  A class that replaces the
constructor (its own ``__init__``) holds what that puts, not what it is handed.  A list
literal a call hands is kept with its elements for this, and still matches a ``list`` stub
of an overloaded function exactly.

Found by a probe on parso, whose parser keeps ``self.stack = Stack([StackNode(...)])`` and
reads ``self.stack[-1].nodes`` and ``self.stack.pop()``: 19 calls were not listed.  Every
expected edge is read off the source by hand.
"""

from __future__ import annotations

import pytest
from ig_helpers import callees_by_mark

FILES = {
    "pkg/__init__.py": "",
    "pkg/stack.py": '''
        import collections
        from typing import overload


        class Frame:
            def go(self):
                return 1


        class Job:
            def run(self):
                return 2


        class Stack(list):
            pass


        class Deeper(Stack):
            pass


        class Queue(collections.deque):
            pass


        class Custom(list):
            def __init__(self, items):
                super().__init__()


        class Parser:
            def parse(self):
                self.stack = Stack([Frame()])
                self.stack[-1].go()  # INDEX
                for frame in self.stack:
                    frame.go()  # LOOP
                self.stack.pop().go()  # POP

            def by_name(self):
                frames = [Frame()]
                stack = Deeper(frames)
                stack[0].go()  # BY_NAME

            def queue(self):
                jobs = Queue([Job()])
                jobs.popleft().run()  # POPLEFT

            def replaced(self):
                custom = Custom([Frame()])
                for frame in custom:
                    frame.go()  # OWN_INIT

            def empty(self):
                for frame in Stack():
                    frame.go()  # EMPTY


        class Sheet:
            def show(self):
                return 3


        class Grid:
            def show(self):
                return 4


        @overload
        def pick(x: tuple) -> Grid: ...
        @overload
        def pick(x: list) -> Sheet: ...
        def pick(x):
            return x


        def picked():
            pick([Frame()]).show()  # OVERLOAD
    ''',
}


@pytest.fixture(scope="module")
def found():
    return callees_by_mark(FILES, "pkg/stack.py")


@pytest.mark.parametrize(("mark", "callees"), [
    ("INDEX", {"Frame.go"}),
    ("LOOP", {"Frame.go"}),
    ("POP", {"Frame.go"}),
    # a subclass of Stack, made with a list a name holds
    ("BY_NAME", {"Frame.go"}),
    # (popleft itself: the outside deque's)
    ("POPLEFT", {"collections.deque.popleft", "Job.run"}),
    # Custom's __init__ puts nothing (super().__init__() is handed no items)
    ("OWN_INIT", set()),
    ("EMPTY", set()),
    # the list literal is a list: the list stub, not the tuple one (Frame() and pick()
    # are called on the line too)
    ("OVERLOAD", {"Frame", "pick", "Sheet.show"}),
])
def test_a_sequence_subclass_holds_what_it_is_made_with(found, mark, callees):
    assert found[mark] == callees
