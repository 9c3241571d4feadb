"""Stage 3a: render the two pages of one source file.

:func:`render_keywords` writes the keyword index (``name.py_kw.md``) and :func:`render_docs` the
analysis page (``name.py_docs.md``).  Both are pure functions of a full
:class:`~indexgen.model.FileSummary`, its :class:`~indexgen.model.FileContext` and the
:class:`~indexgen.layout.Layout`; every sentence they write is derived from those.
"""

from __future__ import annotations

import posixpath

from indexgen import patterns, rules
from indexgen.layout import Layout
from indexgen.markdown import (
    MARKER,
    anchor,
    code,
    escape_html,
    escape_text,
    heading_anchor,
    link,
    relpath,
)
from indexgen.model import STATUS_EMPTY, STATUS_OK, Definition, FileContext, FileSummary

#: Sections of the analysis page, in order (the seeds' layout).
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
SOURCE_ANCHOR = heading_anchor("Original Source")
_CATEGORY_TITLES = {"stdlib": "Standard library", "third-party": "Third party",
                    "project": "This project"}
_KIND_PLURAL = {"class": "classes", "function": "functions", "method": "methods",
                "property": "properties", "classmethod": "class methods",
                "staticmethod": "static methods"}


def _count(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural or word + 's')}"


def _lines_link(start: int, end: int, docs: str = "") -> str:
    label = f"line {start}" if start == end else f"lines {start}–{end}"
    return link(label, f"{docs}#L{start}")


class _Page:
    """Helpers shared by both pages of one file."""

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


# --------------------------------------------------------------------------------------------
# keyword index page
# --------------------------------------------------------------------------------------------
def render_keywords(s: FileSummary, ctx: FileContext, layout: Layout, tests_label: str) -> str:
    """Render the keyword index page of one file.

    Args:
        s: Full summary of the file.
        ctx: Its global context.
        layout: Page paths of this build.
        tests_label: How the configured test folders are named on pages (e.g. ``tests``).

    Returns:
        The page text, starting with :data:`~indexgen.markdown.MARKER`.
    """
    p = _Page(s, ctx, layout, tests_label)
    docs = p.docs_name
    out = [MARKER, f"# Keyword Index: {code(p.layout.display(s.key))}", "", "## File Information", ""]
    out.append(f"- **Original File**: {link(code(p.layout.display(s.key)), f'{docs}#{SOURCE_ANCHOR}')}"
               f" (embedded in the analysis page)")
    out.append(f"- **Documentation**: {link(code(docs), docs)}")
    out.append(f"- **Folder**: {link(code(posixpath.dirname(p.layout.display(s.key))), p.index)}")
    out.append(f"- **Module**: {code(s.module)}")
    out += ["", "## Keywords Extracted", ""]
    if s.status != STATUS_OK:
        out += [f"No keywords: {escape_text(s.error)}.", ""]
    else:
        out += [_keyword_counts(s), ""]
        _kw_section(out, "Classes", [
            (d.qualname, f"class, line {d.lineno}", f"{docs}#{d.anchor}") for d in p.classes
        ])
        _kw_section(out, "Functions", [
            (d.qualname, f"{d.kind}, line {d.lineno}", f"{docs}#{d.anchor}") for d in p.funcs
        ])
        consts = [a for a in s.attributes if a.constant]
        attrs = [a for a in s.attributes if not a.constant]
        _kw_section(out, "Constants", [
            (a.name, f"constant, line {a.lineno}", f"{docs}#{a.anchor}") for a in consts
        ])
        _kw_section(out, "Module Attributes", [
            (a.name, f"attribute, line {a.lineno}", f"{docs}#{a.anchor}") for a in attrs
        ])
        _kw_section(out, "Imports", [
            (_import_label(i), f"{_CATEGORY_TITLES[i.category].lower()}, line {i.lineno}",
             f"{docs}#L{i.lineno}") for i in s.imports
        ])
        _identifier_index(out, s, docs)
    out += ["## Keyword → Section Map", ""]
    out += _section_map(p)
    return "\n".join(out) + "\n"


