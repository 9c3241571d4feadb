"""A ``getattr`` name built in a local, or lowered, is read as one stated in the call (issue
31; sqlparse's filters: ``func_name = f'_process_{type(tlist).__name__}'``, then
``getattr(self, func_name.lower(), self._process_default)``, 15 missed calls of its
suite).  Expected edges read off the source by hand: every ``_process_*`` method the name
may give, and the default."""

from __future__ import annotations

import pytest
from ig_helpers import callees_by_mark

FILES = {
    "pkg/__init__.py": "",
    "pkg/filters.py": '''
        class Reindent:
            def local_name(self, tlist):
                func_name = f"_process_{type(tlist).__name__}"
                func = getattr(self, func_name)
                func(tlist)  # LOCAL_FSTRING

            def local_sum(self, kind, tlist):
                name = "_process_" + kind
                return getattr(self, name)(tlist)  # LOCAL_SUM

            def statement(self, kind, tlist):
                name = "_process_" + kind
                getattr(self, name)(tlist)  # STATEMENT

            def lowered(self, tlist):
                func = getattr(self, f"_process_{type(tlist).__name__}".lower())
                func(tlist)  # LOWERED

            def sqlparse_form(self, tlist):
                func_name = f"_process_{type(tlist).__name__}"
                func = getattr(self, func_name.lower(), self._process_default)
                func(tlist)  # SQLPARSE_FORM

            def uppered(self, kind):
                method = getattr(self, f"handle_{kind}".upper())
                method()  # UPPERED

            def bound_twice(self, tlist, flag):
                func_name = f"_process_{type(tlist).__name__}"
                if flag:
                    func_name = "_stripws_default"
                func = getattr(self, func_name)
                func(tlist)  # BOUND_TWICE

            def parameter(self, func_name, tlist):
                func = getattr(self, func_name)
                func(tlist)  # PARAMETER

            def _process_where(self, tlist):
                return 1

            def _process_values(self, tlist):
                return 2

            def _process_default(self, tlist):
                return 3

            def HANDLE_X(self):
                return 4

            def handle_y(self):
                return 5

            def _stripws_default(self, tlist):
                return 6
    ''',
}
PROCESS = {"Reindent._process_where", "Reindent._process_values", "Reindent._process_default"}


@pytest.fixture(scope="module")
def marks():
    return callees_by_mark(FILES, "pkg/filters.py", called_only=True)


@pytest.mark.parametrize(("mark", "expected"), [
    ("LOCAL_FSTRING", PROCESS),  # a local bound once to an f-string
    ("LOCAL_SUM", PROCESS),  # ... to "_process_" + kind
    ("STATEMENT", PROCESS),  # called at once, not returned
    ("LOWERED", PROCESS),  # the name lowered
    ("SQLPARSE_FORM", PROCESS),  # a local lowered, with a default
    ("UPPERED", {"Reindent.HANDLE_X"}),  # uppered: HANDLE_*, not handle_y
])
def test_a_getattr_name_in_a_local_or_changed_in_case_is_read(marks, mark, expected):
    assert marks[mark] == expected


@pytest.mark.parametrize("mark", ["BOUND_TWICE", "PARAMETER"])
def test_a_name_bound_otherwise_names_nothing(marks, mark):
    assert marks[mark] == set()
