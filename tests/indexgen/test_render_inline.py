"""Shortcuts of the analysis page's call bullets (issue 31, render speed) say what the longer
code says: ``format_calls`` asks :func:`~indexgen.render.through.through` only about the
edges whose call does not name the callee (:func:`~indexgen.render.through.may_label`,
through's own first test), ``line_links`` writes a single line's link at once, a
definition that only calls hands its whole edge list to the "Calls" bullet, and ``code``
keeps its recent answers."""

from __future__ import annotations

import random

from ig_helpers import build_files
from indexgen.render import calls, markdown
from indexgen.render.page import line_links
from test_edge_labels import OTHER, RULES


def test_through_is_asked_only_where_it_may_label(tmp_path, monkeypatch):
    """Every edge format_calls does not hand to through is one through labels '' (on the
    label tests' tree, which has both kinds), and it does leave some out."""
    seen, asked = [], set()
    real_format, real_through = calls.format_calls, calls.through

    def format_spy(p, edges, checking=(), caller=None, prefix=""):
        seen.append((p, caller, list(edges)))
        return real_format(p, edges, checking, caller, prefix)

    def through_spy(p, caller, e):
        asked.add((id(p), caller, e))
        return real_through(p, caller, e)

    monkeypatch.setattr(calls, "format_calls", format_spy)
    monkeypatch.setattr(calls, "through", through_spy)
    build_files(tmp_path / "src", {"pkg/__init__.py": "", "pkg/rules.py": RULES,
                                   "pkg/other.py": OTHER})
    skipped = labelled = 0
    for p, caller, edges in seen:
        if caller is None:
            continue
        for e in edges:
            if e.kind == "override":
                continue
            if (id(p), caller, e) in asked:
                labelled += bool(real_through(p, caller, e))
            else:
                skipped += 1
                assert real_through(p, caller, e) == "", e
    assert skipped and labelled
    # each bullet lists the edges of its kinds, in order, whether the list is filtered or not
    pages = {id(p): p for p, _caller, _edges in seen}
    mixed = 0
    for p in pages.values():
        for anchor, edges in p.ctx.calls.items():
            mixed += len({e.kind for e in edges}) > 1
            expected = [calls.format_calls(p, [e for e in edges if e.kind in kinds],
                                           p.s.checking_spans if not anchor else (), anchor,
                                           f"- **{title}**: ")
                        for title, kinds in calls._CALL_BULLETS
                        if any(e.kind in kinds for e in edges)]
            assert calls.calls_lines(p, anchor)[:len(expected)] == expected
    assert mixed


def test_one_line_link_as_line_links_writes_it():
    for n in (1, 7, 12345):
        for target in ("", "other.py_docs.md"):
            assert f"[line {n}]({target}#L{n})" == line_links([n], target)
            assert f"{'x'} ([line {n}]({target}#L{n}))" == f"x ({line_links([n], target)})"


def test_code_spans_cached_are_those_made_afresh():
    assert markdown.code.cache_info().maxsize
    rng = random.Random(31)
    pieces = ["a", "`", "``", " ", "  ", "\t", "\n", "<", ">", "&", "x.y", "`b`"]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 8))) for _ in range(3000)]
    for text in texts * 2:  # the second round from the cache
        assert markdown.code(text) == markdown.code.__wrapped__(text), text


def test_enclosing_definition_found_from_the_last_is_the_scan_from_the_first():
    """sections._enclosing looks back from the last definition starting at or before the
    line; the scan it replaced went through every definition from the first."""
    from types import SimpleNamespace

    from indexgen.render.sections import _enclosing

    def scanned(defs, line):
        best = ""
        for d in sorted(defs, key=lambda d: (d.start_lineno, -d.end_lineno)):
            if d.start_lineno > line:
                break
            if d.end_lineno >= line:
                best = d.qualname
        return best

    rng = random.Random(31)
    for _ in range(300):
        defs = []
        for n in range(rng.randint(0, 12)):  # nested and side by side, some on one line
            start = rng.randint(1, 60)
            defs.append(SimpleNamespace(qualname=f"d{n}", start_lineno=start,
                                        end_lineno=start + rng.choice((0, 0, 1, 5, 30))))
        find = _enclosing(SimpleNamespace(definitions=defs))
        for line in range(0, 95):
            assert find(line) == scanned(defs, line), (defs, line)
