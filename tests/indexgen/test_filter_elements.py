"""``filter(f, xs)`` holds some of the elements of ``xs`` (:data:`indexgen.extract.syntax.
KEEP_ARGS`, :mod:`indexgen.analyze.results`): lark's tree builder chains the wrappers of
``list(filter(None, [flag and Expand, Filter]))``; torch's ``cat`` decomposition calls a
method of the tensors ``list(filter(non_empty, tensors))`` keeps."""

from __future__ import annotations

from ig_helpers import callees_by_mark

FILES = {
    "pkg/__init__.py": "",
    "pkg/chain.py": '''
        class Expand:
            def __init__(self, inner):
                self.inner = inner


        class Filter:
            def __init__(self, inner):
                self.inner = inner


        def chain(flag, f):
            for w in list(filter(None, [flag and Expand, Filter])):
                f = w(f)  # WRAP
            return f
        ''',
}


def test_the_elements_a_filter_keeps_are_those_it_is_handed():
    assert callees_by_mark(FILES, "pkg/chain.py")["WRAP"] == {"Expand.__init__",
                                                             "Filter.__init__"}
