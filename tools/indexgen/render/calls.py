"""The call graph on the analysis page: per definition "Calls", "Reads" and "Called by",
and the file-level summary of which files this one calls into and is called from.

One graph, two views: a definition's "Called by" lists exactly the call sites whose "Calls"
name it (module-level calls have a "Calls" list of their own, :data:`MODULE_LEVEL`), and the
file-level counts are the numbers of those edges.  Project callees link to their definitions;
calls that leave the build show the full dotted name they resolve to; properties read on the
way to a callee are "Reads"; calls the static analysis cannot follow are counted by reason in
one line -- never guessed.  Builtins are left out.
"""

from __future__ import annotations

import posixpath

from indexgen.analyze.context import CallEdge, CallerRef
from indexgen.analyze.dispatch import UNKNOWN_VALUE
from indexgen.render.markdown import code, escape_inline, link
from indexgen.render.page import MODULE_LEVEL, Page, count, line_links


def unresolved(p: Page, caller: str) -> dict[str, int]:
    """Reason -> number of the calls of one definition not resolved statically: those the
    global pass counted, and the calls on local values it was not given (no known type).
    (The context's own dictionary when there are no such local calls: not to be changed.)"""
    found = p.ctx.unresolved.get(caller) or {}
    local = len(p.local_calls.get(caller, ()))
    if local:
        found = dict(found)
        found[UNKNOWN_VALUE] = found.get(UNKNOWN_VALUE, 0) + local
    return found


def _label(p: Page, key: str, label: str) -> str:
    """How a project definition is named: its qualname, prefixed by its module's last name
    when it lives in another file."""
    if key == p.key:
        return label
    module = posixpath.basename(key).removesuffix(".py")
    return label if module == "__init__" else f"{module}.{label}"


def callee_link(p: Page, key: str, anchor: str, label: str) -> str:
    """A project callee as a link to its definition (its name as :func:`_label` makes it, in
    a code span), made once per page: a file's calls, overrides and indirect findings name
    the same callees again and again."""
    ident = (key, anchor, label)
    found = p.callee_links.get(ident)
    if found is None:
        found = p.callee_links[ident] = link(code(_label(p, key, label)),
                                             p.docs_link(key, anchor))
    return found


#: The bullets of a definition's outgoing edges, in order: (title, the edge kinds it lists).
_CALL_BULLETS = (("Calls", ("project", "override", "closure", "external")),
                 ("Reads", ("read",)),
                 ("Passes as a callback", ("callback",)))


def calls_lines(p: Page, anchor: str) -> list[str]:
    """The "Calls", "Reads", "Passes as a callback", "Not resolved statically", "Called by",
    "Read by" and "Passed as a callback by" bullets of one definition (by anchor; '' for the
    module level), each left out when empty."""
    out = []
    edges = p.ctx.calls.get(anchor)
    if edges:
        for title, kinds in _CALL_BULLETS:
            mine = [e for e in edges if e.kind in kinds]
            if mine:
                out.append(f"- **{title}**: " + format_calls(p, mine))
    reasons = unresolved(p, anchor)
    if reasons:
        out.append(f"- **Not resolved statically**: {count(sum(reasons.values()), 'call')} ("
                   + ", ".join(f"{n} {why}" for why, n in sorted(
                       reasons.items(), key=lambda r: (-r[1], r[0]))) + ")")
    for title, refs in (("Called by", p.ctx.called_by.get(anchor)),
                        ("Read by", p.ctx.read_by.get(anchor)),
                        ("Passed as a callback by", p.ctx.passed_by.get(anchor))):
        if refs:
            out.append(f"- **{title}**: " + format_callers(p, refs))
    return out


