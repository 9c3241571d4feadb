"""Stage 3a: render the keyword index page (``name.py_kw.md``) of one source file.

File Information, Keywords Extracted (one section per kind, each entry linking to the anchor of
its definition), the A–Z identifier index and the Keyword → Section Map.
"""

from __future__ import annotations

import operator
import posixpath
import string

from indexgen.analyze.context import FileContext
from indexgen.extract import rules
from indexgen.extract.model import STATUS_OK, FileSummary
from indexgen.layout import Layout
from indexgen.render.markdown import (
    MARKER,
    anchor,
    code,
    escape_text,
    heading_anchor,
    link,
    link_target,
)
from indexgen.render.page import CATEGORY_TITLES, KIND_PLURAL, SECTIONS, SOURCE_ANCHOR, Page, count


def render_keywords(s: FileSummary, ctx: FileContext, layout: Layout, tests_label: str,
                    page: Page | None = None) -> str:
    """Render the keyword index page of one file.

    Args:
        s: Full summary of the file.
        ctx: Its global context.
        layout: Page paths of this build.
        tests_label: How the configured test folders are named on pages (e.g. ``tests``).
        page: The file's :class:`~indexgen.render.page.Page` when the caller renders both pages
            with one (made here otherwise).

    Returns:
        The page text, starting with :data:`~indexgen.render.markdown.MARKER`.
    """
    p = page or Page(s, ctx, layout, tests_label)
    out = [*(p.keywords_head if p.keywords_head is not None else keywords_head(p))]
    if s.status == STATUS_OK:
        _kw_section(out, "Imports", [
            (_import_label(i), f"{CATEGORY_TITLES[i.category].lower()}, line {i.lineno}",
             f"{p.docs_name}#L{i.lineno}") for i in s.imports
        ])
        out += (p.identifier_lines if p.identifier_lines is not None
                else identifier_index(s, p.docs_name))
    out += ["## Keyword → Section Map", ""]
    out += _section_map(p)
    out.append("")  # the closing newline, joined (adding it copied the page once more)
    return "\n".join(out)


def keywords_head(p: Page) -> list[str]:
    """The lines of a file's keyword page before its imports (whose categories the global
    pass decides): title, file information, counts and the definitions and attributes by
    kind.  No context needed: :func:`indexgen.run.jobs.prepare` makes them ahead."""
    s, docs = p.s, p.docs_name
    display = p.display(s.key)
    out = [MARKER, f"# Keyword Index: {code(display)}", "", "## File Information", ""]
    out.append(f"- **Original File**: {link(code(display), f'{docs}#{SOURCE_ANCHOR}')}"
               f" (embedded in the analysis page)")
    out.append(f"- **Documentation**: {link(code(docs), docs)}")
    out.append(f"- **Folder**: {link(code(posixpath.dirname(display)), p.index)}")
    out.append(f"- **Module**: {code(s.module)}")
    out += ["", "## Keywords Extracted", ""]
    if s.status != STATUS_OK:
        out += [f"No keywords: {escape_text(s.error, line_start=False)}.", ""]
        return out
    out += [_keyword_counts(s), ""]
    _kw_section(out, "Classes", [
        (d.qualname, f"class, line {d.lineno}", f"{docs}#{d.anchor}") for d in p.classes
    ])
    _kw_section(out, "Functions", [
        (d.qualname, f"{'overload' if d.overload else d.kind}, line {d.lineno}",
         f"{docs}#{d.anchor}") for d in p.funcs
    ])
    consts = [a for a in s.attributes if a.constant]
    attrs = [a for a in s.attributes if not a.constant]
    _kw_section(out, "Constants", [
        (a.name, f"constant, line {a.lineno}", f"{docs}#{a.anchor}") for a in consts
    ])
    _kw_section(out, "Module Attributes", [
        (a.name, f"attribute, line {a.lineno}", f"{docs}#{a.anchor}") for a in attrs
    ])
    return out


def _keyword_counts(s: FileSummary) -> str:
    kinds: dict[str, int] = {}
    for d in s.definitions:
        kinds[d.kind] = kinds.get(d.kind, 0) + 1
    parts = [count(kinds[k], k, KIND_PLURAL[k]) for k in KIND_PLURAL if k in kinds]
    parts.append(count(len(s.attributes), "module attribute"))
    parts.append(count(len(s.imports), "imported name"))
    parts.append(count(len(s.identifiers), "distinct identifier"))
    return f"{code(s.relpath.rpartition('/')[2])} has " + ", ".join(parts) + "."


_NAME_LABEL = operator.itemgetter(0, 1)  # the sort key of _kw_section's entries


def _kw_section(out: list[str], title: str, entries: list[tuple[str, str, str]]) -> None:
    out += [f"### {title}", ""]
    if not entries:
        out += [f"No {title.lower()} in this file.", ""]
        return
    # A label is words, commas and a line number ("class, line 12", "standard library, line
    # 3"): Markdown that needs no escaping.
    out += [f"- **{code(name)}**: {link(label, target)}"
            for name, label, target in sorted(entries, key=_NAME_LABEL)]
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


_LETTERS: dict[str, str] = {}
"""First character of an identifier -> its group (:func:`_letter`), shared by every file."""
_GROUPS = {g: (f"[{escape_text(g)}](#idx-{g.lower()})",
               [anchor(f"idx-{g.lower()}"), "", f"### {escape_text(g)}", ""])
           for g in (*string.ascii_uppercase, "_", "Other")}
