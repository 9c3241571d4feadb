"""Stage 3a: render the analysis page (``name.py_docs.md``) of one source file.

:func:`render_docs` is a pure function of a full :class:`~indexgen.extract.model.FileSummary`, its
:class:`~indexgen.analyze.context.FileContext` and the :class:`~indexgen.layout.Layout`; every
sentence it writes is derived from those.  The sections follow the seed pages' order; the
source is folded (``<details>``) so that a reader meets the overview first, and a section with
nothing to say says so in one short line.  This module writes the first sections (metadata,
source, overview, architecture), :mod:`indexgen.render.entries` the definitions and
:mod:`indexgen.render.sections` the others.
"""

from __future__ import annotations

import html
from itertools import chain, repeat

from indexgen.analyze.context import FileContext
from indexgen.analyze.exports import IMPLICIT
from indexgen.extract.model import STATUS_EMPTY, STATUS_OK, Definition, FileSummary
from indexgen.layout import Layout
from indexgen.render.entries import blank_joined, detailed
from indexgen.render.keywords import render_keywords
from indexgen.render.markdown import MARKER, code, escape_text, link
from indexgen.render.page import CHECKING_NOTE, KIND_PLURAL, SECTIONS, Page, count
from indexgen.render.sections import SECTION_RENDERERS, not_analyzed

__all__ = ["SECTIONS", "render_docs", "render_keywords"]


def render_docs(
    s: FileSummary, ctx: FileContext, layout: Layout, tests_label: str, source: str | None,
    page: Page | None = None,
) -> str:
    """Render the analysis page of one file.

    Args:
        s: Full summary of the file.
        ctx: Its global context.
        layout: Page paths of this build.
        tests_label: How the configured test folders are named on pages.
        source: Decoded source text to embed, or None when it is not embedded (see status).
        page: The file's :class:`~indexgen.render.page.Page` when the caller renders both pages
            with one (made here otherwise).

    Returns:
        The page text, starting with :data:`~indexgen.render.markdown.MARKER`.
    """
    p = page or Page(s, ctx, layout, tests_label)
    out = [MARKER, f"# Documentation: {code(p.display(s.key))}", ""]
    ahead = p.sections_ahead or {}
    for title in p.sections:
        out += [f"## {title}", ""]
        if title in ahead:
            out += ahead[title]
        else:
            _SECTION_RENDERERS[title](p, out, source)
        out.append("")
    return _joined(out)


def _joined(lines: list[str]) -> str:
    """``lines`` as one text ending in one newline (``"\\n".join(lines).rstrip("\\n") +
    "\\n"``, without copying the page twice more)."""
    while lines and not lines[-1]:
        lines.pop()
    if not lines:
        return "\n"
    if lines[-1].endswith("\n"):
        lines[-1] = lines[-1].rstrip("\n")
        return _joined(lines)  # what remains may end in empty lines again
    lines.append("")
    return "\n".join(lines)


CONTEXT_FREE = ("File Metadata", "Original Source", "Code Patterns & Idioms")
"""The sections of the analysis page that say nothing of the file's context."""


def sections_ahead(p: Page) -> dict[str, list[str]]:
    """The lines of each :data:`CONTEXT_FREE` section of a page whose source listing is made
    (:attr:`~indexgen.render.page.Page.listing`): :func:`indexgen.run.jobs.prepare` makes them
    ahead of the global pass."""
    found: dict[str, list[str]] = {}
    for title in CONTEXT_FREE:
        found[title] = []
        _SECTION_RENDERERS[title](p, found[title], None)
    return found


def _metadata(p: Page, out: list[str], source: str | None) -> None:
    s = p.s
    out.append(f"- **Path**: {code(p.layout.display(s.key))}")
    out.append(f"- **Module**: {code(s.module)}" + (" (package `__init__`)" if s.is_package else ""))
    out.append(f"- **Size**: {s.size:,} bytes, {count(s.n_lines, 'line')}")
    out.append(f"- **SHA-256**: {code(s.sha256)}")
    if s.status == STATUS_OK:
        out.append(f"- **Encoding**: {code(s.encoding)}")
    out.append(f"- **Status**: {code(s.status)}"
               + (f": {escape_text(s.error, line_start=False)}" if s.error else ""))
    out.append(f"- **Keyword Index**: {link(code(p.kw_name), p.kw_name)}")


def _source(p: Page, out: list[str], source: str | None) -> None:
    s = p.s
    if source is None and p.listing is None:
        if s.status == STATUS_EMPTY:
            out.append("The file is empty; there is no source to show.")
        else:
            out.append(f"Source not embedded: {escape_text(s.error, line_start=False)}.")
        return
    if s.status != STATUS_OK:
        out += [f"The source is embedded as text; it was not analyzed: "
                f"{escape_text(s.error, line_start=False)}.", ""]
    out += p.listing if p.listing is not None else source_listing(source)


_OPENINGS: dict[int, list[str]] = {}  # number width -> '<span id="L1">  1  ', ... (see below)


def source_listing(source: str) -> list[str]:
    """The lines of the folded, line-numbered source listing (no context needed:
    :func:`indexgen.run.jobs.prepare` makes them ahead)."""
    escaped = html.escape(source, quote=False).split("\n")
    n_lines = len(escaped) - 1 if escaped[-1] == "" else len(escaped)
    # One line: <span id="L42"> 42  text</span>, numbers right-aligned; the line openings are
    # made once per number width and interleaved with the text in one join (this listing is
    # a tenth of the render's time).
    width = len(str(n_lines))
    openings = _OPENINGS.get(width, [])
    if len(openings) < n_lines:
        openings = _OPENINGS[width] = [f'<span id="L{n}">{str(n).rjust(width)}  '
                                       for n in range(1, max(n_lines, 2 * len(openings)) + 1)]
    body = "".join(chain.from_iterable(zip(openings[:n_lines], escaped,
                                           repeat("</span>\n"))))[:-1]
    # Folded, so that the overview comes first; a link to a line (#L42) opens it.
    return [f'<details class="indexgen-source"><summary>Show the source '
            f'({count(n_lines, "line")})</summary>',
            f'<pre class="indexgen-source"><code>{body}</code></pre>',
            "</details>"]


