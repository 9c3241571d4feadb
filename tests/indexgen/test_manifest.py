"""Tests for indexgen.run.manifest: a summary given as text is written as its dict would be."""

from __future__ import annotations

import json

import pytest
from indexgen.run import manifest as mf


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


def _full_summaries():
    """Full summaries of the sample project and of installed torch's FSDP package: packages
    (whole docstrings kept), modules, local calls (dropped by the compact summary)."""
    import importlib.util
    from pathlib import Path

    from ig_helpers import SAMPLE
    from indexgen.extract.discover import discover
    from indexgen.extract.pipeline import extract_file

    roots = [SAMPLE / "src"]
    spec = importlib.util.find_spec("torch")
    if spec and spec.submodule_search_locations:
        roots.append(Path(list(spec.submodule_search_locations)[0]) / "distributed" / "fsdp")
    return [extract_file(s.path, s.root, s.relpath, s.module, 10**6)
            for root in roots for s in discover(root)]


def test_a_worker_sends_the_compact_summary_the_global_pass_would_make():
    # Workers send encode_compact(full) as text instead of compact(full) pickled; the calling
    # process decodes it, as it decodes a summary cached in the manifest: the same encoding
    # must come out of both.
    from indexgen.analyze.project import compact

    fulls = _full_summaries()
    assert any(c.local for s in fulls for c in s.calls)  # something for compact to drop
    assert any(s.is_package and "\n\n" in s.docstring for s in fulls)
    for full in fulls:
        assert mf.encode_compact(full) == mf.encode_summary(compact(full)), full.key
