"""A copy of a table holds the table's values, and a function returning one hands it on.

``dict(self.TABLE)``, ``dict(**self.TABLE)`` and ``self.TABLE.copy()`` hold the functions of
the class body's ``TABLE``, as ``self.TABLE`` itself does; ``list(xs)``/``tuple(xs)`` the
elements of ``xs``.  A function that returns such a copy (``_build(type(self))``: the class of
``self`` handed to ``cls``, then ``dict(cls.TABLE)``) gives its callers the copy, so a
handler looked up in what it returned is called as the table's would be.  Every expected
edge is read off the source by hand.
"""

from __future__ import annotations

from ig_helpers import callees_by_mark

FILES = {
    "pkg/__init__.py": "",
    "pkg/gen.py": '''
        def any_value_sql(self, e):
            return self.seg(e)


        def table_sql(self, e):
            return e


        def _build(cls):
            dispatch = dict(cls.TRANSFORMS)
            return dispatch


        def _listed(cls):
            return list(cls.STEPS)


        class Gen:
            TRANSFORMS = {"b": any_value_sql}
            STEPS = [table_sql]

            def __init__(self):
                self._d2 = dict(self.TRANSFORMS)
                self._d3 = _build(type(self))
                self._d4 = dict(**self.TRANSFORMS)
                self._d5 = self.TRANSFORMS.copy()
                self._d6 = _build(self.__class__)
                self._s1 = tuple(self.STEPS)
                self._s2 = _listed(type(self))

            def seg(self, e):
                return e

            def sql(self, e):
                h2 = self._d2.get(e)
                h2(self, e)  # C2
                h3 = self._d3.get(e)
                h3(self, e)  # C3
                self._d3[e](self, e)  # C4
                self._d4[e](self, e)  # C5
                self._d5[e](self, e)  # C6
                self._d6[e](self, e)  # C7
                self._s1[0](self, e)  # S1
                for step in self._s2:
                    step(self, e)  # S2
    ''',
}


def test_a_copy_of_a_table_holds_its_values():
    found = callees_by_mark(FILES, "pkg/gen.py", called_only=True)
    for mark in ("C2", "C5", "C6"):
        assert found[mark] == {"any_value_sql"}, (mark, found)
    assert found["S1"] == {"table_sql"}, found


def test_a_function_returning_a_copy_hands_it_to_its_callers():
    found = callees_by_mark(FILES, "pkg/gen.py", called_only=True)
    for mark in ("C3", "C4", "C7"):
        assert found[mark] == {"any_value_sql"}, (mark, found)
    assert found["S2"] == {"table_sql"}, found
