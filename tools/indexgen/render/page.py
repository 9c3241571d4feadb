"""What both pages of a source file share: section names, counting words and :class:`Page`."""

from __future__ import annotations

import posixpath
from functools import cached_property

from indexgen.analyze import patterns
from indexgen.analyze.context import FileContext
from indexgen.analyze.exports import imported_names, public_names, served_only, unbound_exports
from indexgen.extract.model import (
    STATUS_OK,
    Call,
    Definition,
    FileSummary,
    Finding,
    definition_anchors,
)
from indexgen.extract.needed import typed_local
from indexgen.layout import Layout
from indexgen.paths import relpath
from indexgen.render.docrender import render_doc
from indexgen.render.markdown import code, heading_anchor, link
from indexgen.render.rst import Linker

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
SHORT_SECTIONS = tuple(t for t in SECTIONS if t not in (
    "Detailed Analysis", "Architecture & Design", "Code Patterns & Idioms",
    "Performance Considerations", "Security & Safety"))
"""The sections of the page of a file with nothing analyzed (empty, or its analysis failed):
those its context or its bytes still fill, never one that could only say "not analyzed"."""
SOURCE_ANCHOR = heading_anchor("Original Source")
MODULE_LEVEL = "module-level"
"""Anchor of the calls made at module level, in the Detailed Analysis section."""
CHECKING_NOTE = " (type checkers only: under `if TYPE_CHECKING:`)"
"""What follows a public name the module binds only for type checkers
(:attr:`~indexgen.extract.model.FileSummary.type_checking`)."""
CATEGORY_TITLES = {"stdlib": "Standard library", "third-party": "Third party",
                   "project": "This project"}
KIND_PLURAL = {"class": "classes", "function": "functions", "method": "methods",
               "property": "properties", "classmethod": "class methods",
               "staticmethod": "static methods"}


#: Docstrings rendered ahead (:func:`docs_ahead`): position of the definition (-1: the
#: module) -> (Markdown lines, the names looked up in the global pass's links).
DocsAhead = dict[int, tuple[list[str], list[tuple[str, str]]]]


def doc_scope(d: Definition) -> str:
    """Where the cross-references of a definition's docstring are looked up first: a class's
    own members, else those of the class (or nothing) around it."""
    return d.qualname if d.kind == "class" else d.parent


def docs_ahead(page: Page) -> DocsAhead:
    """Every docstring of a file rendered on a page without context (``page``: one made with
    an empty :class:`~indexgen.analyze.context.FileContext`; see :meth:`Page.doc_lines`,
    which decides whether the render may use each)."""
    summary = page.s
    found: DocsAhead = {}
    docs = [summary.doc, *(d.doc for d in summary.definitions)]
    for position, doc in enumerate(docs, start=-1):
        asked: list[tuple[str, str]] = []
        found[position] = (page._render_doc(position, asked) if doc else [], asked)
    return found


def count(n: int, word: str, plural: str | None = None) -> str:
    """``1 class`` / ``2 classes``: a number with its noun in the right form."""
    return f"{n} {word if n == 1 else (plural or word + 's')}"


def lines_link(start: int, end: int) -> str:
    """A link labelled ``line N`` or ``lines N–M`` to the first line's anchor on this page."""
    if start == end:
        return f"[line {start}](#L{start})"
    return f"[lines {start}–{end}](#L{start})"


def line_links(lines: list[int], target: str = "") -> str:
    """``line 4`` / ``lines 4, 9, 12`` with each number linking to its source line, on this
    page or on the page ``target`` (already a :func:`~indexgen.render.markdown.link_target`:
    the callers that name another page make it once for all its links; "#L<n>" needs no
    escaping)."""
    if len(lines) == 1:  # most calls and call sites: one line
        return f"[line {lines[0]}]({target}#L{lines[0]})"
    lines = sorted(set(lines))
    if len(lines) == 1:
        return f"[line {lines[0]}]({target}#L{lines[0]})"
    return "lines " + ", ".join([f"[{n}]({target}#L{n})" for n in lines])


