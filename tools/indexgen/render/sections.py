"""Stage 3a (continued): the later sections of the analysis page.

Dependencies (imports by origin, importers, the file-level call graph), Code Patterns &
Idioms, Performance Considerations and Security & Safety (direct calls and calls that reach
an operation through project functions), Testing & Usage, Related Files and
Cross-References.  Every claim comes from the file's summary or its global context.
"""

from __future__ import annotations

from bisect import bisect_right

from indexgen.extract import rules
from indexgen.extract.model import STATUS_OK, FileSummary
from indexgen.render.calls import call_graph_summary, callee_link
from indexgen.render.docrender import summary_markdown
from indexgen.render.markdown import code, escape_text, link
from indexgen.render.page import CATEGORY_TITLES, Page, count, line_links

_SCOPE_NOTE = {"type-checking": "only under `TYPE_CHECKING`",
               "function": "inside a function (lazy import)", "nested": "inside a class body"}
_SCOPES = ("module", "type-checking", "nested", "function")
"""The scopes of an import (:attr:`~indexgen.extract.model.ImportRecord.scope`), in the order
the entries of one module are listed."""


def not_analyzed(s: FileSummary) -> str:
    """What the overview of a file that was not analyzed says (its page has only the sections
    its context or its bytes fill: :attr:`~indexgen.render.page.Page.sections`)."""
    return f"Not analyzed: {escape_text(s.error, line_start=False)}."


def _dependencies(p: Page, out: list[str], source: str | None) -> None:
    s = p.s
    if s.status == STATUS_OK:  # else nothing is known of its imports and calls
        out += ["### Imports", ""]
        if not s.imports:
            out += ["No imports.", ""]
    for category in ("stdlib", "third-party", "project"):
        # one entry per module and scope: a top-level import is never labelled lazy
        groups: dict[tuple[str, int], list] = {}
        for imp in s.imports:
            if imp.category == category:
                mod = imp.written if imp.name else imp.module
                groups.setdefault((mod, _SCOPES.index(imp.scope)), []).append(imp)
        if not groups:
            continue
        out += [f"**{CATEGORY_TITLES[category]}**", ""]
        for mod, _scope in sorted(groups):
            out.append("- " + _import_line(p, mod, groups[mod, _scope]))
        out.append("")
    out += ["### Imported by", ""]
    if not p.ctx.imported_by:
        out.append(f"No file of this build imports from {code(s.module)}.")
    for key in p.ctx.imported_by:
        names = p.ctx.imported_names.get(key) or []
        what = ("imports " + ", ".join(code(n) for n in names)) if names else "imports the module"
        out.append(f"- {link(p.file_label(key), p.docs_link(key))}: {what}")
    if s.status == STATUS_OK:
        out += ["", "### Call graph", "", *call_graph_summary(p)]


def _import_line(p: Page, mod: str, imps: list) -> str:
    """``module``: names, each linked to what it resolves to, with line links and scope."""
    module_target = next((i.target for i in imps if not i.name and i.target), "")
    label = link(code(mod), p.docs_link(module_target)) if module_target else code(mod)
    names = []
    for i in sorted(imps, key=lambda i: (i.name, i.alias)):
        if not i.name:
            continue
        text = code(i.name + (f" as {i.alias}" if i.alias else ""))
        names.append(link(text, p.docs_link(i.target, i.anchor)) if i.target else text)
    aliases = sorted({i.alias for i in imps if not i.name and i.alias})
    text = label + (": " + ", ".join(dict.fromkeys(names)) if names else "")
    if aliases:
        text += " as " + ", ".join(code(a) for a in aliases)
    text += f" ({line_links([i.lineno for i in imps])})"
    scopes = sorted({i.scope for i in imps} - {"module"})
    if scopes:
        text += " — " + ", ".join(_SCOPE_NOTE[sc] for sc in scopes)
    return text


def _patterns(p: Page, out: list[str], source: str | None) -> None:
    if p.s.status != STATUS_OK:  # not on its page (made ahead for every file)
        return
    found = p.patterns
    if not found:
        out.append("None recognized.")
        return
    for title, items in found:
        out.append(f"- **{escape_text(title)}**: " + ", ".join(
            f"{code(label)} ({link(f'line {line}', f'#L{line}')})" for label, line in items[:20])
            + (f" and {len(items) - 20} more" if len(items) > 20 else ""))


