"""Shared helpers for the indexgen tests: fixture paths, configs and a link checker."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import markdown
from indexgen import Config, build
from indexgen.analyze.project import Project, compact
from indexgen.extract.pipeline import extract_source
from indexgen.extract.source import module_name
from page_claims import page_call_edges, page_callers

FIXTURES = Path(__file__).parent / "fixtures"
SAMPLE = FIXTURES / "sample"

_LINK = re.compile(r"(?<!\\)\]\(([^)\s]+)\)")
_ID = re.compile(r'id="([^"]+)"')
_PRE = re.compile(r"<pre[ >].*?</pre>", flags=re.S)


def sample_config(project: Path, **kwargs) -> Config:
    """Config for a copy of the sample project, pages into ``docs/reference``."""
    kwargs.setdefault("jobs", 1)
    return Config(roots=[project / "src"], out=project / "docs" / "reference",
                  tests=[project / "tests"], base=project, **kwargs)


def line_of(rel: str, text: str) -> int:
    """Line number of the first line of sample file ``rel`` that contains ``text``."""
    lines = (SAMPLE / rel).read_text().split("\n")
    return next(n for n, line in enumerate(lines, 1) if text in line)


def read_tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (hidden ones included, the stat cache left out: it records
    modification times and is never committed) -> its bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*"))
            if p.is_file() and ".indexgen-cache" not in p.relative_to(root).parts}


def anchors_of(text: str) -> set[str]:
    """HTML ids of a page as a site renders it: explicit ids and the ids of its headings.

    Heading ids come from rendering the page with Python-Markdown's ``toc`` extension (the
    extension the site uses), not from indexgen's own slug helper.
    """
    html = markdown.markdown(_PRE.sub("", text), extensions=["toc", "tables", "md_in_html"])
    return set(_ID.findall(text)) | set(_ID.findall(html))


def broken_links(out: Path) -> list[str]:
    """Relative links in the pages under ``out`` whose file or anchor does not exist.

    Links must be relative (no scheme, no leading ``/``) and stay inside ``out``.
    """
    problems = []
    pages = {p.relative_to(out).as_posix(): p.read_text() for p in out.rglob("*.md")}
    ids = {name: anchors_of(text) for name, text in pages.items()}
    for name, text in pages.items():
        folder = Path(name).parent
        for target in _LINK.findall(_PRE.sub("", text)):  # raw <pre> holds no Markdown
            if "://" in target or target.startswith("/"):
                problems.append(f"{name}: non-relative link {target}")
                continue
            path, _, anchor = target.partition("#")
            resolved = (folder / path).as_posix() if path else name
            resolved = Path(resolved).as_posix()
            parts = []
            for part in resolved.split("/"):
                if part == "..":
                    if not parts:
                        problems.append(f"{name}: link leaves the output: {target}")
                        break
                    parts.pop()
                elif part != ".":
                    parts.append(part)
            resolved = "/".join(parts)
            if resolved not in pages:
                problems.append(f"{name}: missing page {target}")
            elif anchor and anchor not in ids[resolved]:
                problems.append(f"{name}: missing anchor {target}")
    return problems


def build_files(root: Path, files: dict[str, str]) -> tuple[Path, Path]:
    """Write ``files`` (relative path -> dedented source) under ``root`` and build their
    pages into ``root``'s sibling ``out`` with one job: ``(root, out)``."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text).lstrip("\n"))
    out = root.parent / "out"
    build(Config(roots=[root], out=out, base=root.parent, jobs=1))
    return root, out


def project_of(files: dict[str, str]) -> Project:
    """The global pass's input for ``files`` (relative path -> dedented source), extracted
    and compacted in memory as a build does, without writing pages."""
    return Project([compact(extract_source(textwrap.dedent(text).lstrip("\n").encode(), "src",
                                           rel, module_name(rel), 10**6))
                    for rel, text in files.items()], {})


def callees_by_mark(files: dict[str, str], rel: str, called_only: bool = False
                    ) -> dict[str, set[str]]:
    """For each line of ``files[rel]`` that ends in a comment ``# MARK``, the labels of the
    callees the global pass (:func:`project_of`) lists for the calls on that line;
    ``called_only``: not the functions passed as callbacks nor the properties read."""
    ctx = project_of(files).contexts()[f"src/{rel}"]
    lines = textwrap.dedent(files[rel]).lstrip("\n").split("\n")
    marks = {line.split("# ")[1]: i for i, line in enumerate(lines, 1) if "# " in line}
    return {m: {e.label for out in ctx.calls.values() for e in out if e.line == at
                and not (called_only and e.kind in ("callback", "read"))}
            for m, at in marks.items()}


def symbol_section(docs: str, anchor: str) -> str:
    """The part of an analysis page (``docs``) about the symbol whose anchor is
    ``sym-<anchor>``: from its anchor to the next symbol's."""
    return docs.split(f'<a id="sym-{anchor}">')[1].split('<a id="sym-')[0]


def calls_line(section: str) -> str:
    """The **Calls** line of a symbol's section."""
    return next(x for x in section.split("\n") if x.startswith("- **Calls**"))


def callees_at(pages: tuple[Path, Path], rel: str, line: int) -> set[str]:
    """The callee anchors the analysis page of ``rel`` lists for the call at ``line`` (of
    ``build_files``' pages), checked against the callees' Called by (the two views of one
    edge must agree)."""
    docs = (pages[1] / f"{rel}_docs.md").read_text()
    calls = {e[3] for e in page_call_edges(docs, rel) if e[4] == line}
    assert calls == {e[3] for e in page_callers(docs, rel) if e[4] == line}
    return calls


def calls_at(pages: tuple[Path, Path], rel: str, marker: str) -> set[str]:
    """The callees (``"module:qualname"``) that the "Calls" of the page of ``rel`` list at
    the first line of its source holding ``marker``, in a tree :func:`build_files` built;
    each edge must also be on its callee's "Called by"."""
    root, out = pages
    line = next(i for i, text in enumerate((root / rel).read_text().split("\n"), 1)
                if marker in text)
    calls = {e for e in page_call_edges((out / f"{rel}_docs.md").read_text(), rel,
                                        overrides=None) if e[4] == line}
    callers = {e for page in out.rglob("*_docs.md")
               for e in page_callers(page.read_text(),
                                     page.relative_to(out).as_posix()[:-len("_docs.md")])}
    assert calls == {e for e in callers if e[0] == rel and e[4] == line}
    return {f"{c.split('/')[-1][:-3]}:{a[4:]}" for _r, _c, c, a, _line in calls}
