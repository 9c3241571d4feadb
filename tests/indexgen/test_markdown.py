"""Tests for indexgen.render.markdown: escaped text renders literally and cannot inject markup."""

from __future__ import annotations

import pytest
from indexgen.paths import relpath
from indexgen.render.markdown import anchor, code, escape_text, heading_anchor

# Python-Markdown comes with the docs extra (mkdocs); without it these tests cannot render.
md_lib = pytest.importorskip("markdown")

NASTY = [
    "<script>alert(1)</script>",
    "*emphasis* and **bold** and __dunder__",
    "[link](http://evil.example) ![img](x.png)",
    "a | table | row",
    "# not a heading",
    "- not a list",
    "1. not a list either",
    "`code` and ``more``",
    "&amp; entity and <b>tag</b>",
    "{: #id .class } attr list",
    "~~strike~~ :smile:",
    "> not a quote",
]


def _html(text: str) -> str:
    return md_lib.markdown(text, extensions=["tables", "attr_list"])


@pytest.mark.parametrize("text", NASTY)
def test_escaped_text_renders_as_one_plain_paragraph(text):
    html = _html(escape_text(text))
    assert html.startswith("<p>") and html.endswith("</p>")
    inner = html[3:-4]
    for tag in ("<script", "<em", "<strong", "<a ", "<img", "<b>", "<code", "<h1", "<li",
                "<table", "<blockquote", "<del"):
        assert tag not in inner, (text, html)
    assert 'id="id"' not in html


def test_escaped_text_keeps_the_words():
    html = _html(escape_text("Sum ``x`` over *ranks*"))
    assert "Sum" in html and "ranks" in html and "x" in html


@pytest.mark.parametrize("text", ["plain", "a`b", "``x``", "`edge`", "line\nbreak"])
def test_code_span_holds_text_literally(text):
    html = md_lib.markdown(code(text))
    assert html.count("<code>") == 1
    inner = html.split("<code>")[1].split("</code>")[0]
    assert inner.strip() == " ".join(text.split())


def test_anchor_escapes_its_id():
    assert anchor('x"y') == '<a id="x&quot;y"></a>'


def test_heading_anchor_and_relpath():
    for title in ("Architecture & Design", "High-Level Overview", "Keyword → Section Map"):
        html = md_lib.markdown(f"## {title}", extensions=["toc"])
        assert f'id="{heading_anchor(title)}"' in html, html
    assert relpath("a/b/c.md", "a/d") == "../b/c.md"
    assert relpath("x.md", "") == "x.md"