def _enclosing(s: FileSummary):
    """``find(line)``: the qualname of the innermost definition that holds ``line`` ('' for
    none): of those starting at or before it (in order of start, the outer first), the last
    that ends at or after it, looked for from the last (was a scan from the first)."""
    defs = sorted(s.definitions, key=lambda d: (d.start_lineno, -d.end_lineno))
    starts = [d.start_lineno for d in defs]

    def find(line: int) -> str:
        for i in range(bisect_right(starts, line) - 1, -1, -1):
            if defs[i].end_lineno >= line:
                return defs[i].qualname
        return ""

    return find


def _finding_sections(p: Page, out: list[str], categories: tuple[str, ...]) -> None:
    s = p.s
    # Each category's direct findings and calls that reach one through project functions
    # (a call already found directly on the same line is not counted again).
    direct: dict[str, list] = {c: [] for c in categories}
    for f in p.findings():
        if f.category in direct:
            direct[f.category].append(f)
    seen = {(f.category, f.lineno) for found in direct.values() for f in found}
    indirect: dict[str, list] = {c: [] for c in categories}
    for f in p.ctx.indirect:
        if f.category in indirect and (f.category, f.line) not in seen:
            indirect[f.category].append(f)
    shown = [c for c in categories if direct[c] or indirect[c]]
    if not shown:
        out.append("None found, directly or through the project functions it calls.")
        return
    for category in shown:
        mine, via = direct[category], indirect[category]
        parts = ([count(len(mine), "direct call")] if mine else []) + (
            [f"{count(len(via), 'call')} through project functions"] if via else [])
        out.append(f"- **{escape_text(rules.TITLES[category])}**: " + ", ".join(parts))
    out.append("")
    where = _enclosing(s)
    for category in shown:
        out += [f"### {escape_text(rules.TITLES[category])}", ""]
        for f in direct[category]:  # "#L<n>" needs no escaping: the links are written out
            scope = where(f.lineno)
            text = f"- [line {f.lineno}](#L{f.lineno}): {code(f.text)}"
            text += f" in {code(scope)}" if scope else ""
            text += f" — {escape_text(f.note, line_start=False)}" if f.note else ""
            out.append(text)
        spans: dict[str, str] = {}  # a call or a caller -> its code span: they repeat
        for f in indirect[category]:
            target = callee_link(p, f.key, f.anchor, f.label)
            call = spans.get(f.text) or spans.setdefault(f.text, code(f.text))
            if f.caller:
                caller = spans.get(f.caller) or spans.setdefault(f.caller, code(f.caller))
                out.append(f"- [line {f.line}](#L{f.line}): {call} in {caller}, through {target}")
            else:
                out.append(f"- [line {f.line}](#L{f.line}): {call}, through {target}")
        out.append("")


def _performance(p: Page, out: list[str], source: str | None) -> None:
    _finding_sections(p, out, rules.PERFORMANCE_CATEGORIES)


def _security(p: Page, out: list[str], source: str | None) -> None:
    _finding_sections(p, out, rules.SECURITY_CATEGORIES)


