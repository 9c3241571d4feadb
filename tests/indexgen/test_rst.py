"""Tests for indexgen.render.rst and indexgen.render.docrender: docstring text to safe Markdown."""

from __future__ import annotations

import re

import pytest
from indexgen.extract.docstrings import parse_docstring, role_targets
from indexgen.render.docrender import render_doc
from indexgen.render.rst import inline, role, to_markdown

md_lib = pytest.importorskip("markdown")


def _linker(role_name, target):
    return {"pkg.Foo": "foo.md#sym-Foo", "bar": "#sym-bar"}.get(target)


def _html(blocks):
    return md_lib.markdown("\n\n".join(blocks), extensions=["tables", "md_in_html"])


def _visible_text(html: str) -> str:
    """Rendered text outside code: what a reader sees as prose."""
    html = re.sub(r"<pre.*?</pre>", "", html, flags=re.S)
    html = re.sub(r"<code>.*?</code>", "", html, flags=re.S)
    return re.sub(r"<[^>]+>", "", html)


def test_literal_roles_and_emphasis():
    blocks = to_markdown("Use ``x + 1`` with :class:`~pkg.Foo`, :func:`bar` and "
                         ":meth:`unknown.thing`; *really* **must**.", _linker)
    html = _html(blocks)
    assert "<code>x + 1</code>" in html
    assert '<a href="foo.md#sym-Foo"><code>Foo</code></a>' in html
    assert '<a href="#sym-bar"><code>bar()</code></a>' in html
    assert "<code>unknown.thing()</code>" in html and "unknown.thing</a>" not in html
    assert "<em>really</em>" in html and "<strong>must</strong>" in html
    assert "``" not in _visible_text(html) and ":class:" not in _visible_text(html)


def test_literal_block_after_double_colon_is_code():
    text = "One iteration::\n\n    pre-forward   unshard\n    forward       <run>\n\nAfter."
    blocks = to_markdown(text, _linker)
    assert blocks[0] == "One iteration:"
    assert blocks[1].startswith('<pre class="indexgen-code">')
    assert "forward       &lt;run&gt;" in blocks[1]
    assert blocks[2] == "After."


def test_doctest_heading_list_and_definition_list():
    text = ("Pages\n-----\n\n``a.md`` (keyword index)\n    The keywords.\n\n"
            "- one\n- two\n  continued\n\n>>> f(1)\n2\n\n.. note::\n   Careful.\n")
    blocks = to_markdown(text, _linker)
    assert blocks[0] == "**Pages**"
    assert blocks[1] == "- `a.md` (keyword index): The keywords."
    assert blocks[2] == "- one\n- two continued"
    assert blocks[3].startswith("<pre") and "&gt;&gt;&gt; f(1)" in blocks[3]
    assert blocks[4] == "**Note**: Careful."


@pytest.mark.parametrize("nasty", [
    "<script>alert(1)</script>", "# not a heading", "1. not a list", "[x](http://e.x)",
    "a | b | c", "{: #id } attr", "``<b>`` and :class:`<i>`", "*unclosed and **half",
])
def test_docstring_text_cannot_inject_markup(nasty):
    html = _html(to_markdown(nasty, _linker))
    for tag in ("<script", "<h1", "<ol", "<a ", "<table", "<b>", "<i>"):
        assert tag not in html, (nasty, html)


def test_google_numpy_and_sphinx_sections():
    google = parse_docstring("Do it.\n\nArgs:\n    x (int): The x.\n\nReturns:\n    The y.\n\n"
                             "Raises:\n    ValueError: When bad.\n")
    numpy = parse_docstring("Do it.\n\nParameters\n----------\nx : int\n    The x.\n")
    sphinx = parse_docstring("Do it.\n\n:param x: The x.\n:type x: int\n:raises ValueError: "
                             "When bad.\n")
    for sections in (google, numpy, sphinx):
        text = "\n\n".join(render_doc(sections, _linker))
        assert "**Parameters**\n\n- `x` (`int`): The x." in text, text
    google_text = "\n\n".join(render_doc(google, _linker))
    assert "**Returns**\n\n- The y." in google_text
    assert "**Raises**\n\n- `ValueError`: When bad." in google_text


