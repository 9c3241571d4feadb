"""A method taken as a value and called later may run the overrides a direct call runs.

``f = getattr(self, "step"); f()``, ``self.helper(self.step)`` then ``method()`` in the
helper, ``self.handlers[tag] = ext.parse`` then ``self.handlers.get(tag)(...)``, and
``f = self.finalize(); f(1)`` where ``finalize`` returns ``self._default_finalize``: each
lists the subclasses' overrides, as ``self.step()`` does (lark's ``ForestVisitor``,
jinja2's ``Parser.extensions``).  Where the class is known exactly (``Order().save``,
``order = Order()``), none.  Every expected edge is read off the source by hand.
"""

from __future__ import annotations

from ig_helpers import callees_by_mark

FILES = {
    "pkg/__init__.py": "",
    "pkg/m.py": '''
        class Visitor:
            def visit(self):
                f = getattr(self, "step")
                f()  # GETATTR_LOCAL
                self.helper(self.step)

            def helper(self, method):
                method()  # PASSED

            def step(self):
                pass


        class Sum(Visitor):
            def step(self):
                pass


        class Extension:
            def parse(self, parser):
                return None


        class I18n(Extension):
            def parse(self, parser):
                return 1


        class Parser:
            def __init__(self, exts: list[Extension]):
                self.handlers = {}
                for ext in exts:
                    self.handlers["x"] = ext.parse

            def statement(self, tag):
                h = self.handlers.get(tag)
                return h(self)  # DICT_OF_BOUND


        class Gen:
            def finalize(self):
                return self._default_finalize

            def out(self):
                f = self.finalize()
                return f(1)  # RETURNED_BOUND

            def _default_finalize(self, value):
                return value


        class NativeGen(Gen):
            def _default_finalize(self, value):
                return [value]


        class Order:
            def save(self):
                pass


        class Rush(Order):
            def save(self):
                pass


        def later(callback):
            callback()  # EXACT_PASSED


        def exact():
            later(Order().save)
            order = Order()
            f = getattr(order, "save")
            f()  # EXACT_GETATTR
    ''',
}


def test_a_method_read_by_getattr_lists_the_overrides():
    found = callees_by_mark(FILES, "pkg/m.py", called_only=True)
    assert found["GETATTR_LOCAL"] == {"Visitor.step", "Sum.step"}


def test_a_method_handed_to_a_parameter_lists_the_overrides():
    found = callees_by_mark(FILES, "pkg/m.py", called_only=True)
    assert found["PASSED"] == {"Visitor.step", "Sum.step"}


def test_a_method_put_into_a_dict_attribute_lists_the_overrides():
    found = callees_by_mark(FILES, "pkg/m.py", called_only=True)
    assert found["DICT_OF_BOUND"] == {"Extension.parse", "I18n.parse"}


def test_a_method_returned_lists_the_overrides():
    found = callees_by_mark(FILES, "pkg/m.py", called_only=True)
    assert found["RETURNED_BOUND"] == {"Gen._default_finalize", "NativeGen._default_finalize"}


def test_a_method_of_an_exact_class_lists_no_override():
    found = callees_by_mark(FILES, "pkg/m.py", called_only=True)
    assert found["EXACT_PASSED"] == {"Order.save"}
    assert found["EXACT_GETATTR"] == {"Order.save"}