def _testing(p: Page, out: list[str], source: str | None) -> None:
    s = p.s
    out += ["### Tests", ""]
    if not p.tests_label:
        out.append("No test folders are configured.")
    elif not p.ctx.tests and not p.ctx.test_calls:
        out.append(f"No test file in {code(p.tests_label)} imports from {code(s.module)} or "
                   "reaches it through calls the static call graph can follow.")
    for t in p.ctx.tests:
        uses = (" uses " + ", ".join(code(n) for n in t.names)) if t.names else ""
        where = count(len(t.lines), "line").split(" ", 1)[1] + " " + ", ".join(map(str, t.lines))
        out.append(f"- {code(t.path)} (import at {where}){uses}")
    for path, names in sorted(p.ctx.test_calls.items()):
        shown = ", ".join(code(n) for n in names[:6]) + (
            f" and {len(names) - 6} more" if len(names) > 6 else "")
        out.append(f"- {code(path)} reaches {shown} through calls")
    if p.ctx.dynamic_tests:
        shown = ", ".join(code(t) for t in p.ctx.dynamic_tests[:4]) + (
            f" and {len(p.ctx.dynamic_tests) - 4} more" if len(p.ctx.dynamic_tests) > 4 else "")
        out += ["", f"Not counted: {shown} import modules dynamically (`importlib`), which "
                "this static analysis cannot follow."]
    if s.status != STATUS_OK:
        return
    out += ["", "### Usage", ""]
    if s.main_line or s.relpath.endswith("__main__.py"):
        out += [_command_line(s), ""]
    api = [n for n in p.public_api if n not in s.type_checking and n not in p.unbound_exports]
    if api:
        names = ", ".join(api[:6]) + (", ..." if len(api) > 6 else "")
        out.append(f"Import: {code(f'from {s.module} import {names}')}")
    else:
        out.append(f"Import: {code(f'import {s.module}')} (no public names"
                   + (" importable at run time)." if p.public_api else ")."))
    checking = [n for n in p.public_api if n in s.type_checking]
    if checking:
        verb, it = ("is", "it") if len(checking) == 1 else ("are", "them")
        out += ["", f"{', '.join(code(n) for n in checking)} {verb} bound only under "
                f"`if TYPE_CHECKING:`: type checkers see {it}, but importing {it} fails at run "
                f"time (import {it} under `if TYPE_CHECKING:` to annotate with {it})."]
    if any(part.startswith("_") and part != "__init__" for part in s.module.split(".")):
        out += ["", f"{code(s.module)} is private (a component starts with an underscore); "
                "its names are meant for use inside the package."]


def _command_line(s: FileSummary) -> str:
    """``Run: python -m pkg.mod ARG [--option]`` for a module meant to run as a program."""
    module = s.module.removesuffix(".__main__") if s.relpath.endswith("__main__.py") \
        else s.module
    options = " ".join(f"[{o}]" if o.startswith("-") else o for o in dict.fromkeys(
        o for o in s.cli_options if not o.startswith("-") or o.startswith("--")))
    where = f" (`__main__` block at {link(f'line {s.main_line}', f'#L{s.main_line}')})" \
        if s.main_line else ""
    return f"Run: {code(f'python -m {module} {options}'.rstrip())}{where}"


def _related(p: Page, out: list[str], source: str | None) -> None:
    ctx = p.ctx
    if not ctx.lines:
        out.append("No other file of this build imports from it, is imported by it or calls "
                   f"to or from it; the folder's files are listed in its "
                   f"{link(code('index.md'), p.index)}.")
        return
    out += ["Files this file imports from, is imported by, calls or is called from "
            f"(the folder's files are listed in its {link(code('index.md'), p.index)}):", ""]
    for key, line in ctx.lines.items():
        out.append(f"- {link(p.file_label(key), p.docs_link(key))}"
                   + (f": {summary_markdown(line)}" if line else ""))


def _crossrefs(p: Page, out: list[str], source: str | None) -> None:
    out.append(f"- **Keyword Index**: {link(code(p.kw_name), p.kw_name)}")
    out.append(f"- **Folder Index**: {link(code('index.md'), p.index)}")
    out.append(f"- **Folder Documentation**: {link(code('doc.md'), p.doc)}")
    used: dict[str, list[str]] = {}
    for key, names in p.ctx.imported_names.items():
        for name in names:
            used.setdefault(name, []).append(key)
    if used:
        out += ["", "Names defined here and imported elsewhere in the project:" if p.s.status
                == STATUS_OK else "Names other files of the project import from it (not "
                "analyzed: whether it defines them is not known):", ""]
        for name in sorted(used):
            a = p.anchor_of(name)
            label = link(code(name), f"#{a}") if a else code(name)
            files = ", ".join(link(code(k), p.docs_link(k)) for k in sorted(used[name]))
            out.append(f"- {label}: {files}")


SECTION_RENDERERS = {
    "Dependencies": _dependencies,
    "Code Patterns & Idioms": _patterns,
    "Performance Considerations": _performance,
    "Security & Safety": _security,
    "Testing & Usage": _testing,
    "Related Files": _related,
    "Cross-References": _crossrefs,
}
