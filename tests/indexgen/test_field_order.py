"""A dataclass's fields are handed by place in their source order (issue 31).

``Box(z, n, d, a)`` hands its arguments to ``Box``'s fields ``zeta, name, data, alpha``
in the order the class body writes them; in sorted order (``alpha, data, name, zeta``)
``data`` would get what ``n`` is.  ``self.data.run()`` then reaches ``Loop.run`` only, never
``Text.run`` (what ``name`` and ``alpha`` are handed), and ``self.alpha.run()`` ``Text.run``.
Checked on built pages (a build, whose pass may read summaries
back from the manifest) and on the global pass's input made in memory (``project_of``).
"""

from __future__ import annotations

import json

import pytest
from ig_helpers import build_files, calls_at, project_of
from indexgen.run.manifest import decode_summary, encode_summary, summary_json

FILES = {
    "pkg/__init__.py": "",
    "pkg/box.py": '''
        from dataclasses import dataclass


        class Text:
            def run(self) -> None:
                pass


        class Loop:
            def run(self) -> None:
                pass


        @dataclass
        class Box:
            zeta: int
            name: Text
            data: object
            alpha: object = None

            def go(self) -> None:
                self.data.run()  # data's

            def first(self) -> None:
                self.alpha.run()  # alpha's


        def make(n: Text, d: Loop, z: int, a: Text) -> Box:
            return Box(z, n, d, a)
    ''',
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("fields") / "src", FILES)


@pytest.mark.parametrize(("marker", "expected"), [
    ("# data's", {"box:Loop.run"}),
    ("# alpha's", {"box:Text.run"}),
])
def test_built_pages_hand_fields_by_source_order(pages, marker, expected):
    assert calls_at(pages, "pkg/box.py", marker) == expected


@pytest.mark.parametrize(("anchor", "expected"), [
    ("sym-Box.go", {"sym-Loop.run"}),
    ("sym-Box.first", {"sym-Text.run"}),
])
def test_in_memory_pass_hands_fields_by_source_order(anchor, expected):
    out = project_of(FILES).contexts()["src/pkg/box.py"].calls[anchor]
    assert {e.anchor for e in out} == expected


def test_manifest_keeps_the_fields_order():
    summary = project_of(FILES).files["src/pkg/box.py"]
    text = summary_json(encode_summary(summary))
    box = next(d for d in decode_summary(json.loads(text)).definitions
               if d.qualname == "Box")
    assert list(box.members)[:4] == ["zeta", "name", "data", "alpha"]