def _keyword_counts(s: FileSummary) -> str:
    kinds: dict[str, int] = {}
    for d in s.definitions:
        kinds[d.kind] = kinds.get(d.kind, 0) + 1
    parts = [_count(kinds[k], k, _KIND_PLURAL[k]) for k in _KIND_PLURAL if k in kinds]
    parts.append(_count(len(s.attributes), "module attribute"))
    parts.append(_count(len(s.imports), "imported name"))
    parts.append(_count(len(s.identifiers), "distinct identifier"))
    return f"{code(s.relpath.rpartition('/')[2])} has " + ", ".join(parts) + "."


def _kw_section(out: list[str], title: str, entries: list[tuple[str, str, str]]) -> None:
    out += [f"### {title}", ""]
    if not entries:
        out += [f"No {title.lower()} in this file.", ""]
        return
    for name, label, target in sorted(entries, key=lambda e: (e[0], e[1])):
        out.append(f"- **{code(name)}**: {link(escape_text(label), target)}")
    out.append("")


def _import_label(i) -> str:
    base = i.written if i.name else i.module
    if i.name:
        text = f"{base}{'' if base.endswith('.') else '.'}{i.name}"
    else:
        text = base
    return f"{text} as {i.alias}" if i.alias else text


def _letter(name: str) -> str:
    ch = name[0]
    if ch == "_":
        return "_"
    if ch.isascii() and ch.isalpha():
        return ch.upper()
    return "Other"


def _identifier_index(out: list[str], s: FileSummary, docs: str) -> None:
    out += ["## Identifier Index (A–Z)", "",
            "Identifiers from the code's syntax tree (names, attributes, parameters, "
            "definitions, imports); comments and strings are not included.", ""]
    groups: dict[str, list[str]] = {}
    for name in s.identifiers:
        groups.setdefault(_letter(name), []).append(name)
    if not groups:
        out += ["No identifiers in this file.", ""]
        return
    order = sorted(groups, key=lambda g: (g == "Other", g == "_", g))
    out.append("Jump to: " + " · ".join(f"[{escape_text(g)}](#idx-{g.lower()})" for g in order))
    out.append("")
    for g in order:
        out += [anchor(f"idx-{g.lower()}"), "", f"### {escape_text(g)}", ""]
        for name in sorted(groups[g], key=lambda n: (n.lower(), n)):
            first, uses = s.identifiers[name]
            out.append(f"- {code(name)}: {_count(uses, 'occurrence')}, first at "
                       f"{link(f'line {first}', f'{docs}#L{first}')}")
        out.append("")


def _section_map(p: _Page) -> list[str]:
    s, docs = p.s, p.docs_name
    perf = [f for f in s.findings if f.category in rules.PERFORMANCE_CATEGORIES]
    sec = [f for f in s.findings if f.category in rules.SECURITY_CATEGORIES]
    found_patterns = patterns.detect(s)
    names = [d.qualname for d in s.definitions]
    shown = ", ".join(code(n) for n in names[:12]) + (f" and {len(names) - 12} more"
                                                      if len(names) > 12 else "")
    notes = {
        "File Metadata": f"path, module {code(s.module)}, size and line count",
        "Original Source": (f"all {_count(s.n_lines, 'line')}; keyword and identifier links "
                            "point at lines here") if s.status == STATUS_OK else
        escape_text(s.error),
        "High-Level Overview": "module docstring and public API"
        + (f" ({', '.join(code(n) for n in p.public_api()[:8])})" if p.public_api() else ""),
        "Detailed Analysis": (f"{shown}" if names else "no classes or functions"),
        "Architecture & Design": (f"class hierarchy of {_count(len(p.classes), 'class', 'classes')}"
                                  if p.classes else "no classes"),
        "Dependencies": f"{_count(len(s.imports), 'import')}; imported by "
        f"{_count(len(p.ctx.imported_by), 'project file')}",
        "Code Patterns & Idioms": ", ".join(escape_text(t) for t, _ in found_patterns)
        if found_patterns else "no patterns detected",
        "Performance Considerations": ", ".join(sorted({code(f.text) for f in perf}))
        if perf else "no collectives, stream/event operations, synchronizations or allocations",
        "Security & Safety": ", ".join(sorted({code(f.text) for f in sec}))
        if sec else "no eval/exec, unsafe deserialization, subprocess, file or network use",
        "Testing & Usage": f"{_count(len(p.ctx.tests), 'test file')} importing this module",
        "Related Files": f"{_count(len(p.ctx.siblings), 'other file')} in the same folder",
        "Cross-References": "keyword index, folder pages and names used elsewhere",
    }
    return [f"- **{link(escape_text(title), f'{docs}#{heading_anchor(title)}')}**: {notes[title]}"
            for title in SECTIONS] + [""]


