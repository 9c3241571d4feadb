"""What the callers hand a parameter counts together with the function's weaker evidence.

A probe of lark and boltons found two ways a parameter's weaker sources hid what its
callers hand it (:meth:`indexgen.analyze.sourced.Sourced.sources`):

- what the function appends to it (lark's ``earley.py``: ``def complete(to_scan):
  to_scan.add(item)``, handed an ``OrderedSet``) made it a builtin set, whose ``add``
  is no call of the project's;
- an ``isinstance`` test for a builtin (boltons' ``iterutils.py``: ``if
  isinstance(new_parent, dict): new_parent.update(...)``, handed an ``OrderedMultiDict``,
  a project subclass of ``dict``) kept only the builtin, in the branch and out of it.

(A test for a project class still hides what is handed, in the whole function: reading
what torch's callers hand such parameters cost the pass 2.8% more calls and wrong edges.)

Every expected edge below is read off the source by hand.
"""

from __future__ import annotations

import pytest
from ig_helpers import build_files, calls_at
from indexgen.analyze.outside_tests import passes

FILES = {
    "pkg/__init__.py": "",
    "pkg/scan.py": '''
        class Item:
            pass


        class OrderedSet:
            def add(self, x):
                pass

            def clear(self):
                pass


        class Column:
            def append(self, x):
                pass

            def clear(self):
                pass


        def complete(to_scan):
            to_scan.add(Item())  # ADD_ITEM
            to_scan.add(1)  # ADD_LITERAL


        def extend(col):
            col.append(Item())  # APPEND_ITEM
            col.clear()  # CLEAR


        def main():
            complete(OrderedSet())
            extend(Column())
    ''',
    "pkg/multidict.py": '''
        from collections.abc import Mapping


        class OrderedMultiDict(dict):
            def update(self, items):
                pass


        class Registry:
            def update(self, items):
                pass


        def default_exit(new_parent, new_items):
            if isinstance(new_parent, dict):
                new_parent.update(new_items)  # IN_DICT
            return new_parent


        def abc_exit(new_parent, new_items):
            if isinstance(new_parent, Mapping):
                new_parent.update(new_items)  # IN_MAPPING


        def main():
            default_exit(OrderedMultiDict(), [])
            default_exit(Registry(), [])
            abc_exit(OrderedMultiDict(), [])
    ''',
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("handed") / "src", FILES)


@pytest.mark.parametrize(("marker", "expected"), [
    # complete is handed an OrderedSet: its own add, whatever is added
    ("ADD_ITEM", {"scan:Item", "scan:OrderedSet.add"}),
    ("ADD_LITERAL", {"scan:OrderedSet.add"}),
    # extend is handed a Column: appending to it runs Column.append; clear, Column.clear
    ("APPEND_ITEM", {"scan:Column.append", "scan:Item"}),
    ("CLEAR", {"scan:Column.clear"}),
])
def test_what_is_appended_leaves_what_is_handed(pages, marker, expected):
    assert calls_at(pages, "pkg/scan.py", "# " + marker) == expected


@pytest.mark.parametrize(("marker", "expected"), [
    # the OrderedMultiDict handed is a dict and a Mapping; the Registry handed is neither
    ("IN_DICT", {"multidict:OrderedMultiDict.update"}),
    ("IN_MAPPING", {"multidict:OrderedMultiDict.update"}),
])
def test_a_test_for_a_builtin_keeps_its_project_subclasses(pages, marker, expected):
    assert calls_at(pages, "pkg/multidict.py", "# " + marker) == expected


@pytest.mark.parametrize(("bases", "tests", "expected"), [
    (("dict",), ("dict",), True),
    (("dict",), ("collections.abc.Mapping",), True),
    (("dict",), ("typing.Mapping",), True),
    (("collections.OrderedDict",), ("dict",), True),
    (("torch.nn.Module",), ("torch.nn.Module",), True),  # outside: by its name
    (("collections.abc.Mapping",), ("dict",), False),  # a Mapping need not be a dict
    (("dict",), ("list", "tuple"), False),
    (("torch.nn.Linear",), ("torch.nn.Module",), False),  # not loaded: not known
])
def test_which_outside_bases_pass_a_test(bases, tests, expected):
    assert passes(bases, tests) is expected
