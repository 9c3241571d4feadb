"""What a call hands its callee when the argument is a construction, and past many sites.

``Box(Node())`` hands ``Box.__init__`` a ``Node`` (a call written in CapWords, PEP 8's
names for classes, is recorded in the call's flow record: ``indexgen.extract.calls``), so
the calls on what ``Box`` keeps reach ``Node``'s methods; a call of a lower-case function
(``Box(make())``) is not recorded (what a function returns may be anything its code
returns: evaluating each such argument cost more than it found, on torch).  And a
parameter gets what the first 128 call sites *that hand it something* give, however many
sites before them leave it out (``flows._SITES``).  Every expected edge is read off the
source by hand.
"""

from __future__ import annotations

from ig_helpers import callees_by_mark

FILES = {
    "pkg/__init__.py": "",
    "pkg/boxes.py": '''
        class Node:
            def render(self):
                return "node"


        class Leaf:
            def render(self):
                return "leaf"


        def make():
            return Leaf()


        class Box:
            def __init__(self, item, label=None):
                self.item = item
                self.label = label

            def show(self):
                return self.item.render()  # ITEM

            def title(self):
                return self.label.render()  # LABEL


        def build():
            Box(Node())
            Box(make(), label=Node())
    ''',
}


def test_a_construction_handed_on_is_an_instance_of_that_class():
    found = callees_by_mark(FILES, "pkg/boxes.py")
    assert found["ITEM"] == {"Node.render"}, found  # make()'s Leaf is not followed
    assert found["LABEL"] == {"Node.render"}, found


_SITES = 140  # more call sites that leave the parameter out than are read
MANY = {
    "pkg/__init__.py": "",
    "pkg/many.py": '''
        class Job:
            def run(self):
                return 1


        def work(n, job=None):
            if job is not None:
                return job.run()  # RUN
            return n


        def plain(n):
''' + "            work(n)\n" * _SITES + '''

        def last():
            return work(0, job=Job())
    ''',
}


def test_a_parameter_gets_what_sites_hand_it_after_many_that_leave_it_out():
    found = callees_by_mark(MANY, "pkg/many.py")
    assert found["RUN"] == {"Job.run"}, found
