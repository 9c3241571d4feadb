"""The shortcuts the render takes for speed say what the longer code said (issue 31).

Each test states the assumption a shortcut rests on and checks it against the plain
computation it replaced, written out here: the docstring regex's lookahead never changes a
match, the keyword page's labels need no escaping, ``escape_inline``'s early return only
skips text with nothing to escape, and the analysis page's join ends like
``"\\n".join(lines).rstrip("\\n") + "\\n"``.
"""

from __future__ import annotations

import random
import re

from indexgen.render import keywords, markdown, rst
from indexgen.render.docs import _joined
from indexgen.render.markdown import escape_inline, escape_text
from indexgen.render.page import CATEGORY_TITLES, KIND_PLURAL

_TOKEN_CHARS = "`:*_~<>|\\[]{}&a b.py()-!"


def _random_texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    pieces = ["``x``", ":class:`Foo`", ":py:func:`~a.b`", "`ref <http://x>`_", "`dflt`",
              "**bold**", "*em*", "a*b", "x`y", "::", "snake_case", " ", "word"]
    return ["".join(rng.choice(pieces) if rng.random() < 0.5 else rng.choice(_TOKEN_CHARS)
                    for _ in range(rng.randint(0, 12))) for _ in range(n)]


def test_inline_lookahead_changes_no_match():
    """``rst._INLINE`` starts with a lookahead for the characters its tokens start with: the
    same pattern without it finds the same tokens, with the same groups, in any text."""
    pattern = rst._INLINE.pattern
    assert pattern.startswith("(?=[`:*])(?:") and pattern.endswith(")")
    plain = re.compile(pattern[len("(?=[`:*])(?:"):-1])
    for text in _random_texts(3000, seed=31):
        ours = [(m.span(), m.groupdict()) for m in rst._INLINE.finditer(text)]
        theirs = [(m.span(), m.groupdict()) for m in plain.finditer(text)]
        assert ours == theirs, text


def test_keyword_labels_need_no_escaping():
    """The keyword page writes its entries' labels ("method, line 12", "standard library,
    line 3") unescaped: every kind and import category gives a label escaping leaves as
    it is."""
    words = [*KIND_PLURAL, "overload", "constant", "attribute",
             *(title.lower() for title in CATEGORY_TITLES.values())]
    for word in words:
        label = f"{word}, line 12"
        assert escape_text(label) == label, label
    assert keywords._NAME_LABEL(("b", "a", "z")) == ("b", "a")


def test_escape_inline_returns_early_only_without_special_characters():
    """Every character escaping replaces is one the early return looks for, and text with
    none of them comes back as it is."""
    for char, _ in markdown._REPLACEMENTS:
        assert markdown._SPECIAL.search(f"a{char}b"), char
        assert escape_inline(f"a{char}b") != f"a{char}b", char
    for text in _random_texts(2000, seed=7):
        slow = text
        for char, replacement in markdown._REPLACEMENTS:
            slow = slow.replace(char, replacement)
        assert escape_inline(text) == slow, text


def test_joined_page_ends_as_rstrip_did():
    """The analysis page's lines joined end in exactly one newline, whatever empty lines or
    newlines end them, as ``"\\n".join(lines).rstrip("\\n") + "\\n"`` did."""
    rng = random.Random(3)
    for _ in range(5000):
        lines = [rng.choice(["", "a", "\n", "b\n", "\n\n", "c\n\nd", "x"])
                 for _ in range(rng.randint(0, 6))]
        assert _joined(list(lines)) == "\n".join(lines).rstrip("\n") + "\n", lines
