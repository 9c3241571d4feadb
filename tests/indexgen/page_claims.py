"""Read back the claims of indexgen's pages: keyword entries, "Calls" and "Called by" edges.

Links are resolved by hand (not with indexgen's path helpers) so that the comparison with the
``ast`` oracle (``oracle.py``) stays independent of the code under test.
"""

from __future__ import annotations

import re

_KW_ENTRY = re.compile(r"^- \*\*(`+)(.+?)\1\*\*: \[([\w ]+), line (\d+)\]\(([^)#]+)#([^)]+)\)$",
                       re.M)
_LINK = re.compile(r"\]\(([^)]+)\)")
_BLOCK = re.compile(r'^<a id="(sym-[^"]+|module-level)"></a>$', re.M)


def kw_section(kw: str, title: str) -> str:
    """The text of one ``### title`` section of a keyword page ('' if the page has none)."""
    start = kw.find(f"\n### {title}\n")
    if start < 0:
        return ""
    end = re.search(r"\n##+ ", kw[start + 1:])
    return kw[start: start + 1 + end.start()] if end else kw[start:]


def page_entries(kw: str, title: str) -> list[tuple[str, int]]:
    """(name, line) of the entries of one keywords section."""
    return [(m.group(2), int(m.group(4))) for m in _KW_ENTRY.finditer(kw_section(kw, title))]


def page_call_edges(docs: str, rel: str, overrides: bool | None = None
                    ) -> set[tuple[str, str, str, str, int]]:
    """The project edges a docs page claims in its "Calls" lines (``overrides``: True for
    only the edges of the "or an override in: ..." groups, False for all but those)."""
    edges = set()
    folder = posixpath_dirname(rel)
    for block_anchor, block in _blocks(docs):
        for line in block.split("\n"):
            if not line.startswith("- **Calls**: "):
                continue
            project, _, outside = line.partition("outside this build: ")
            # a name outside the build may be followed by the overrides the build defines
            # ("io.BytesIO.write (lines), or an override in: A, B (lines), os.getcwd
            # (lines)"): each group ends with its lines, the last line link's "))"
            for group in outside.split(", or an override in: ")[1:]:
                project += "; or an override in: " + group[:group.index("))") + 2]
            if overrides is not None:
                # a callee's overrides follow it: "A (lines), or an override in: B, C (lines)"
                parts = [(part, n > 0 or part.startswith("or an override in: "))
                         for x in project.split("; ")
                         for n, part in enumerate(x.split(", or an override in: "))]
                project = "; ".join(x for x, alternative in parts if alternative == overrides)
            # a callee's lines follow it; a group of overrides ("or an override in: A, B")
            # is followed by the lines of the calls that may run any of them
            targets: list[tuple[str, str]] = []
            lines = False
            for m in _LINK.finditer(project):
                href = m.group(1)
                page, _, anchor = href.partition("#")
                if anchor.startswith("L") and anchor[1:].isdigit():
                    lines = True
                    for target in targets:
                        edges.add((rel, block_anchor, target[0], target[1], int(anchor[1:])))
                else:
                    if lines:
                        targets, lines = [], False
                    callee = resolve_page(folder, page) if page else rel
                    targets.append((callee, anchor))
    return edges


def page_callers(docs: str, rel: str) -> set[tuple[str, str, str, str, int]]:
    """The edges a docs page claims in its "Called by" lines: (caller rel, caller anchor,
    this rel, this anchor, line)."""
    edges = set()
    folder = posixpath_dirname(rel)
    for block_anchor, block in _blocks(docs):
        for line in block.split("\n"):
            if not line.startswith("- **Called by**: "):
                continue
            caller = None
            for m in _LINK.finditer(line):
                page, _, anchor = m.group(1).partition("#")
                file_rel = resolve_page(folder, page) if page else rel
                if anchor.startswith("L") and anchor[1:].isdigit():
                    if caller:
                        edges.add((caller[0], caller[1], rel, block_anchor, int(anchor[1:])))
                else:
                    caller = (file_rel, "" if anchor == "module-level" else anchor)
    return edges


def _blocks(docs: str):
    """(anchor, text) of each definition's block; '' for the module level's calls."""
    marks = list(_BLOCK.finditer(docs))
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(docs)
        block = docs[m.end():end].split("\n## ", 1)[0]  # not into the next section
        yield ("" if m.group(1) == "module-level" else m.group(1)), block


def posixpath_dirname(rel: str) -> str:
    return rel.rpartition("/")[0]


def resolve_page(folder: str, page: str) -> str:
    """The source rel of a link to ``..._docs.md`` from a page in ``folder`` (the link
    resolved by hand, not with indexgen's path helpers)."""
    parts = folder.split("/") if folder else []
    for part in page.split("/"):
        if part == "..":
            parts.pop()
        elif part != ".":
            parts.append(part)
    path = "/".join(parts)
    return path[: -len("_docs.md")] if path.endswith("_docs.md") else path