def test_role_title_and_target_forms():
    assert role("func", "shown <bar>", _linker) == "[`shown`](#sym-bar)"
    assert role("class", "!pkg.Foo", _linker) == "`pkg.Foo`"  # ! suppresses the link
    assert role_targets(":class:`~a.B` and :py:func:`t <c.d>`") == ["a.B", "c.d"]


def test_markdown_code_fences_are_code():
    blocks = to_markdown("Load it:\n\n```python\nimport griffe\nm = griffe.load(``x``)\n```\n\n"
                         "Done.", _linker)
    assert blocks[0] == "Load it:"
    assert blocks[1].startswith("<pre") and "m = griffe.load(``x``)" in blocks[1]
    assert blocks[2] == "Done."


def test_broken_literals_degrade_to_plain_text():
    # Backquotes that do not pair up: the whole paragraph is plain text, never a code span
    # that swallows the wrong words or a stray backquote.
    blocks = to_markdown("a ``*``.txt`` b\nrepresents ``1*x\n+ 2*y`` here", _linker)
    html = _html(blocks)
    assert "`" not in _visible_text(html) and "<code>" not in html and "<li>" not in html
    assert _visible_text(html).strip() == "a *.txt b represents 1*x + 2*y here"
    # torch's FullyShardedDataParallel docstring: ``ignored_states`` and `ignored_modules``
    line = inline("we keep both ``ignored_states`` and `ignored_modules``, but :class:`~a.B` "
                  "is one", _linker)
    assert line == "we keep both ignored\\_states and ignored\\_modules, but a.B is one"


def test_balanced_literals_next_to_formulas_stay_code():
    html = _html(to_markdown("it represents ``1*x\n+ 2*y`` here", _linker))
    assert "<code>1*x + 2*y</code>" in html


@pytest.mark.parametrize(("text", "expected"), [
    # attrs 25.4.0: the note's text on the marker's line, as Sphinx reads it (version, then text)
    (".. versionchanged:: 21.1.0 ``bool(NOTHING)`` is now False.",
     "**Changed in version 21.1.0**: `bool(NOTHING)` is now False."),
    (".. versionadded:: 15.2.0 *convert*", "**New in version 15.2.0**: *convert*"),
    (".. deprecated:: 21.3.0 It will not be removed, but it also will not be\n"
     "   moved to new ``attrs`` namespace.",
     "**Deprecated 21.3.0**: It will not be removed, but it also will not be moved to new "
     "`attrs` namespace."),
    (".. versionchanged:: 8.0\n    Added the ``a`` parameter.",
     "**Changed in version 8.0**: Added the `a` parameter."),
    (".. versionadded:: 2.2", "**New in version 2.2**"),
    # an admonition's text beside its marker is its first paragraph, not lost
    (".. note:: Mind the *gap*.\n   Always.", "**Note**: Mind the *gap*. Always."),
    (".. seealso:: :func:`bar`", "**See also**: [`bar()`](#sym-bar)"),
])
def test_directive_text_on_the_marker_line_is_prose(text, expected):
    assert to_markdown(text, _linker) == [expected]


def test_google_title_set_apart_by_a_blank_line_is_a_section():
    spaced = parse_docstring("Do it.\n\nArgs:\n\n    x:\n        The x.\n\n"
                             "    y: The y.\n\nRaises:\n\n    ValueError: When bad.\n")
    text = "\n\n".join(render_doc(spaced, _linker))
    assert "**Parameters**\n\n- `x`: The x.\n- `y`: The y." in text, text
    assert "**Raises**\n\n- `ValueError`: When bad." in text, text
    # a title followed by unindented text is no section, a fenced one is code: both keep
    # their blank line
    unindented = parse_docstring("Do it.\n\nArgs:\n    x: The x.\n\nExamples:\n\nSee the guide.")
    assert unindented[-1].text == "Examples:\n\nSee the guide.", unindented
    fenced = "Do it.\n\nArgs:\n    x: The x.\n\n```\nArgs:\n\n    x: The x.\n```"
    assert parse_docstring(fenced)[-1].text == fenced.split("\n\n", 2)[2], fenced