# --------------------------------------------------------------------------------------------
# analysis page
# --------------------------------------------------------------------------------------------
def render_docs(
    s: FileSummary, ctx: FileContext, layout: Layout, tests_label: str, source: str | None
) -> str:
    """Render the analysis page of one file.

    Args:
        s: Full summary of the file.
        ctx: Its global context.
        layout: Page paths of this build.
        tests_label: How the configured test folders are named on pages.
        source: Decoded source text to embed, or None when it is not embedded (see status).

    Returns:
        The page text, starting with :data:`~indexgen.markdown.MARKER`.
    """
    p = _Page(s, ctx, layout, tests_label)
    out = [MARKER, f"# Documentation: {code(p.layout.display(s.key))}", ""]
    for title in SECTIONS:
        out += [anchor(heading_anchor(title)), "", f"## {title}", ""]
        _SECTION_RENDERERS[title](p, out, source)
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def _metadata(p: _Page, out: list[str], source: str | None) -> None:
    s = p.s
    out.append(f"- **Path**: {code(p.layout.display(s.key))}")
    out.append(f"- **Module**: {code(s.module)}" + (" (package `__init__`)" if s.is_package else ""))
    out.append(f"- **Size**: {s.size:,} bytes, {_count(s.n_lines, 'line')}")
    out.append(f"- **SHA-256**: {code(s.sha256)}")
    if s.status == STATUS_OK:
        out.append(f"- **Encoding**: {code(s.encoding)}")
    out.append(f"- **Status**: {code(s.status)}" + (f": {escape_text(s.error)}" if s.error else ""))
    out.append(f"- **Keyword Index**: {link(code(p.kw_name), p.kw_name)}")


def _source(p: _Page, out: list[str], source: str | None) -> None:
    s = p.s
    if source is None:
        if s.status == STATUS_EMPTY:
            out.append("The file is empty; there is no source to show.")
        else:
            out.append(f"Source not embedded: {escape_text(s.error)}.")
        return
    if s.status != STATUS_OK:
        out += [f"The source is embedded as text; {escape_text(s.error)}.", ""]
    lines = source.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    width = len(str(len(lines)))
    body = "\n".join(
        f'<span id="L{n}">{n:>{width}}  {text}</span>'
        for n, text in enumerate(escape_html(source).split("\n")[: len(lines)], 1)
    )
    out.append(f'<pre class="indexgen-source"><code>{body}</code></pre>')




def _docstring_block(doc: str) -> list[str]:
    # Raw HTML, not a fence: fenced text is still seen by preprocessors such as snippets.
    lines = escape_html(doc).split("\n")
    return ['<pre class="indexgen-docstring"><code>' + "\n".join(
        f"<span>{line}</span>" if line else "<span></span>" for line in lines) + "</code></pre>"]