def format_calls(p: Page, edges: list[CallEdge]) -> str:
    """Project callees (linked), the overrides a call may run instead (one group per set of
    them: "or an override in: ..."; "one of: ..." where the call names no callee of its own:
    a method only subclasses or a protocol's conforming classes define), then names outside
    the build, each with its lines."""
    groups: dict[tuple[str, str, str, str], list[int]] = {}
    by_line: dict[int, list[CallEdge]] = {}  # the overrides of each line
    for e in edges:
        if e.kind == "override":
            by_line.setdefault(e.line, []).append(e)
            continue
        groups.setdefault(e[2:], []).append(e.line)  # e[2:]: (kind, key, anchor, label)
    named = {e.line for e in edges if e.kind == "project"} if by_line else ()
    override_groups: dict[tuple, list[int]] = {}
    for line, found in by_line.items():  # a line that names no callee of its own: "one of"
        override_groups.setdefault((line in named, *sorted(
            {(e.key, e.anchor, e.label) for e in found})), []).append(line)
    parts: dict[str, list[str]] = {"project": [], "closure": [], "read": [], "callback": [],
                                   "external": []}
    heads = p.callee_heads  # a file's definitions call the same callees again and again
    for ident, lines in groups.items():
        head = heads.get(ident)
        if head is None:
            kind, key, anchor, label = ident
            head = heads[ident] = (code(label) if kind == "external" else
                                   callee_link(p, key, anchor, label)
                                   + _condition(p, key, anchor))
        parts[ident[0]].append(f"{head} ({line_links(lines)})")
    for (instead, *callees), lines in override_groups.items():
        names = ", ".join(callee_link(p, key, anchor, label) for key, anchor, label in callees)
        parts["project"].append(f"{'or an override in' if instead else 'one of'}: {names} "
                                f"({line_links(lines)})")
    text = "; ".join(parts["project"] + parts["closure"] + parts["read"] + parts["callback"])
    if parts["external"]:
        text += ("; " if text else "") + "outside this build: " + ", ".join(parts["external"])
    return text


def _condition(p: Page, key: str, anchor: str) -> str:
    """`` if <condition>`` after a callee that is one of the definitions a condition picks
    at import time (see :mod:`indexgen.extract.alternatives`), else ''."""
    found = p.ctx.conditions.get(f"{key}#{anchor}") if p.ctx.conditions else None
    if found is None:
        return ""
    return " " + escape_inline(f"(if {found})" if found else "(unless redefined)")


def format_callers(p: Page, refs: list[CallerRef]) -> str:
    """Call sites reaching a definition: the calling definition (linked) and line links.
    A call that runs a function nested in the definition says so (``define (line 5: its
    nested do_it)``, ``other.use (line 9: its nested do_it)``), where the caller may be the
    definition itself."""
    groups: dict[tuple[str, str, str], list[int]] = {}
    nested: dict[tuple[str, str, str], list[str]] = {}
    for r in refs:  # r[:3]: (key, caller, anchor) as a plain tuple
        groups.setdefault(r[:3], []).append(r.line)
        if r.nested and r.nested not in nested.setdefault(r[:3], []):
            nested[r[:3]].append(r.nested)
    items = []
    heads = p.caller_heads  # the same callers reach many definitions of a file
    for ident, lines in groups.items():
        found = heads.get(ident)
        if found is None:
            key, caller, anchor = ident
            docs = "" if key == p.key else p.docs_link(key)
            name = posixpath.basename(p.display(key))
            if caller:
                label = caller if key == p.key else f"{name.removesuffix('.py')}.{caller}"
                head = link(code(label), p.docs_link(key, anchor))
            else:
                head = f"module level of {link(code(name), p.docs_link(key, MODULE_LEVEL))}"
            found = heads[ident] = (head, docs)
        inner = nested.get(ident)
        items.append(f"{found[0]} ({line_links(lines, found[1])}"
                     + (": its nested " + ", ".join(map(code, inner)) if inner else "") + ")")
    return "; ".join(items)


def call_graph_summary(p: Page) -> list[str]:
    """Which files this file calls into and is called from (Dependencies section)."""
    into: dict[str, int] = {}
    for out in p.ctx.calls.values():
        for e in out:
            if e.kind == "project" and e.key != p.key:
                into[e.key] = into.get(e.key, 0) + 1
    from_: dict[str, int] = {}
    for refs in p.ctx.called_by.values():
        for r in refs:
            if r.key != p.key:
                from_[r.key] = from_.get(r.key, 0) + 1
    if not into and not from_:
        return ["No calls to or from other files of this build."]
    out = []
    for title, found in (("Calls into", into), ("Called from", from_)):
        if found:
            out.append(f"- **{title}**: " + ", ".join(
                f"{link(p.file_label(k), p.docs_link(k))} ({count(n, 'call')})"
                for k, n in sorted(found.items())))
    return out
