"""Parsed docstrings (:class:`~indexgen.extract.docstrings.DocSection`) as Markdown blocks.

Text and example sections go through :func:`indexgen.render.rst.to_markdown`; parameter, return,
raise and attribute sections become bold-titled lists (``name`` (type, default): description),
which wrap in a narrow column where a table would not; admonitions (``Note:``) become labelled
paragraphs.  Names in types and cross-reference roles link to their definitions through the
page's :data:`~indexgen.render.rst.Linker`.
"""

from __future__ import annotations

import functools
import re

from indexgen.extract.docstrings import DocItem, DocSection
from indexgen.render.markdown import code, escape_inline
from indexgen.render.rst import Linker, inline, role, to_markdown

_TITLES = {"parameters": "Parameters", "other parameters": "Other parameters",
           "type parameters": "Type parameters", "returns": "Returns", "yields": "Yields",
           "receives": "Receives", "raises": "Raises", "warns": "Warns",
           "attributes": "Attributes", "functions": "Functions", "classes": "Classes",
           "modules": "Modules", "type aliases": "Type aliases", "examples": "Examples"}
_DOTTED = re.compile(r"^[A-Za-z_][\w.]*$")


def render_doc(sections: list[DocSection], linker: Linker) -> list[str]:
    """Markdown blocks of a whole docstring (empty list for none)."""
    blocks: list[str] = []
    for section in sections:
        kind = section.kind
        if kind == "text":
            blocks += to_markdown(section.text, linker)
        elif kind == "examples":
            blocks.append(f"**{section.title or 'Examples'}**")
            blocks += to_markdown(section.text, linker)
        elif kind == "admonition":
            body = to_markdown(section.text, linker)
            label = f"**{escape_inline(section.title or 'Note')}**"
            if body and not body[0].startswith(("<pre", "- ")):
                blocks.append(f"{label}: {body[0]}")
                blocks += body[1:]
            else:
                blocks += [label, *body]
        elif kind == "deprecated":
            version = f" {escape_inline(section.title)}" if section.title else ""
            body = to_markdown(section.text, linker)
            blocks.append(f"**Deprecated{version}**" + (f": {body[0]}" if body else ""))
            blocks += body[1:]
        elif section.items:
            blocks += _item_list(section, linker)
        elif section.text:
            blocks += to_markdown(section.text, linker)
    return blocks


def annotation(text: str, linker: Linker) -> str:
    """A type as a code span, linked when it is a single name with a known definition; a
    type written as a role (``:class:`~pkg.Name```) or with Sphinx's ``~`` (``~pkg.Name``:
    shown ``Name``) reads as the role does in prose."""
    text = " ".join(text.split())
    if _DOTTED.match(text.lstrip("~")):
        return role("class", text, linker)
    if "`" in text:
        return inline(text, linker, line_start=False)
    return code(text)


def _item_list(section: DocSection, linker: Linker) -> list[str]:
    lines = []
    after: list[str] = []
    for item in section.items:
        head = _item_head(section.kind, item, linker)
        body = to_markdown(item.description, linker) if item.description.strip() else []
        if body and not body[0].startswith(("<pre", "- ", "**")):
            head = f"{head}: {body[0]}" if head else body[0]
            body = body[1:]
        lines.append(f"- {head or 'no description'}")
        after += body  # further paragraphs or code of an entry follow the list
    title = section.title or _TITLES.get(section.kind, section.kind.capitalize())
    return [f"**{escape_inline(title)}**", "\n".join(lines), *after]


def _item_head(kind: str, item: DocItem, linker: Linker) -> str:
    if kind in ("raises", "warns"):
        return annotation(item.annotation or item.name, linker)
    facts = []
    if item.annotation:
        facts.append(annotation(item.annotation, linker))
    if item.default:
        facts.append("default " + code(item.default))
    if item.name:
        return code(item.name) + (f" ({', '.join(facts)})" if facts else "")
    return ", ".join(facts)


def summary_markdown(text: str, linker: Linker | None = None) -> str:
    """One docstring paragraph as one Markdown line (for lists of files and names); roles
    become code spans unless a linker knows their targets."""
    if linker is None:
        return _unlinked_summary(text)
    return inline(text, linker, line_start=False)


@functools.lru_cache(maxsize=4096)  # a process renders the same files' summaries on many pages
def _unlinked_summary(text: str) -> str:
    return inline(text, _no_links, line_start=False)


def _no_links(role: str, target: str) -> None:
    return None
