"""Tests for indexgen.manifest: a summary given as text is written as its dict would be."""

from __future__ import annotations

import json

import pytest
from indexgen import manifest as mf


def _manifest(summary):
    entry = {"sha256": "ab" * 32, "context": "0123456789abcdef",
             "pages": {"p/a.py_docs.md": "cd" * 32, "p/a.py_kw.md": "ef" * 32},
             "summary": summary}
    return {"tool": "indexgen", "version": "1", "settings": {"roots": ["p"]},
            "files": {"p/a.py": entry, "p/b.py": dict(entry, summary={"n": 1})},
            "folders": {}}


def test_summary_given_as_text_is_written_like_its_dict():
    encoded = {"root": "p", "relpath": "a.py", "docstring": "Ünïcode \"quoted\" \\ text",
               "defs": [["class", "A", 1, 9, 1, ["B"], "sym-A", "", False, []]],
               "refs": [], "size": 12, "exports": None}
    as_dict = mf.dumps(_manifest(encoded))
    as_text = mf.dumps(_manifest(mf.summary_json(encoded)))
    assert as_text == as_dict
    assert json.loads(as_text)["files"]["p/a.py"]["summary"] == encoded


def test_an_entry_key_sorting_after_summary_is_refused():
    data = _manifest(mf.summary_json({"n": 2}))
    data["files"]["p/a.py"]["zeta"] = 1
    with pytest.raises(ValueError, match="sorts after"):
        mf.dumps(data)
