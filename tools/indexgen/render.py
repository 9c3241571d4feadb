"""Stage 3a: render the analysis page (``name.py_docs.md``) of one source file.

:func:`render_docs` is a pure function of a full :class:`~indexgen.model.FileSummary`, its
:class:`~indexgen.model.FileContext` and the :class:`~indexgen.layout.Layout`; every sentence
it writes is derived from those.  The keyword page is in :mod:`indexgen.render_keywords`.
"""

from __future__ import annotations

import html
import posixpath

from indexgen import patterns, rules
from indexgen.layout import Layout
from indexgen.markdown import (
    MARKER,
    anchor,
    code,
    escape_text,
    link,
)
from indexgen.model import STATUS_EMPTY, STATUS_OK, Definition, FileContext, FileSummary
from indexgen.page import (
    CATEGORY_TITLES,
    KIND_PLURAL,
    SECTIONS,
    Page,
    count,
    lines_link,
)
from indexgen.render_keywords import render_keywords

__all__ = ["SECTIONS", "render_docs", "render_keywords"]


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
    p = Page(s, ctx, layout, tests_label)
    out = [MARKER, f"# Documentation: {code(p.layout.display(s.key))}", ""]
    for title in SECTIONS:
        out += [f"## {title}", ""]
        _SECTION_RENDERERS[title](p, out, source)
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def _metadata(p: Page, out: list[str], source: str | None) -> None:
    s = p.s
    out.append(f"- **Path**: {code(p.layout.display(s.key))}")
    out.append(f"- **Module**: {code(s.module)}" + (" (package `__init__`)" if s.is_package else ""))
    out.append(f"- **Size**: {s.size:,} bytes, {count(s.n_lines, 'line')}")
    out.append(f"- **SHA-256**: {code(s.sha256)}")
    if s.status == STATUS_OK:
        out.append(f"- **Encoding**: {code(s.encoding)}")
    out.append(f"- **Status**: {code(s.status)}" + (f": {escape_text(s.error, line_start=False)}" if s.error else ""))
    out.append(f"- **Keyword Index**: {link(code(p.kw_name), p.kw_name)}")


def _source(p: Page, out: list[str], source: str | None) -> None:
    s = p.s
    if source is None:
        if s.status == STATUS_EMPTY:
            out.append("The file is empty; there is no source to show.")
        else:
            out.append(f"Source not embedded: {escape_text(s.error, line_start=False)}.")
        return
    if s.status != STATUS_OK:
        out += [f"The source is embedded as text; {escape_text(s.error, line_start=False)}.", ""]
    lines = source.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    width = len(str(len(lines)))
    body = "\n".join(
        f'<span id="L{n}">{n:>{width}}  {text}</span>'
        for n, text in enumerate(html.escape(source, quote=False).split("\n")[: len(lines)], 1)
    )
    out.append(f'<pre class="indexgen-source"><code>{body}</code></pre>')




def _docstring_block(doc: str) -> list[str]:
    # Raw HTML, not a fence: fenced text is still seen by preprocessors such as snippets.
    lines = html.escape(doc, quote=False).split("\n")
    return ['<pre class="indexgen-docstring"><code>' + "\n".join(
        f"<span>{line}</span>" if line else "<span></span>" for line in lines) + "</code></pre>"]


def _overview(p: Page, out: list[str], source: str | None) -> None:
    s = p.s
    if s.status != STATUS_OK:
        out.append(f"Not analyzed: {escape_text(s.error, line_start=False)}.")
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
    parts = [count(kinds[k], k, KIND_PLURAL[k]) for k in KIND_PLURAL if k in kinds]
    if s.attributes:
        parts.append(count(len(s.attributes), "module attribute"))
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


def _detailed(p: Page, out: list[str], source: str | None) -> None:
    s = p.s
    if s.status != STATUS_OK:
        out.append(f"Not analyzed: {escape_text(s.error, line_start=False)}.")
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
    facts.append(lines_link(d.lineno, d.end_lineno))
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


def _architecture(p: Page, out: list[str], source: str | None) -> None:
    s = p.s
    if s.status != STATUS_OK:
        out.append(f"Not analyzed: {escape_text(s.error, line_start=False)}.")
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
        parts.append(f"{count(len(p.classes), 'class', 'classes')} with "
                     f"{count(len(members), 'member function')}")
    parts.append(count(len(top), "module-level function"))
    out.append("Structure: " + " and ".join(parts) + ".")


def _dependencies(p: Page, out: list[str], source: str | None) -> None:
    s = p.s
    if s.status != STATUS_OK:
        out.append(f"Not analyzed: {escape_text(s.error, line_start=False)}.")
    else:
        for category in ("stdlib", "third-party", "project"):
            out += [f"### {CATEGORY_TITLES[category]}", ""]
            groups: dict[str, list] = {}
            for imp in s.imports:
                if imp.category == category:
                    groups.setdefault(imp.written if imp.name else imp.module, []).append(imp)
            if not groups:
                out += [f"No {CATEGORY_TITLES[category].lower()} imports.", ""]
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


def _patterns(p: Page, out: list[str], source: str | None) -> None:
    if p.s.status != STATUS_OK:
        out.append(f"Not analyzed: {escape_text(p.s.error, line_start=False)}.")
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


def _finding_sections(p: Page, out: list[str], categories: tuple[str, ...], none: str) -> None:
    s = p.s
    if s.status != STATUS_OK:
        out.append(f"Not analyzed: {escape_text(s.error, line_start=False)}.")
        return
    found = [f for f in s.findings if f.category in categories]
    if not found:
        out.append(none)
        return
    where = _enclosing(s)
    for category in categories:
        items = [f for f in found if f.category == category]
        lines = sorted({f.lineno for f in items})
        summary = (f"{count(len(items), 'call')} on {count(len(lines), 'line')}" if items
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


def _performance(p: Page, out: list[str], source: str | None) -> None:
    _finding_sections(p, out, rules.PERFORMANCE_CATEGORIES,
                      "No collectives, stream or event operations, host synchronizations or "
                      "tensor allocations in this file.")


def _security(p: Page, out: list[str], source: str | None) -> None:
    _finding_sections(p, out, rules.SECURITY_CATEGORIES,
                      "No eval/exec/compile, pickle or torch.load, subprocess, file system, "
                      "network or dynamic-import calls in this file.")


def _testing(p: Page, out: list[str], source: str | None) -> None:
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
        out.append(f"Not analyzed: {escape_text(s.error, line_start=False)}.")
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


def _related(p: Page, out: list[str], source: str | None) -> None:
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


def _crossrefs(p: Page, out: list[str], source: str | None) -> None:
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
