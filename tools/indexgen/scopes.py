"""Stage 1c (continued): which definition each call and finding belongs to.

A line belongs to the innermost definition whose ``def``/``class`` line range holds it (calls
in nested functions and lambdas belong to the enclosing definition; decorators, which run in
the enclosing scope, lie before the ``def`` line and so belong there too).  A call is *local*
when its first name is bound inside its function -- a parameter, an assignment, a loop or
``with`` target, a nested ``def`` -- and not declared ``global``: what it calls is a value known
only at run time.  ``self`` and ``cls`` in methods are not local: the global pass resolves
them in the class.
"""

from __future__ import annotations

from indexgen import rules
from indexgen.identifiers import Walked
from indexgen.model import Call, FileSummary

_EFFECTS = frozenset(rules.PERFORMANCE_CATEGORIES + rules.SECURITY_CATEGORIES)


def _owners(summary: FileSummary) -> list[int]:
    """Index of the innermost definition holding each line (-1 at module level), by line."""
    owner = [-1] * (summary.n_lines + 2)
    defs = summary.definitions
    for i in sorted(range(len(defs)), key=lambda i: (defs[i].lineno, -defs[i].end_lineno)):
        d = defs[i]
        owner[d.lineno: d.end_lineno + 1] = [i] * (d.end_lineno + 1 - d.lineno)
    return owner


def attribute(summary: FileSummary, walked: Walked) -> None:
    """Fill ``summary.calls`` and every definition's ``effects`` from the walk's records."""
    defs = summary.definitions
    owner = _owners(summary)
    top = len(owner) - 1

    def owner_of(line: int) -> int:
        return owner[line] if 0 <= line <= top else -1

    local: dict[int, set[str]] = {}
    in_function = [d.kind != "class" for d in defs]
    for name, line in walked.bindings:  # the most numerous records: owner_of inlined
        i = owner[line] if 0 <= line <= top else -1
        if i >= 0 and in_function[i]:
            names = local.get(i)
            if names is None:
                local[i] = {name}
            else:
                names.add(name)
    for name, line in walked.declared_global:
        local.get(owner_of(line), set()).discard(name)
    calls = []
    for text, line in walked.calls:
        i = owner_of(line)
        if i < 0:
            calls.append(Call("", text, line, text.startswith("(...)")))
            continue
        d = defs[i]
        head = text.split(".", 1)[0]
        is_local = head == "(...)" or (head in local.get(i, ())
                                       and not (head in ("self", "cls") and d.parent))
        calls.append(Call(d.anchor, text, line, is_local))
    calls.sort(key=lambda c: (c.line, c.text))
    summary.calls = calls
    effects: dict[int, set[str]] = {}
    for finding in summary.findings:
        if finding.category in _EFFECTS:
            i = owner_of(finding.lineno)
            if i >= 0:
                effects.setdefault(i, set()).add(finding.category)
    for i, found in effects.items():
        defs[i].effects = sorted(found)