def _overview(p: _Page, out: list[str], source: str | None) -> None:
    s = p.s
    if s.status != STATUS_OK:
        out.append(f"Not analyzed: {escape_text(s.error)}.")
        return
    if s.docstring:
        first, _, rest = s.docstring.strip().partition("\n\n")
        out += [escape_text(first), ""]
        if rest.strip():
            out += ["Full module docstring:", ""] + _docstring_block(s.docstring.strip()) + [""]
    else:
        out += [f"{code(s.relpath.rpartition('/')[2])} has no module docstring.", ""]
    kinds: dict[str, int] = {}
    for d in s.definitions:
        kinds[d.kind] = kinds.get(d.kind, 0) + 1
    parts = [_count(kinds[k], k, _KIND_PLURAL[k]) for k in _KIND_PLURAL if k in kinds]
    if s.attributes:
        parts.append(_count(len(s.attributes), "module attribute"))
    out.append(f"It defines {', '.join(parts)}." if parts else "It defines no classes, functions "
               "or module attributes.")
    out.append("")
    api = p.public_api()
    origin = "`__all__`" if s.exports is not None else "names without a leading underscore"
    if api:
        items = []
        for name in api:
            a = p.anchor_of(name)
            items.append(link(code(name), f"#{a}") if a else code(name) + " (re-exported)")
        out.append(f"Public API ({origin}): " + ", ".join(items) + ".")
    else:
        out.append(f"Public API ({origin}): none.")


def _detailed(p: _Page, out: list[str], source: str | None) -> None:
    s = p.s
    if s.status != STATUS_OK:
        out.append(f"Not analyzed: {escape_text(s.error)}.")
        return
    if not s.definitions and not s.attributes:
        out.append("No classes, functions or module attributes in this file.")
        return
    for d in s.definitions:
        out += _definition(d)
    if s.attributes:
        out += ["### Module attributes", ""]
        for a in s.attributes:
            text = a.name + (f": {a.annotation}" if a.annotation else "")
            text += f" = {a.value}" if a.value else ""
            kind = "constant" if a.constant else "attribute"
            out.append(f"- {anchor(a.anchor)}{code(text)} ({kind}, {link(f'line {a.lineno}', f'#L{a.lineno}')})")
        out.append("")


def _definition(d: Definition) -> list[str]:
    level = "###" if not d.parent else "####"
    if d.kind == "class":
        sig = f"class {d.qualname.rpartition('.')[2]}" + (f"({d.signature})" if d.signature else "")
    else:
        prefix = "async def " if "async" in d.labels else "def "
        sig = prefix + (d.signature or d.name)
    facts = [d.kind]
    facts.append(_lines_link(d.lineno, d.end_lineno))
    labels = [lab for lab in d.labels if lab not in ("async", d.kind)]
    if labels:
        facts.append("labels: " + ", ".join(code(lab) for lab in labels))
    if d.decorators:
        facts.append("decorators: " + ", ".join(code("@" + dec) for dec in d.decorators))
    lines = [anchor(d.anchor), "", f"{level} {code(d.qualname)}", "", code(sig), "",
             " · ".join(facts), ""]
    lines += [escape_text(d.summary) if d.summary else "No docstring.", ""]
    if d.attributes:
        lines += ["Attributes: " + ", ".join(
            f"{code(text)} ({link(f'line {line}', f'#L{line}')})" for text, line in d.attributes
        ) + ".", ""]
    return lines


def _architecture(p: _Page, out: list[str], source: str | None) -> None:
    s = p.s
    if s.status != STATUS_OK:
        out.append(f"Not analyzed: {escape_text(s.error)}.")
        return
    if not p.classes:
        out.append("No classes in this file, so no class hierarchy.")
    else:
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
    top = [d for d in s.definitions if not d.parent and d.kind != "class"]
    members = [d for d in s.definitions if d.parent and d.kind != "class"]
    parts = []
    if p.classes:
        parts.append(f"{_count(len(p.classes), 'class', 'classes')} with "
                     f"{_count(len(members), 'member function')}")
    parts.append(_count(len(top), "module-level function"))
    out.append("Structure: " + " and ".join(parts) + ".")