"""Each group of the identifier index: its "Jump to" link and the lines that open it."""


def identifier_index(s: FileSummary, docs: str) -> list[str]:
    """The lines of the A–Z identifier index of a file whose analysis page is named ``docs``
    (no context needed: :func:`indexgen.run.jobs.prepare` makes them ahead)."""
    out = ["## Identifier Index (A–Z)", "",
           "Identifiers from the code's syntax tree (names, attributes, parameters, "
           "definitions, imports); comments and strings are not included.", ""]
    identifiers = s.identifiers
    if not identifiers:
        out += ["No identifiers in this file.", ""]
        return out
    # Sorted once, by (lower case, name) (stable, without a tuple per name): each group
    # then gets its names in that order.
    names = sorted(identifiers)
    names.sort(key=str.lower)
    groups: dict[str, list[str]] = {}
    letters = _LETTERS
    for name in names:
        letter = letters.get(name[0])
        if letter is None:
            letter = letters[name[0]] = _letter(name[0])
        group = groups.get(letter)
        if group is None:
            groups[letter] = [name]
        else:
            group.append(name)
    order = sorted(groups, key=lambda g: (g == "Other", g == "_", g))
    out.append("Jump to: " + " · ".join([_GROUPS[g][0] for g in order]))
    out.append("")
    target = link_target(docs)
    for g in order:
        out += _GROUPS[g][1]
        # An identifier is a code span of itself (no backtick, '<' or space in a name).
        out += [f"- `{name}`: {uses} occurrence{'' if uses == 1 else 's'}, first at "
                f"[line {first}]({target}#L{first})"
                for name in groups[g] for first, uses in (identifiers[name],)]
        out.append("")
    return out


def _section_map(p: Page) -> list[str]:
    s, docs = p.s, p.docs_name
    if s.status != STATUS_OK:  # a page of SHORT_SECTIONS: what its context still says
        why = escape_text(s.error, line_start=False)
        notes = {"File Metadata": f"path, module {code(s.module)}, size and status",
                 "Original Source": why, "High-Level Overview": f"why nothing is listed: {why}",
                 "Dependencies": "imported by " + count(len(p.ctx.imported_by), "project file"),
                 "Testing & Usage": count(len(p.ctx.tests), "test file") + " importing it",
                 "Related Files": count(len(p.ctx.lines), "file") + " related by imports",
                 "Cross-References": "keyword index and folder pages"}
        return _mapped(docs, notes, p.sections)
    findings = p.findings()
    perf = [f.text for f in findings if f.category in rules.PERFORMANCE_CATEGORIES]
    perf += [f.text for f in p.ctx.indirect if f.category in rules.PERFORMANCE_CATEGORIES]
    sec = [f.text for f in findings if f.category in rules.SECURITY_CATEGORIES]
    sec += [f.text for f in p.ctx.indirect if f.category in rules.SECURITY_CATEGORIES]
    found_patterns = p.patterns
    names = [d.qualname for d in s.definitions]
    shown = ", ".join(code(n) for n in names[:12]) + (f" and {len(names) - 12} more"
                                                      if len(names) > 12 else "")
    notes = {
        "File Metadata": f"path, module {code(s.module)}, size and line count",
        "Original Source": f"all {count(s.n_lines, 'line')}, folded; keyword and identifier "
                           "links open it at their line",
        "High-Level Overview": "module docstring and public API"
        + (f" ({', '.join(code(n) for n in p.public_api[:8])})" if p.public_api else ""),
        "Detailed Analysis": (f"{shown}" if names else "no classes or functions"),
        "Architecture & Design": (f"class hierarchy of {count(len(p.classes), 'class', 'classes')}"
                                  if p.classes else "no classes"),
        "Dependencies": f"{count(len(s.imports), 'import')}; imported by "
        f"{count(len(p.ctx.imported_by), 'project file')}; the call graph across files",
        "Code Patterns & Idioms": ", ".join(escape_text(t) for t, _ in found_patterns)
        if found_patterns else "no patterns detected",
        "Performance Considerations": _code_set(perf) if perf else "none found",
        "Security & Safety": _code_set(sec) if sec else "none found",
        "Testing & Usage": f"{count(len(p.ctx.tests), 'test file')} importing from this module, "
        f"{len(p.ctx.test_calls)} reaching it through calls",
        "Related Files": f"{count(len(p.ctx.lines), 'file')} related by imports or calls",
        "Cross-References": "keyword index, folder pages and names used elsewhere",
    }
    return _mapped(docs, notes, SECTIONS)


def _code_set(texts: list[str]) -> str:
    """The distinct code spans of ``texts``, sorted, comma-separated (each text spanned once:
    a file's findings repeat the same calls)."""
    return ", ".join(sorted({code(t) for t in set(texts)}))


#: Each section's title as a link label and its heading's anchor (the same on every page).
_SECTION_LINKS = {t: (escape_text(t), heading_anchor(t)) for t in SECTIONS}


def _mapped(docs: str, notes: dict[str, str], sections: tuple[str, ...]) -> list[str]:
    """The section map's lines: each section of the analysis page ``docs``, linked, with
    what ``notes`` says it holds."""
    target = link_target(docs)  # an anchor needs no escaping
    lines = []
    for t in sections:
        label, anchor_id = _SECTION_LINKS[t]
        lines.append(f"- **[{label}]({target}#{anchor_id})**: {notes[t]}")
    return lines + [""]
