"""The call graph on the analysis page: per definition "Calls", "Reads" and "Called by",
and the file-level summary of which files this one calls into and is called from.

One graph, two views: a definition's "Called by" lists exactly the call sites whose "Calls"
name it (module-level calls have a "Calls" list of their own, :data:`MODULE_LEVEL`), and the
file-level counts are the numbers of those edges.  Project callees link to their definitions;
calls that leave the build show the full dotted name they resolve to; properties read on the
way to a callee are "Reads"; calls the static analysis cannot follow are counted by reason in
one line, each reason with its lines -- never guessed.  Builtins are left out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from operator import itemgetter

from indexgen.analyze.context import CallEdge, CallerRef
from indexgen.analyze.dispatch import UNKNOWN_VALUE
from indexgen.render.markdown import code, escape_inline, link, link_target
from indexgen.render.page import CHECKING_NOTE, MODULE_LEVEL, Page, count, line_links
from indexgen.render.through import may_label, through


def unresolved(p: Page, caller: str) -> dict[str, list[int]]:
    """Reason -> the lines of the calls of one definition not resolved statically, one per
    call: those the global pass kept, and the calls on local values it was not given (no
    known type).  (The context's own dictionary when there are no such local calls: not to
    be changed.)"""
    found = p.ctx.unresolved.get(caller) or {}
    local = p.local_calls.get(caller)
    if local:
        found = dict(found)
        found[UNKNOWN_VALUE] = sorted([*found.get(UNKNOWN_VALUE, ()), *(c.line for c in local)])
    return found


def unresolved_text(reasons: dict[str, list[int]]) -> str:
    """The "Not resolved statically" bullet's text: how many calls, then for each reason
    (the most frequent first) how many and on which lines, linked as "Calls" links them:
    ``3 calls (2 on a value of unknown type: lines 14, 30; 1 to a name bound at run time:
    line 52)``.  A line holding two such calls is named once."""
    return f"{count(sum(map(len, reasons.values())), 'call')} (" + "; ".join(
        f"{len(lines)} {why}: {line_links(lines)}"
        for why, lines in sorted(reasons.items(), key=lambda r: (-len(r[1]), r[0]))) + ")"


def _label(p: Page, key: str, label: str) -> str:
    """How a project definition is named: its qualname, prefixed by its module's last name
    when it lives in another file."""
    if key == p.key:
        return label
    module = key.rpartition("/")[2].removesuffix(".py")  # posixpath.basename, inline
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
_CALL_BULLETS = (("Calls", frozenset({"project", "override", "closure", "external"})),
                 ("Reads", frozenset({"read"})),
                 ("Passes as a callback", frozenset({"callback"})))


_KIND = itemgetter(2)  # an edge's kind


def calls_lines(p: Page, anchor: str) -> list[str]:
    """The "Calls", "Reads", "Passes as a callback", "Not resolved statically", "Called by",
    "Read by" and "Passed as a callback by" bullets of one definition (by anchor; '' for the
    module level), each left out when empty."""
    out = []
    edges = p.ctx.calls.get(anchor)
    if edges:
        present = set(map(_KIND, edges))
        for title, kinds in _CALL_BULLETS:
            if present.isdisjoint(kinds):
                continue
            # most definitions only call: the whole list is the bullet's, in order
            mine = edges if present <= kinds else [e for e in edges if e[2] in kinds]
            if mine:
                out.append(format_calls(p, mine, p.s.checking_spans if not anchor else (),
                                        anchor, f"- **{title}**: "))
    reasons = unresolved(p, anchor)
    if reasons:
        out.append("- **Not resolved statically**: " + unresolved_text(reasons))
    for title, refs in (("Called by", p.ctx.called_by.get(anchor)),
                        ("Read by", p.ctx.read_by.get(anchor)),
                        ("Passed as a callback by", p.ctx.passed_by.get(anchor))):
        if refs:
            out.append(format_callers(p, refs, f"- **{title}**: "))
    return out


def format_calls(p: Page, edges: list[CallEdge], checking: Iterable[tuple[int, int]] = (),
                 caller: str | None = None, prefix: str = "") -> str:
    """Project callees (linked), each followed by the overrides a call of it may run instead
    (one group per set of them: ``Shape.area (4), or an override in: Square.area (4)``), a
    call that names no callee of its own (a method only subclasses or a protocol's conforming
    classes define) giving "one of: ..." in the callees' line order, then names outside the
    build, each with its lines, followed likewise by the overrides the build's subclasses
    define (``io.BytesIO.write (14), or an override in: CopyingIO.write (14)``).  The lines
    in a span of ``checking`` (module-level ``if TYPE_CHECKING:`` bodies) are entries of
    their own, marked as never run.  The lines of a call that reaches its callee as a value
    (of the definition of anchor ``caller``; '' the module level) say how
    (:func:`~indexgen.render.through.through`), and the callees whose lines read the same
    are one entry: ``blockquote (line 8; line 12, through `rule`: an element of
    `self.rules`)``, ``blockquote, heading (line 12, through `rule`: ...)``.  The text
    starts with ``prefix`` (a bullet's title, joined with the entries: a long list is not
    copied once more to add it)."""
    spans = [range(first, last + 1) for first, last in checking]
    # (callee, under TYPE_CHECKING) -> lines
    groups: dict[tuple[tuple[str, str, str, str], bool], list[int]] = {}
    how: dict[tuple[int, tuple[str, str, str, str]], str] = {}  # (line, callee) -> label
    # the overrides of each call, by the callee they follow (the one they override: the
    # call graph puts each after its own, :func:`indexgen.analyze.virtual.after_bases`)
    by_call: dict[tuple[int, str, tuple | None], list[CallEdge]] = {}
    last: dict[tuple[int, str], tuple] = {}  # (line, call text) -> its callee met last
    labels: list[str] = []  # the label of each edge but the overrides, in order
    for e in edges:
        line, text, kind = e[0], e[1], e[2]
        if kind == "override":
            by_call.setdefault((line, text, last.get((line, text))), []).append(e)
            continue
        ident = e[2:]  # (kind, key, anchor, label)
        if kind == "project" or kind == "external":
            last[line, text] = ident
        never = any(line in r for r in spans) if spans else False
        groups.setdefault((ident, never), []).append(line)
        if caller is not None:
            label = through(p, caller, e) if may_label(e) else ""  # most calls name theirs
            labels.append(label)
            if label:
                how.setdefault((line, ident), label)
    if how:  # a line that names the callee once needs no label
        for e, label in zip([e for e in edges if e[2] != "override"], labels):
            if not label:
                how.pop((e[0], e[2:]), None)
    # (base callee or None, *overrides) -> lines: each group goes after its base
    override_groups: dict[tuple, list[int]] = {}
    # the project callees of each line with overrides, then those outside the build
    named: dict[int, list[CallEdge]] = {}
    if by_call:
        for kind in ("project", "external"):
            for e in edges:
                if e.kind == kind:
                    named.setdefault(e.line, []).append(e)
    for (line, text, base), found in by_call.items():
        if base is None or base[3].rpartition(".")[2] != found[0].label.rpartition(".")[2]:
            base = _base(named.get(line, ()), text, found[0].label)
        override_groups.setdefault((base, *sorted(
            {(e.key, e.anchor, e.label) for e in found})), []).append(line)
    after: dict[tuple, list[str]] = {}  # base callee -> its override groups
    one_of: list[tuple[int, str]] = []
    for (base, *callees), lines in override_groups.items():
        names = ", ".join(callee_link(p, key, anchor, label) for key, anchor, label in callees)
        if base is None:
            one_of.append((min(lines), f"one of: {names} ({line_links(lines)})"))
        else:
            after.setdefault(base, []).append(f"or an override in: {names} "
                                              f"({line_links(lines)})")
    one_of.sort()
    parts: dict[str, list[str]] = {"project": [], "closure": [], "read": [], "callback": [],
                                   "external": []}
    heads = p.callee_heads  # a file's definitions call the same callees again and again
    # (kind, labelled lines) -> (the entry's place in parts[kind], its callees)
    alike: dict[tuple[str, str], tuple[int, list[str]]] = {}
    for (ident, never), lines in groups.items():
        head = heads.get(ident)
        if head is None:
            kind, key, anchor, label = ident
            head = heads[ident] = (code(label) if kind == "external" else
                                   callee_link(p, key, anchor, label)
                                   + _condition(p, key, anchor))
        if ident[0] == "project" and one_of:  # a "one of" group goes in line order
            while one_of and one_of[0][0] < min(lines):
                parts["project"].append(one_of.pop(0)[1])
        labelled = bool(how) and any((line, ident) in how for line in lines)
        shown = _lines(lines, ident, how) if labelled else line_links(lines)
        others = after.pop(ident, ()) if after else ()
        if labelled and ident[0] != "external" and not never and not others:
            # the callees of the same labelled lines are one entry: A, B (line 9, through f)
            same = alike.get((ident[0], shown))
            if same is not None:
                same[1].append(head)
                continue
            alike[ident[0], shown] = (len(parts[ident[0]]), [head])
            parts[ident[0]].append("")  # made below
            continue
        entry = f"{head} ({shown}){CHECKING_NOTE}" if never else f"{head} ({shown})"
        parts[ident[0]].append(", ".join([entry, *others]) if others else entry)
    for (kind, shown), (at, same) in alike.items():  # the callees, then the labelled lines
        parts[kind][at] = f"{', '.join(same)} ({shown})"
    parts["project"] += [text for _line, text in one_of]
    entries = parts["project"] + parts["closure"] + parts["read"] + parts["callback"]
    if parts["external"]:
        entries.append("outside this build: " + ", ".join(parts["external"]))
    if entries:
        entries[0] = prefix + entries[0]
    return "; ".join(entries) if entries else prefix


def _lines(lines: list[int], callee: tuple, how: dict[tuple[int, tuple], str]) -> str:
    """The lines of the calls of one callee, those of each label (see
    :func:`~indexgen.render.through.through`) apart, the label after its lines: ``line 8;
    lines 12, 14, through `rule`: an element of `self.rules```."""
    by: dict[str, list[int]] = {}
    for line in lines:
        by.setdefault(how.get((line, callee), ""), []).append(line)
    return "; ".join(line_links(found) + (f", {label}" if label else "")
                     for label, found in by.items())


def _base(same: Iterable[CallEdge], text: str, override: str) -> tuple | None:
    """The callee (``(kind, key, anchor, label)``) that the overrides of the call ``text``
    are alternatives to, of the callees ``same`` of its line (project callees first, then
    those outside the build: ``io.BytesIO.write`` for a ``CopyingIO(io.BytesIO)`` of the
    build): the one that call names, else (a name bound to a method, ``report = e.show;
    report()``) the one of the overrides' method name; None where the call names none.  A
    name outside the build must be the overrides' method (the ``forward`` methods that
    ``torch.autograd.Function.apply`` runs override no ``apply``: "one of")."""
    method = override.rpartition(".")[2]
    for e in same:
        if e.text == text and (e[2] != "external" or e[5].rpartition(".")[2] == method):
            return e[2:]
    for e in same:
        if e.label.rpartition(".")[2] == method:
            return e[2:]
    return None


def _condition(p: Page, key: str, anchor: str) -> str:
    """`` if <condition>`` after a callee that is one of the definitions a condition picks
    at import time (see :mod:`indexgen.extract.alternatives`), else ''."""
    found = p.ctx.conditions.get(f"{key}#{anchor}") if p.ctx.conditions else None
    if found is None:
        return ""
    return " " + escape_inline(f"(if {found})" if found else "(unless redefined)")


def format_callers(p: Page, refs: list[CallerRef], prefix: str = "") -> str:
    """Call sites reaching a definition: the calling definition (linked) and line links.
    A call that runs a function nested in the definition says so (``define (line 5: its
    nested do_it)``, ``other.use (line 9: its nested do_it)``), where the caller may be the
    definition itself; the lines of one caller that run the definition itself and those
    that run a nested function are separate entries (``run (line 7); run (line 6: its
    nested helper)``).  The text starts with ``prefix`` (as :func:`format_calls`)."""
    groups: dict[tuple[str, str, str, str], list[int]] = {}
    for r in refs:  # (key, caller, anchor, nested) -> lines
        groups.setdefault((r[0], r[1], r[2], r[4]), []).append(r[3])
    items = []
    heads = p.caller_heads  # the same callers reach many definitions of a file
    for (key, caller, anchor, inner), lines in groups.items():
        found = heads.get((key, caller, anchor))
        if found is None:
            found = heads[key, caller, anchor] = _caller_head(p, key, caller, anchor)
        head, target = found
        if inner:
            items.append(f"{head} ({line_links(lines, target)}: its nested {code(inner)})")
        else:
            items.append(f"{head} ({line_links(lines, target)})")
    if items:
        items[0] = prefix + items[0]
    return "; ".join(items) if items else prefix


def _caller_head(p: Page, key: str, caller: str, anchor: str) -> tuple[str, str]:
    """A calling definition of :func:`format_callers` (``caller`` in the file ``key``, ''
    for its module level) as a link, and the link target of its file's page for its line
    links ('' for this page)."""
    target = "" if key == p.key else link_target(p.docs_link(key))
    name = p.display(key).rpartition("/")[2]  # posixpath.basename, inline
    if caller:
        label = caller if key == p.key else f"{name.removesuffix('.py')}.{caller}"
        return link(code(label), p.docs_link(key, anchor)), target
    return f"module level of {link(code(name), p.docs_link(key, MODULE_LEVEL))}", target


def call_graph_summary(p: Page) -> list[str]:
    """Which files this file calls into and is called from (Dependencies section)."""
    here = p.key  # e[2], e[3]: an edge's kind and key; r[0]: a call site's key
    into = Counter([e[3] for out in p.ctx.calls.values() for e in out
                    if e[2] == "project" and e[3] != here])
    from_ = Counter([r[0] for refs in p.ctx.called_by.values() for r in refs if r[0] != here])
    if not into and not from_:
        return ["No calls to or from other files of this build."]
    out = []
    for title, found in (("Calls into", into), ("Called from", from_)):
        if found:
            out.append(f"- **{title}**: " + ", ".join(
                f"{link(p.file_label(k), p.docs_link(k))} ({count(n, 'call')})"
                for k, n in sorted(found.items())))
    return out
