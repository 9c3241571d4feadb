"""``isinstance(other, self.__class__)`` in a method narrows ``other`` to an instance of the
method's class (or of a subclass, whose overrides are listed), as ``isinstance(other,
Base)`` does (:meth:`indexgen.analyze.values.Annotations.annotation`; boltons' ``__eq__``
methods)."""

from __future__ import annotations

from ig_helpers import callees_by_mark

FILES = {
    "pkg/__init__.py": "",
    "pkg/spooled.py": '''
        class SpooledBase:
            def tell(self):
                return 0

            def __eq__(self, other):
                if isinstance(other, self.__class__):
                    return other.tell() == 0  # SELF_CLASS
                return False


        class SpooledBytes(SpooledBase):
            def tell(self):
                return 1
        ''',
}


def test_a_test_for_the_instances_own_class_narrows_to_the_methods_class():
    assert callees_by_mark(FILES, "pkg/spooled.py")["SELF_CLASS"] == {
        "SpooledBase.tell", "SpooledBytes.tell"}