def _dependencies(p: _Page, out: list[str], source: str | None) -> None:
    s = p.s
    if s.status != STATUS_OK:
        out.append(f"Not analyzed: {escape_text(s.error)}.")
    else:
        for category in ("stdlib", "third-party", "project"):
            out += [f"### {_CATEGORY_TITLES[category]}", ""]
            groups: dict[str, list] = {}
            for imp in s.imports:
                if imp.category == category:
                    groups.setdefault(imp.written if imp.name else imp.module, []).append(imp)
            if not groups:
                out += [f"No {_CATEGORY_TITLES[category].lower()} imports.", ""]
                continue
            for mod in sorted(groups):
                imps = groups[mod]
                names = sorted({i.name + (f" as {i.alias}" if i.alias else "") for i in imps
                                if i.name})
                aliases = sorted({i.alias for i in imps if not i.name and i.alias})
                label = code(mod)
                target = next((i.target for i in imps if i.target), "")
                if target:
                    label = link(code(mod), p.docs_link(target))
                text = f"- {label}"
                if names:
                    text += ": " + ", ".join(code(n) for n in names)
                if aliases:
                    text += " as " + ", ".join(code(a) for a in aliases)
                lines = sorted({i.lineno for i in imps})
                text += " (" + ", ".join(link(f"line {n}", f"#L{n}") for n in lines) + ")"
                scopes = sorted({i.scope for i in imps} - {"module"})
                if scopes:
                    text += " — " + ", ".join(_SCOPE_NOTE[sc] for sc in scopes)
                out.append(text)
            out.append("")
    out += ["### Imported by", ""]
    if not p.ctx.imported_by:
        out.append(f"No file of this project imports {code(s.module)}.")
    for key in p.ctx.imported_by:
        names = p.ctx.imported_names.get(key) or []
        what = ("imports " + ", ".join(code(n) for n in names)) if names else "imports the module"
        out.append(f"- {link(p.file_label(key), p.docs_link(key))}: {what}")


_SCOPE_NOTE = {"type-checking": "only under `TYPE_CHECKING`",
               "function": "inside a function (lazy import)", "nested": "inside a class body"}


def _patterns(p: _Page, out: list[str], source: str | None) -> None:
    if p.s.status != STATUS_OK:
        out.append(f"Not analyzed: {escape_text(p.s.error)}.")
        return
    found = patterns.detect(p.s)
    if not found:
        out.append("No dataclasses, enums, context managers, hooks, properties, generators, "
                   "abstract classes or other recognized patterns in this file.")
        return
    for title, items in found:
        out.append(f"- **{escape_text(title)}**: " + ", ".join(
            f"{code(label)} ({link(f'line {line}', f'#L{line}')})" for label, line in items[:20])
            + (f" and {len(items) - 20} more" if len(items) > 20 else ""))


def _enclosing(s: FileSummary):
    defs = sorted(s.definitions, key=lambda d: (d.start_lineno, -d.end_lineno))

    def find(line: int) -> str:
        best = ""
        for d in defs:
            if d.start_lineno > line:
                break
            if d.end_lineno >= line:
                best = d.qualname
        return best

    return find


def _finding_sections(p: _Page, out: list[str], categories: tuple[str, ...], none: str) -> None:
    s = p.s
    if s.status != STATUS_OK:
        out.append(f"Not analyzed: {escape_text(s.error)}.")
        return
    found = [f for f in s.findings if f.category in categories]
    if not found:
        out.append(none)
        return
    where = _enclosing(s)
    for category in categories:
        items = [f for f in found if f.category == category]
        lines = sorted({f.lineno for f in items})
        summary = (f"{_count(len(items), 'call')} on {_count(len(lines), 'line')}" if items
                   else "none in this file")
        out.append(f"- **{escape_text(rules.TITLES[category])}**: {summary}")
    out.append("")
    for category in categories:
        items = [f for f in found if f.category == category]
        if not items:
            continue
        out += [f"### {escape_text(rules.TITLES[category])}", ""]
        for f in items:
            scope = where(f.lineno)
            text = f"- {link(f'line {f.lineno}', f'#L{f.lineno}')}: {code(f.text)}"
            if scope:
                text += f" in {code(scope)}"
            if f.note:
                text += f" — {escape_text(f.note)}"
            out.append(text)
        out.append("")


