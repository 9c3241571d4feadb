"""A property made by calling ``property`` in a class body is read as a decorated one (issue
31; babel's ``Catalog``: ``locale = property(_get_locale, _set_locale)``, 21 missed calls of
its suite).  ``obj.locale`` runs the getter, so ``self.locale.english()`` calls what the
getter's return annotation says; the page documents ``locale`` as a property; the trace
oracle (``trace_recall.py``) leaves the accessors' implicit calls out, as it does a decorated
property's, but keeps an explicit call of one.  Expected edges read off the source by hand.
"""

from __future__ import annotations

import importlib
import sys

import pytest
from ig_helpers import build_files, callees_by_mark, symbol_section
from trace_recall import truth
from trace_workload import record

SOURCE = '''
    class Loc:
        def english(self):
            return "en"


    class Other:
        def english(self):
            return "other"


    class Catalog:
        def __init__(self):
            self._loc = Loc()

        def _get_loc(self) -> Loc:
            """The catalog's locale."""
            return self._loc

        def _set_loc(self, value):
            self._loc = value

        loc = property(_get_loc, _set_loc)

        def _get_ident(self) -> Loc:
            return self._loc

        ident = property(fget=_get_ident, doc="The identifier.")

        def _get_untyped(self):
            return self._loc

        untyped = property(_get_untyped)
        by_lambda = property(lambda self: self._loc)

        def name(self):
            return self.loc.english()  # POSITIONAL

        def keyword(self):
            return self.ident.english()  # KEYWORD

        def other(self):
            self._set_loc(Other())  # EXPLICIT
            return self.untyped  # READ_UNTYPED


    def run():
        c = Catalog()
        c.loc = Loc()
        c.name()
        c.keyword()
        c.other()
        return c.loc
'''
FILES = {"pkg/__init__.py": "", "pkg/cat.py": SOURCE}


@pytest.fixture(scope="module")
def marks():
    return callees_by_mark(FILES, "pkg/cat.py")


@pytest.mark.parametrize(("mark", "expected"), [
    ("POSITIONAL", {"Loc.english", "Catalog.loc"}),  # the call, and the property read
    ("KEYWORD", {"Loc.english", "Catalog.ident"}),  # property(fget=...)
    ("EXPLICIT", {"Catalog._set_loc", "Other"}),  # an accessor called by name
])
def test_a_property_call_is_read_through_its_getters_return_annotation(marks, mark, expected):
    assert marks[mark] == expected


def test_the_page_documents_each_as_a_property(tmp_path):
    _root, out = build_files(tmp_path / "src", FILES)
    docs = (out / "pkg/cat.py_docs.md").read_text()
    loc = symbol_section(docs, "Catalog.loc")
    assert "`def loc() -> Loc`" in loc and "The catalog's locale." in loc  # the getter's
    assert "The identifier." in symbol_section(docs, "Catalog.ident")  # doc=
    assert "`def untyped()`" in symbol_section(docs, "Catalog.untyped")
    assert '<a id="sym-Catalog.by_lambda">' not in docs  # no getter of the class body
    assert "- **Properties**: `Catalog.loc` ([line 22](#L22)), `Catalog.ident` ([line 27]" \
        "(#L27)), `Catalog.untyped` ([line 32](#L32))" in docs
    assert "- **Assigned attributes**: `_loc` ([line 13](#L13)), `by_lambda` ([line 33]" \
        "(#L33))\n" in symbol_section(docs, "Catalog")  # not the properties


def test_the_trace_leaves_out_the_accessors_run_by_reads_and_writes(tmp_path):
    root, _out = build_files(tmp_path / "src", FILES)
    sys.path.insert(0, str(root))
    try:
        observed = record(lambda: importlib.import_module("pkg.cat").run(), str(root / "pkg"))
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m.split(".")[0] == "pkg"]:
            del sys.modules[name]
    true, left_out = truth(root / "pkg", observed)
    accessors = {e for e in true if "._get_" in e[3] or "._set_" in e[3]}
    lines = SOURCE.split("\n")
    explicit = next(i for i, x in enumerate(lines) if x.endswith("# EXPLICIT"))
    assert accessors == {("cat.py", "sym-Catalog.other", "cat.py", "sym-Catalog._set_loc",
                          explicit)}
    # the reads of loc (name, run), ident, untyped and the write of c.loc
    assert left_out["property"] == 5
