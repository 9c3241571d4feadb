"""The call graph on the analysis page: per definition "Calls" and "Called by", and the
file-level summary of which files this one calls into and is called from.

Project callees link to their definitions; calls that leave the build show the full dotted
name they resolve to; calls the static analysis cannot follow are listed as unresolved with
the reason -- never guessed.  Builtins are left out.
"""

from __future__ import annotations

import posixpath

from indexgen.analyze.context import CallEdge, CallerRef
from indexgen.extract.model import Definition
from indexgen.render.markdown import code, link
from indexgen.render.page import Page, count, line_links


def outgoing(p: Page, caller: str) -> list[CallEdge]:
    """Every call of one definition (by anchor; '' for module level): resolved ones from the
    global pass, calls on local values from the file's own summary; in line order."""
    edges = list(p.ctx.calls.get(caller, ()))
    edges += [CallEdge(c.line, c.text, "unresolved", label="a local value")
              for c in p.local_calls.get(caller, ())]
    return sorted(edges)


def callee_label(p: Page, edge: CallEdge) -> str:
    """How a project callee is named: its qualname, prefixed by its module's last name when it
    lives in another file."""
    return _label(p, edge.key, edge.label)


def _label(p: Page, key: str, label: str) -> str:
    if key == p.key:
        return label
    module = posixpath.basename(key).removesuffix(".py")
    return label if module == "__init__" else f"{module}.{label}"


def calls_lines(p: Page, d: Definition) -> list[str]:
    """The "Calls" and "Called by" bullets of one definition (none when it has neither)."""
    out = []
    edges = outgoing(p, d.anchor)
    if edges:
        out.append("- **Calls**: " + format_calls(p, edges))
    refs = p.ctx.called_by.get(d.anchor, [])
    if refs:
        out.append("- **Called by**: " + format_callers(p, refs))
    return out


def format_calls(p: Page, edges: list[CallEdge]) -> str:
    """Project callees (linked), then external names, then unresolved calls, with lines."""
    groups: dict[tuple[str, str, str, str], list[int]] = {}
    for e in edges:
        ident = (e.kind, e.key, e.anchor, e.label if e.kind != "unresolved" else e.text)
        groups.setdefault(ident, []).append(e.line)
    parts = {"project": [], "external": [], "unresolved": []}
    heads = p.callee_heads  # a file's definitions call the same callees again and again
    for ident, lines in groups.items():
        head = heads.get(ident)
        if head is None:
            kind, key, anchor, label = ident
            head = heads[ident] = (link(code(_label(p, key, label)), p.docs_link(key, anchor))
                                   if kind == "project" else code(label))
        parts[ident[0]].append(f"{head} ({line_links(lines)})")
    text = "; ".join(parts["project"])
    if parts["external"]:
        text += ("; " if text else "") + "outside this build: " + ", ".join(parts["external"])
    if parts["unresolved"]:
        text += ("; " if text else "") + "not resolved statically: " + ", ".join(
            parts["unresolved"])
    return text


def format_callers(p: Page, refs: list[CallerRef]) -> str:
    """Call sites reaching a definition: the calling definition (linked) and line links."""
    groups: dict[tuple[str, str, str], list[int]] = {}
    for r in refs:
        groups.setdefault((r.key, r.caller, r.anchor), []).append(r.line)
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
                head = f"module level of {link(code(name), p.docs_link(key))}"
            found = heads[ident] = (head, docs)
        items.append(f"{found[0]} ({line_links(lines, found[1])})")
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