class Page:
    """Paths, links and lookups shared by both pages of one file."""

    def __init__(self, s: FileSummary, ctx: FileContext, layout: Layout, tests_label: str):
        self.s, self.ctx, self.layout, self.tests_label = s, ctx, layout, tests_label
        self.key = s.key
        self._docs_paths: dict[str, str] = {}  # file key -> relative path of its analysis page
        self._displays: dict[str, str] = {}
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
        self.anchors = definition_anchors(s.definitions)
        # Calls on local values the global pass was not given (see typed_local).
        self.local_calls: dict[str, list[Call]] = {}
        names = {d.anchor: d.names for d in s.definitions if d.names}
        for c in [c for c in s.calls if c.local]:
            if c.text[0] not in "&^" and not typed_local(c, names):
                self.local_calls.setdefault(c.caller, []).append(c)
        for a in s.attributes:
            self.anchors.setdefault(a.name, a.anchor)
        # Link texts of callees and callers (without their lines) and of the names of types,
        # made once per page: see indexgen.render.calls.format_calls, callee_link and
        # format_callers, and indexgen.render.entries (the "Types" bullet).
        self.type_links: dict[str, str] = {}
        self.callee_heads: dict[tuple[str, str, str, str], str] = {}
        self.callee_links: dict[tuple[str, str, str], str] = {}
        self.caller_heads: dict[tuple[str, str, str], tuple[str, str]] = {}
        # Parts of the pages made ahead of the render (:func:`indexgen.run.jobs.prepare`), if any.
        self.listing: list[str] | None = None
        self.identifier_lines: list[str] | None = None
        self.docs_ahead: DocsAhead | None = None
        #: Each definition's context-free head (:func:`indexgen.render.entries.heads_ahead`),
        #: when made ahead.
        self.heads_ahead: list | None = None
        #: The keyword page up to its imports (:func:`indexgen.render.keywords.keywords_head`).
        self.keywords_head: list[str] | None = None
        #: Whole sections of the analysis page that no context changes, by title
        #: (:func:`indexgen.render.docs.sections_ahead`).
        self.sections_ahead: dict[str, list[str]] | None = None
        self._linker: Linker | None = None  # linker() of the module scope, made once

    def set_context(self, ctx: FileContext) -> None:
        """Give a page made ahead of the global pass (with an empty context) its file's
        context, so that the render reuses it and what was made ahead on it.

        What the constructor made depends on the summary and the layout alone; the caches
        the render fills (link texts of types, of callees, some with their conditions, and of
        callers; the module-scope linker) are emptied, so that nothing made under the empty context
        is reused.
        """
        self.ctx = ctx
        self.type_links.clear()
        self.callee_heads.clear()
        self.callee_links.clear()
        self.caller_heads.clear()
        self._linker = None

    @cached_property
    def patterns(self) -> list[tuple[str, list[tuple[str, int]]]]:
        """The file's recognized patterns (:func:`indexgen.analyze.patterns.detect`), found once for
        both pages."""
        return patterns.detect(self.s)

    def findings(self) -> list[Finding]:
        """The file's findings, but for the calls of the project's own definitions that a
        rule found by their name alone (:attr:`FileContext.unfounded`)."""
        if not self.ctx.unfounded:
            return self.s.findings
        gone = set(self.ctx.unfounded)
        return [f for f in self.s.findings if (f.lineno, f.text) not in gone]

    def docs_link(self, key: str, anchor_id: str = "") -> str:
        """Relative link from this page to another file's analysis page (and anchor)."""
        if key == self.key:
            return f"#{anchor_id}" if anchor_id else self.docs_name
        target = self._docs_paths.get(key)
        if target is None:  # a page links to the same few files many times
            target = self._docs_paths[key] = relpath(self.layout.docs_page(key), self.dir)
        return f"{target}#{anchor_id}" if anchor_id else target

    def display(self, key: str) -> str:
        """A file's path as shown on pages (:meth:`indexgen.layout.Layout.display`, kept)."""
        found = self._displays.get(key)
        if found is None:
            found = self._displays[key] = self.layout.display(key)
        return found

    def file_label(self, key: str) -> str:
        """A file as shown in link labels: its display path in a code span."""
        return code(self.display(key))

    def base(self, expr: str) -> str:
        """A base class expression, linked to its definition when it is a project class."""
        if expr in self.local_classes:
            return link(code(expr), f"#{self.anchors[expr]}")
        if expr in self.ctx.base_links:
            key, anchor_id = self.ctx.base_links[expr]
            return link(code(expr), self.docs_link(key, anchor_id))
        return code(expr)

    def doc_lines(self, position: int) -> list[str]:
        """A docstring rendered to Markdown (:func:`indexgen.render.docrender.render_doc`): that of
        the definition at ``position`` in the summary, or the module's (position -1).

        A worker renders every docstring ahead, on a page with an empty context
        (:func:`indexgen.run.jobs.prepare`), noting the names its links looked up in the global
        pass's links; that text is used when none of those names is linked in the real
        context either (the render would then be the same), else the docstring is rendered
        again.
        """
        ahead = self.docs_ahead.get(position) if self.docs_ahead else None
        if ahead is not None:
            lines, asked = ahead
            links = self.ctx.links
            if not any(links.get(target) or links.get(bare) for target, bare in asked):
                return lines
        return self._render_doc(position)

    def _render_doc(self, position: int, asked: list[tuple[str, str]] | None = None
                   ) -> list[str]:
        """Render the docstring at ``position`` (as :meth:`doc_lines`) with this page's
        links; ``asked`` as for :meth:`linker`."""
        if position < 0:
            return render_doc(self.s.doc, self.linker("", asked))
        d = self.s.definitions[position]
        return render_doc(d.doc, self.linker(doc_scope(d), asked))

    @property
    def sections(self) -> tuple[str, ...]:
        """The analysis page's sections: :data:`SECTIONS`, or :data:`SHORT_SECTIONS` for a
        file with nothing analyzed."""
        return SECTIONS if self.s.status == STATUS_OK else SHORT_SECTIONS

    @cached_property
    def public_api(self) -> list[str]:
        """:func:`public_names` of the file, which its package's folder page lists too (both
        pages show it, the analysis page twice: found once)."""
        return public_names(self.s, self.ctx.star)

    @cached_property
    def unbound_exports(self) -> list[str]:
        """:func:`unbound_exports` of the file (the global pass linked its submodules)."""
        return unbound_exports(self.s, self.ctx.links)

    @cached_property
    def served_only(self) -> list[str]:
        """:func:`served_only` of the file: the names only its ``__getattr__`` answers for."""
        return served_only(self.s, self.ctx.links)

    @cached_property
    def imported(self) -> set[str]:
        """The names the module's own imports bind (``*`` for a ``*`` import)."""
        return imported_names(self.s)

    @cached_property
    def by_anchor(self) -> dict[str, Definition]:
        """The file's definitions by anchor."""
        return {d.anchor: d for d in self.s.definitions}

    @cached_property
    def import_bound(self) -> set[str]:
        """The names the file's imports bind in any scope (``from m import f as g`` in a
        function: ``g``), unlike :attr:`imported`, the module's own."""
        return {i.bound_name for i in self.s.imports}

    def anchor_of(self, name: str) -> str:
        """Anchor a reference to ``name`` lands on (the implementation of an overloaded
        function, else the first definition, else the attribute); '' if none."""
        return self.anchors.get(name, "")

    def linker(self, scope: str = "", asked: list[tuple[str, str]] | None = None) -> Linker:
        """Resolve cross-reference targets written in a docstring of ``scope`` (a qualname).

        Tried in order: the scope's own members (``:meth:`.reset``` in a class), then the
        enclosing classes', names of this file (with or without the module prefix), then
        what the global pass linked for this file (imports, re-exports, absolute paths).
        ``asked`` collects the names looked up in the global pass's links (see
        :meth:`doc_lines`).
        """
        if not scope and asked is None:  # the type links of every entry: one linker a page
            if self._linker is None:
                self._linker = self._make_linker("", None)
            return self._linker
        return self._make_linker(scope, asked)

    def _make_linker(self, scope: str, asked: list[tuple[str, str]] | None) -> Linker:
        module = self.s.module

        def resolve(role: str, target: str) -> str | None:
            bare = target.lstrip(".")
            candidates = []
            prefix = scope
            while prefix:
                candidates.append(f"{prefix}.{bare}")
                prefix = prefix.rpartition(".")[0]
            candidates.append(bare)
            if bare.startswith(module + "."):
                candidates.append(bare[len(module) + 1:])
            for name in candidates:
                if name in self.anchors:
                    return f"#{self.anchors[name]}"
            if role == "mod" and bare == module:
                return self.docs_name
            if asked is not None:
                asked.append((target, bare))
            found = self.ctx.links.get(target) or self.ctx.links.get(bare)
            if found:
                return self.docs_link(*found)
            return None

        return resolve
