"""A class attribute the module rebinds outside the class body (issue 31; pyparsing's
``ParserElement._parse = ParserElement._parseCache`` in ``enable_packrat`` and
``ParserElement._literalStringClass = Literal`` at the top, 62 missed calls of its suite):
``self._parse(...)`` may then be either method.  A patch that the function takes back
(``orig = C.f; C.f = patched; ...; C.f = orig``) and a value other than a name or an
attribute path (a call's result, a dict's item: read as what any key of it holds) are not
counted.  Expected edges
read off the source by hand."""

from __future__ import annotations

import pytest
from ig_helpers import build_files, calls_at

FILES = {
    "pkg/__init__.py": "",
    "pkg/elements.py": '''
        class Element:
            def _parse_plain(self, s):
                return s

            def _parse_cached(self, s):
                return s

            _parse = _parse_plain

            def parse(self, s):
                return self._parse(s)  # rebound-in-function

            def show(self):
                return self.shown()  # patched-for-a-while

            def _shown(self):
                return "element"

            shown = _shown

            def run(self):
                return self.made()  # call-result

            def _check_plain(self):
                return True

            checked = _check_plain

            def check(self):
                return self.checked()  # item

            @classmethod
            def enable_cache(cls) -> None:
                Element._parse = Element._parse_cached


        class Literal(Element):
            pass


        Element.literal_class = Literal


        def lit(s):
            return Element.literal_class(s)  # rebound-at-top


        def shown_loudly(self):
            return "ELEMENT"


        def make_runner():
            return shown_loudly


        def loudly(e: Element):
            orig = Element.shown
            Element.shown = shown_loudly
            try:
                return e.show()
            finally:
                Element.shown = orig


        def configure() -> None:
            Element.made = make_runner()


        _SAVED = {}


        def save() -> None:
            _SAVED["check"] = Element._check_plain
            _SAVED["literal"] = Literal


        def restore() -> None:
            Element.checked = _SAVED["check"]
    ''',
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("classrebind") / "src", FILES)


@pytest.mark.parametrize(("marker", "expected"), [
    ("# rebound-in-function", {"elements:Element._parse_plain", "elements:Element._parse_cached"}),
    ("# rebound-at-top", {"elements:Literal"}),
    ("# patched-for-a-while", {"elements:Element._shown"}),
    ("# call-result", set()),
    ("# item", {"elements:Element._check_plain"}),  # not _SAVED's every value (Literal)
])
def test_a_class_attribute_rebound_outside_its_body(pages, marker, expected):
    assert calls_at(pages, "pkg/elements.py", marker) == expected