def _performance(p: _Page, out: list[str], source: str | None) -> None:
    _finding_sections(p, out, rules.PERFORMANCE_CATEGORIES,
                      "No collectives, stream or event operations, host synchronizations or "
                      "tensor allocations in this file.")


def _security(p: _Page, out: list[str], source: str | None) -> None:
    _finding_sections(p, out, rules.SECURITY_CATEGORIES,
                      "No eval/exec/compile, pickle or torch.load, subprocess, file system, "
                      "network or dynamic-import calls in this file.")


def _testing(p: _Page, out: list[str], source: str | None) -> None:
    s = p.s
    out += ["### Tests", ""]
    if not p.ctx.tests:
        out.append(f"No test file in {code(p.tests_label)} imports {code(s.module)}."
                   if p.tests_label else "No test folders are configured.")
    for t in p.ctx.tests:
        lines = ", ".join(str(n) for n in t.lines)
        uses = (" uses " + ", ".join(code(n) for n in t.names)) if t.names else ""
        out.append(f"- {code(t.path)} (import at line {lines}){uses}")
    out += ["", "### Usage", ""]
    if s.status != STATUS_OK:
        out.append(f"Not analyzed: {escape_text(s.error)}.")
        return
    api = p.public_api()
    private = any(part.startswith("_") and part != "__init__" for part in s.module.split("."))
    if api:
        names = ", ".join(api[:6]) + (", ..." if len(api) > 6 else "")
        out.append(f"Import: {code(f'from {s.module} import {names}')}")
    else:
        out.append(f"Import: {code(f'import {s.module}')} (no public names).")
    if private:
        out += ["", f"{code(s.module)} is private (a component starts with an underscore); "
                "its names are meant for use inside the package."]


def _related(p: _Page, out: list[str], source: str | None) -> None:
    ctx = p.ctx
    folder = posixpath.dirname(p.layout.display(p.s.key))
    if not ctx.siblings:
        out.append(f"No other source files in {code(folder)}.")
    else:
        out += [f"Files in the same folder ({code(folder)}):", ""]
        for key in ctx.siblings:
            line = ctx.lines.get(key, "")
            out.append(f"- {link(code(key.rpartition('/')[2]), p.docs_link(key))}"
                       + (f": {escape_text(line)}" if line else ""))
    others = sorted(set(ctx.targets.values()) | set(ctx.imported_by))
    others = [k for k in others if k not in ctx.siblings]
    if others:
        out += ["", "Files elsewhere in the project that this file imports or is imported by:", ""]
        for key in others:
            line = ctx.lines.get(key, "")
            out.append(f"- {link(code(key), p.docs_link(key))}"
                       + (f": {escape_text(line)}" if line else ""))


def _crossrefs(p: _Page, out: list[str], source: str | None) -> None:
    out.append(f"- **Keyword Index**: {link(code(p.kw_name), p.kw_name)}")
    out.append(f"- **Folder Index**: {link(code('index.md'), p.index)}")
    out.append(f"- **Folder Documentation**: {link(code('doc.md'), p.doc)}")
    used: dict[str, list[str]] = {}
    for key, names in p.ctx.imported_names.items():
        for name in names:
            used.setdefault(name, []).append(key)
    if used:
        out += ["", "Names defined here and imported elsewhere in the project:", ""]
        for name in sorted(used):
            a = p.anchor_of(name)
            label = link(code(name), f"#{a}") if a else code(name)
            files = ", ".join(link(code(k), p.docs_link(k)) for k in sorted(used[name]))
            out.append(f"- {label}: {files}")


_SECTION_RENDERERS = {
    "File Metadata": _metadata,
    "Original Source": _source,
    "High-Level Overview": _overview,
    "Detailed Analysis": _detailed,
    "Architecture & Design": _architecture,
    "Dependencies": _dependencies,
    "Code Patterns & Idioms": _patterns,
    "Performance Considerations": _performance,
    "Security & Safety": _security,
    "Testing & Usage": _testing,
    "Related Files": _related,
    "Cross-References": _crossrefs,
}
