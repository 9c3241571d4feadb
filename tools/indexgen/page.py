"""What both pages of a source file share: section names, counting words and :class:`Page`."""

from __future__ import annotations

import posixpath

from indexgen.layout import Layout
from indexgen.markdown import code, heading_anchor, link
from indexgen.model import FileContext, FileSummary
from indexgen.paths import relpath

SECTIONS = (
    "File Metadata",
    "Original Source",
    "High-Level Overview",
    "Detailed Analysis",
    "Architecture & Design",
    "Dependencies",
    "Code Patterns & Idioms",
    "Performance Considerations",
    "Security & Safety",
    "Testing & Usage",
    "Related Files",
    "Cross-References",
)
"""Sections of the analysis page, in order: the layout of the seed pages."""
SOURCE_ANCHOR = heading_anchor("Original Source")
CATEGORY_TITLES = {"stdlib": "Standard library", "third-party": "Third party",
                    "project": "This project"}
KIND_PLURAL = {"class": "classes", "function": "functions", "method": "methods",
                "property": "properties", "classmethod": "class methods",
                "staticmethod": "static methods"}


def count(n: int, word: str, plural: str | None = None) -> str:
    """``1 class`` / ``2 classes``: a number with its noun in the right form."""
    return f"{n} {word if n == 1 else (plural or word + 's')}"


def lines_link(start: int, end: int, docs: str = "") -> str:
    """A link labelled ``line N`` or ``lines N–M`` to the first line's anchor."""
    label = f"line {start}" if start == end else f"lines {start}–{end}"
    return link(label, f"{docs}#L{start}")


class Page:
    """Paths, links and lookups shared by both pages of one file."""

    def __init__(self, s: FileSummary, ctx: FileContext, layout: Layout, tests_label: str):
        self.s, self.ctx, self.layout, self.tests_label = s, ctx, layout, tests_label
        self.kw_page = layout.kw_page(s.key)
        self.docs_page = layout.docs_page(s.key)
        self.dir = posixpath.dirname(self.docs_page)
        self.docs_name = posixpath.basename(self.docs_page)
        self.kw_name = posixpath.basename(self.kw_page)
        self.folder = posixpath.dirname(s.relpath)
        self.index = relpath(layout.folder_index(s.root, self.folder), self.dir)
        self.doc = relpath(layout.folder_doc(s.root, self.folder), self.dir)
        self.classes = [d for d in s.definitions if d.kind == "class"]
        self.funcs = [d for d in s.definitions if d.kind != "class"]
        self.local_classes = {d.qualname: d for d in self.classes}
        self.anchors: dict[str, str] = {}
        for a in s.attributes:
            self.anchors.setdefault(a.name, a.anchor)
        for d in reversed(s.definitions):
            self.anchors[d.qualname] = d.anchor

    def docs_link(self, key: str, anchor_id: str = "") -> str:
        """Relative link from this page to another file's analysis page (and anchor)."""
        target = relpath(self.layout.docs_page(key), self.dir)
        return target + (f"#{anchor_id}" if anchor_id else "")

    def file_label(self, key: str) -> str:
        """A file as shown in link labels: its display path in a code span."""
        return code(self.layout.display(key))

    def base(self, expr: str) -> str:
        """A base class expression, linked to its definition when it is a project class."""
        if expr in self.local_classes:
            return link(code(expr), f"#{self.local_classes[expr].anchor}")
        if expr in self.ctx.base_links:
            key, anchor_id = self.ctx.base_links[expr]
            return link(code(expr), self.docs_link(key, anchor_id))
        return code(expr)

    def public_api(self) -> list[str]:
        """``__all__`` if the file defines it, else its top-level names without underscore."""
        if self.s.exports is not None:
            return list(self.s.exports)
        names = [d.qualname for d in self.s.definitions if not d.parent]
        names += [a.name for a in self.s.attributes]
        return sorted({n for n in names if not n.startswith("_")})

    def anchor_of(self, name: str) -> str:
        """Anchor of the first definition (or else attribute) called ``name``; '' if none."""
        return self.anchors.get(name, "")


