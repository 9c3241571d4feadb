"""Stage 3a (continued): the Detailed Analysis section of the analysis page, one entry per
definition, then the module attributes and the calls made at module level.

An entry is its head (anchor, heading, signature, facts), its docstring, then its bullets:
assigned attributes, types, and the calls it makes and receives (:mod:`indexgen.render.calls`).
The head and the assigned attributes depend on the summary alone, so a worker makes them
ahead of the global pass (:func:`heads_ahead`); the rest waits for the file's context.
"""

from __future__ import annotations

from indexgen.render.calls import calls_lines
from indexgen.render.markdown import anchor, code, link
from indexgen.render.page import MODULE_LEVEL, Page, lines_link


def blank_joined(blocks: list[str]) -> list[str]:
    """Markdown blocks with a blank line between each two (none after the last)."""
    out = []
    for block in blocks:
        out += [block, ""]
    return out[:-1]


def detailed(p: Page, out: list[str], source: str | None) -> None:
    """Render the Detailed Analysis section into ``out``."""
    s = p.s
    module_calls = calls_lines(p, "")
    if not s.definitions and not s.attributes and not module_calls:
        out.append("No classes, functions or module attributes.")
        return
    stubs: dict[str, int] = {}
    for i, d in enumerate(s.definitions):
        if d.overload:
            stubs[d.qualname] = stubs.get(d.qualname, 0) + 1
            out += _definition(p, i, stubs[d.qualname])
        else:
            out += _definition(p, i, 0)
    if s.attributes:
        out += ["### Module attributes", ""]
        for a in s.attributes:
            text = a.name + (f": {a.annotation}" if a.annotation else "")
            text += f" = {a.value}" if a.value else ""
            kind = "constant" if a.constant else "attribute"
            out.append(f"- {anchor(a.anchor)}{code(text)} ({kind}, "
                       f"{link(f'line {a.lineno}', f'#L{a.lineno}')})")
        out.append("")
    if module_calls:
        out += [anchor(MODULE_LEVEL), "", "### Module level", "",
                "Calls the module makes when it is imported or run, outside its definitions:",
                "", *module_calls, ""]


#: The part of a definition's entry that its context does not change: the lines before its
#: docstring, and its "Assigned attributes" bullet ('' for none).
Head = tuple[list[str], str]


def heads_ahead(p: Page) -> list[Head]:
    """The :data:`Head` of every definition, by position (no context needed:
    :func:`indexgen.run.jobs.prepare` makes them ahead)."""
    stubs: dict[str, int] = {}
    found = []
    for i, d in enumerate(p.s.definitions):
        if d.overload:
            stubs[d.qualname] = stubs.get(d.qualname, 0) + 1
        found.append(_head(p, i, stubs[d.qualname] if d.overload else 0))
    return found


def _head(p: Page, position: int, stub: int) -> Head:
    d = p.s.definitions[position]
    level = "###" if not d.parent else "####"
    if d.kind == "class":
        sig = f"class {d.name}" + (f"({d.signature})" if d.signature else "")
    else:
        sig = ("async def " if "async" in d.labels else "def ") + (d.signature or d.name)
    facts = [d.kind, lines_link(d.lineno, d.end_lineno)]
    labels = [lab for lab in d.labels if lab not in ("async", d.kind)]
    if labels:
        facts.append("labels: " + ", ".join(code(lab) for lab in labels))
    if d.decorators:
        facts.append("decorators: " + ", ".join(code("@" + dec) for dec in d.decorators))
    title = code(d.qualname) + (f" (overload stub {stub})" if stub else "")
    lines = [anchor(d.anchor), "", f"{level} {title}", "", code(sig), "", " · ".join(facts), ""]
    if stub:
        target = p.anchor_of(d.qualname)
        where = (link(code(d.qualname), f"#{target}") if target != d.anchor
                 else "not in this file")
        lines += [f"A `typing.overload` stub: it only declares a signature for type checkers; "
                  f"the implementation is {where}.", ""]
    assigned = ""
    if d.attributes:
        assigned = "- **Assigned attributes**: " + ", ".join(
            f"{code(text)} ({link(f'line {line}', f'#L{line}')})" for text, line in d.attributes)
    return lines, assigned


def _definition(p: Page, position: int, stub: int) -> list[str]:
    d = p.s.definitions[position]
    head, assigned = (p.heads_ahead[position] if p.heads_ahead is not None
                      else _head(p, position, stub))
    lines = list(head)
    doc = p.doc_lines(position)
    if doc:
        lines += [*blank_joined(doc), ""]
    elif not stub:
        lines += ["No docstring.", ""]
    facts = [assigned] if assigned else []
    types = [_type_link(p, name) for name in d.type_refs]
    types = [t for t in types if t]
    if types:
        facts.append("- **Types**: " + ", ".join(types))
    facts += calls_lines(p, d.anchor)
    return lines + (facts + [""] if facts else [])


def _type_link(p: Page, name: str) -> str:
    """A type's name linked to its definition, or '' (once per name and page: a file's
    annotations name the same types again and again)."""
    found = p.type_links.get(name)
    if found is None:
        url = p.linker()("class", name)
        found = p.type_links[name] = link(code(name), url) if url else ""
    return found
