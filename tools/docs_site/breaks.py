"""Line-break opportunities inside code in tables, so columns wrap where a reader expects.

A table must fit the article column. Its cells wrap at spaces, but an identifier such as
``stage3_max_live_parameters`` has none, and the browser then breaks it wherever the
column ends (``stage3_max_live_p`` / ``arameters``). :func:`add_code_breaks` puts an
invisible ``<wbr>`` after each ``_``, ``.``, ``/``, ``,`` and ``(`` between two word
characters of inline code inside ``<table>`` elements: the browser breaks there first,
and copying or searching the text is unchanged (``<wbr>`` holds no character). The
MkDocs hook applies it to every page.
"""

from __future__ import annotations

import re

__all__ = ["add_code_breaks"]

_TABLE = re.compile(r"<table\b.*?</table>", re.S)
_CODE = re.compile(r"(<code\b[^>]*>)(.*?)(</code>)", re.S)
_TAG = re.compile(r"(<[^>]+>)")
#: A separator between two pieces of an identifier: break after the separator.
_BREAK_AFTER = re.compile(r"(?<=\w)([_./,(])(?=\w)")


def _in_text(fragment: str) -> str:
    """Add the breaks in the text between tags, never inside a tag or an entity."""
    parts = _TAG.split(fragment)
    return "".join(part if part.startswith("<") else _BREAK_AFTER.sub(r"\1<wbr>", part)
                   for part in parts)


def add_code_breaks(html: str) -> str:
    """``html`` with ``<wbr>`` after separators of inline code inside tables.

    Args:
        html: a rendered page (or any HTML fragment).

    Returns:
        The same HTML; only the text of ``<code>`` elements inside ``<table>`` changes.
    """
    def table(match: re.Match[str]) -> str:
        return _CODE.sub(lambda m: m.group(1) + _in_text(m.group(2)) + m.group(3),
                         match.group(0))

    return _TABLE.sub(table, html)