def _overview(p: Page, out: list[str], source: str | None) -> None:
    s = p.s
    if s.status == STATUS_EMPTY:
        out.append(f"The file is empty ({count(s.size, 'byte')}): it defines, imports and "
                   "calls nothing.")
        return
    if s.status != STATUS_OK:
        out.append(not_analyzed(s))
        return
    doc = p.doc_lines(-1)
    if doc:
        out += [*blank_joined(doc), ""]
    else:
        out += [f"{code(s.relpath.rpartition('/')[2])} has no module docstring.", ""]
    kinds: dict[str, int] = {}
    for d in s.definitions:
        if not d.overload:
            kinds[d.kind] = kinds.get(d.kind, 0) + 1
    parts = [count(kinds[k], k, KIND_PLURAL[k]) for k in KIND_PLURAL if k in kinds]
    if s.attributes:
        parts.append(count(len(s.attributes), "module attribute"))
    stubs = sum(d.overload for d in s.definitions)
    if stubs:
        parts.append(count(stubs, "overload stub"))
    out.append(f"It defines {', '.join(parts)}." if parts else "It defines no classes, functions "
               "or module attributes.")
    out.append("")
    api = p.public_api
    origin = "`__all__`" if s.exports is not None else "names without a leading underscore" + (
        "; its `__all__` is computed, not read" if s.all_computed else "")
    if api:
        items = []
        unbound = p.unbound_exports
        for name in api:
            a, sub = p.anchor_of(name), p.ctx.links.get(name, ("", "x"))
            item = link(code(name), f"#{a}") if a else (
                link(code(name), p.docs_link(sub[0])) + " (submodule)" if not sub[1] else
                code(name) + (" (not bound here)" if name in unbound else " (set for every "
                              "module)" if name in IMPLICIT and name not in p.imported else
                              " (re-exported)"))
            items.append(item + (CHECKING_NOTE if name in s.type_checking else ""))
        out.append(f"Public API ({origin}): " + ", ".join(items) + ".")
        if unbound:
            out += ["", _unbound_note(p, unbound)]
    else:
        out.append(f"Public API ({origin}): none.")
    served = [n for n in p.served_only if n not in p.unbound_exports]
    if served:
        getattr_ = link(code("__getattr__"), f"#{p.anchor_of('__getattr__')}")
        out += ["", f"Served by the module's {getattr_} alone (PEP 562; no statement binds "
                    f"{'it' if len(served) == 1 else 'them'}): "
                    + ", ".join(code(n) for n in served) + "."]


def _unbound_note(p: Page, names: list[str]) -> str:
    """What the names of ``__all__`` that nothing here binds are (attrs' ``__author__``):
    those the module's ``__getattr__`` compares its name with, then the others."""
    served = [n for n in names if n in p.served_only]
    rest = [n for n in names if n not in p.served_only]
    notes = [_listed(served, "the module's `__getattr__` serves {them}")] if served else []
    if not rest:
        return " ".join(notes)
    if "__getattr__" in p.anchors or "__getattr__" in p.imported:
        why = "the module's `__getattr__` answers for {them} (it may supply or refuse {them})"
    elif any(c.text == "globals" for c in p.s.calls):
        why = "the module binds names through `globals()`, which may make {them}"
    else:
        why = f"importing {{them}} fails, `from {p.s.module} import *` too"
    return " ".join([*notes, _listed(rest, why)])


def _listed(names: list[str], why: str) -> str:
    one = len(names) == 1
    return (f"{', '.join(code(n) for n in names)} {'is' if one else 'are'} listed in "
            f"`__all__` but bound by no statement here: "
            f"{why.format(them='it' if one else 'them')}.")


def _architecture(p: Page, out: list[str], source: str | None) -> None:
    s = p.s
    if s.status != STATUS_OK:
        out.append(not_analyzed(s))
        return
    if p.classes:
        out += ["### Class hierarchy", ""]
        children: dict[str, list[Definition]] = {}
        roots = []
        for c in p.classes:
            local = [b for b in c.bases if b in p.local_classes and b != c.qualname]
            if local:
                children.setdefault(local[0], []).append(c)
            else:
                roots.append(c)

        def emit(c: Definition, depth: int) -> None:
            bases = ", ".join(p.base(b) for b in c.bases) if c.bases else "no explicit base"
            out.append(f"{'  ' * depth}- {link(code(c.qualname), '#' + c.anchor)} "
                       f"(bases: {bases})")
            for child in children.get(c.qualname, []):
                emit(child, depth + 1)

        for c in roots:
            emit(c, 0)
        out.append("")
    top = [d for d in s.definitions if not d.parent and d.kind != "class" and not d.overload]
    members = [d for d in s.definitions if d.parent and d.kind != "class" and not d.overload]
    parts = []
    if p.classes:
        parts.append(f"{count(len(p.classes), 'class', 'classes')} with "
                     f"{count(len(members), 'member function')}")
    parts.append(count(len(top), "module-level function"))
    out.append("Structure: " + " and ".join(parts) + ".")


_RENDERERS = {
    "File Metadata": _metadata,
    "Original Source": _source,
    "High-Level Overview": _overview,
    "Detailed Analysis": detailed,
    "Architecture & Design": _architecture,
}
_SECTION_RENDERERS = {**_RENDERERS, **SECTION_RENDERERS}
