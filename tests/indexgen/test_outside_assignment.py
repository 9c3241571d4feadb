"""An attribute assigned from outside a class (``box.data = v``, ``tracer.create = patched``)
adds to what the class and its bases say of it; it never hides them (issue 31), on a small
project written here: every expected edge is read off the source by hand.

torch's ``lowering.mutate_to`` does ``changed_data.data = val.data`` on a ``StorageBox``,
whose ``data`` its base ``MutableBox.__init__`` assigns from its parameter: before, the
assignment from outside was all the pass read of ``StorageBox.data``, so a call on the
``data`` of any ``StorageBox`` lost every node class ``MutableBox`` is built with.  And an
instance's method replaced from outside (a monkeypatch) hid the method for every instance of
that class, where only the patched ones run the patch.
"""

from __future__ import annotations

import pytest
from ig_helpers import build_files, calls_at

FILES = {
    "pkg/__init__.py": "",
    "pkg/nodes.py": '''
        class Node:
            def size(self) -> int:
                return 0


        class Loop(Node):
            def size(self) -> int:
                return 1


        class Buffer(Node):
            def size(self) -> int:
                return 2


        class Box:
            def __init__(self, data: Loop) -> None:
                self.data = data


        class StorageBox(Box):
            def realize(self) -> int:
                return self.data.size()  # read data


        class Tracer:
            def create(self) -> int:
                return 0


        class SubTracer(Tracer):
            pass
    ''',
    "pkg/use.py": '''
        from pkg.nodes import Buffer, Loop, StorageBox, SubTracer


        def make() -> StorageBox:
            return StorageBox(Loop())


        def mutate(box: StorageBox, other: StorageBox) -> None:
            box.data = Buffer()  # assigned from outside


        def patched() -> int:
            return 3


        def trace(t: SubTracer) -> int:
            t.create = patched
            return t.create()  # read create
    ''',
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("outside") / "src", FILES)




def test_an_attribute_assigned_from_outside_keeps_what_the_base_assigns(pages):
    # Box.__init__'s data is a Loop, and mutate puts a Buffer in a StorageBox's: both
    assert calls_at(pages, "pkg/nodes.py", "# read data") == {"nodes:Loop.size",
                                                            "nodes:Buffer.size"}


def test_a_method_replaced_on_an_instance_is_still_the_method(pages):
    # t.create = patched: this instance runs patched, any other SubTracer Tracer.create
    assert calls_at(pages, "pkg/use.py", "# read create") == {"nodes:Tracer.create",
                                                            "use:patched"}
