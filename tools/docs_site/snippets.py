"""The Python snippets of the task pages, as the snippet runner reads them.

Every ```` ```python ```` block of a page in :data:`RUN_PAGES` is a *snippet*: the test
suite runs it on two gloo ranks with torch's ``fully_shard`` and again with fsdp_ref
(``tests/docs/snippet_runner.py``) and compares what the two runs computed. A snippet
starts from the *preamble* (the block marked ``preamble`` on ``using/index.md``: the
process group, a 1-D ``mesh``, ``rank``, seed 0) unless it says otherwise in an HTML
comment on the line right before its fence::

    <!-- snippet: continue -->              runs on in the namespace the previous
                                             snippet of the page left (each library its own)
    <!-- snippet: fsdp_ref, <why> -->        fsdp_ref only (an fsdp_ref-only name, or
                                             something torch cannot run on gloo: say what)
    <!-- snippet: torch, <why> -->           torch only: a statement about torch where
                                             fsdp_ref differs today (say how)
    <!-- snippet: raises <Type> -->          the block must raise <Type> with both
                                             libraries; fsdp_ref's message must start with
                                             torch's (a documented difference is marked
                                             ``raises <Type>, differs: <why>``)
    <!-- snippet: skip, <why> -->            not run (FSDP1 code shown for comparison)
    <!-- snippet: preamble -->               the setting every snippet starts from
    <!-- snippet: output -->                 (before a ```text block) what rank 0 of the
                                             snippet above prints, exactly

Several words combine with ``;`` (``continue; fsdp_ref, ...``). A block without a comment
runs on both libraries from a fresh preamble. Nothing here imports torch: the site build
and the unit tests read the same pages.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

#: The hand-written pages whose Python blocks are all snippets (paths under ``docs/``;
#: a folder ends with ``/``).
RUN_PAGES = ("using/", "troubleshooting.md", "migration.md")
#: The page that holds the preamble block.
PREAMBLE_PAGE = "using/index.md"

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<ticks>`{3,}|~{3,})\s*(?P<info>[^\n`]*)$")
_DIRECTIVE = re.compile(r"^\s*<!--\s*snippet:\s*(?P<body>.*?)\s*-->\s*$")
_WORDS = ("continue", "fsdp_ref", "torch", "raises", "skip", "preamble", "output")


@dataclass
class Snippet:
    """One Python block of a page and how the runner treats it.

    Attributes:
        page: The page, relative to ``docs/``.
        line: 1-based line of the opening fence.
        code: The block's source, dedented.
        cont: Runs on in the namespace the page's previous snippet left.
        only_fsdp_ref: Why it runs on fsdp_ref only (empty: runs on both).
        only_torch: Why it runs on torch only (empty: runs on both).
        raises: The exception type name both libraries must raise (empty: none).
        differs: Why fsdp_ref's message need not start with torch's (``raises`` only).
        skip: Why it is not run (empty: it runs).
        preamble: The setting every snippet starts from.
        output: What rank 0 must print (the ``output`` block after it), or ``None``.
    """

    page: str
    line: int
    code: str
    cont: bool = False
    only_fsdp_ref: str = ""
    only_torch: str = ""
    raises: str = ""
    differs: str = ""
    skip: str = ""
    preamble: bool = False
    output: str | None = None

    @property
    def where(self) -> str:
        """``page:line``, as failures name the snippet."""
        return f"{self.page}:{self.line}"


class SnippetSyntaxError(ValueError):
    """A snippet comment the runner cannot read (a typo would silently change what runs)."""


def _apply(snippet: Snippet, body: str) -> None:
    for part in (p.strip() for p in body.split(";")):
        word, _, rest = part.partition(" ")
        word = word.rstrip(",")
        rest = rest.strip().lstrip(",").strip()
        if word not in _WORDS:
            raise SnippetSyntaxError(
                f"{snippet.where}: unknown snippet word {word!r} in <!-- snippet: {body} -->; "
                f"expected one of {', '.join(_WORDS)}")
        if word in ("fsdp_ref", "torch", "skip") and not rest:
            raise SnippetSyntaxError(f"{snippet.where}: '{word}' needs a reason after a comma")
        if word == "output":
            raise SnippetSyntaxError(f"{snippet.where}: 'output' goes before the ```text "
                                     "block after a snippet, not before a Python block")
        if word == "continue":
            snippet.cont = True
        elif word == "preamble":
            snippet.preamble = True
        elif word == "fsdp_ref":
            snippet.only_fsdp_ref = rest
        elif word == "torch":
            snippet.only_torch = rest
        elif word == "skip":
            snippet.skip = rest
        else:  # raises <Type>[, differs: <why>]
            kind, _, tail = rest.partition(",")
            if not kind.strip().isidentifier():
                raise SnippetSyntaxError(f"{snippet.where}: 'raises' needs an exception type")
            snippet.raises = kind.strip()
            tail = tail.strip()
            if tail:
                if not tail.startswith("differs:") or not tail[len("differs:"):].strip():
                    raise SnippetSyntaxError(
                        f"{snippet.where}: after 'raises {kind.strip()},' only "
                        "'differs: <why>' may follow")
                snippet.differs = tail[len("differs:"):].strip()


def parse(text: str, page: str) -> list[Snippet]:
    """The Python blocks of one page, in order, with their snippet comments applied.

    Args:
        text: The page's Markdown.
        page: Its path relative to ``docs/`` (for messages).

    Returns:
        One :class:`Snippet` per ```` ```python ```` (or ``py``) block.

    Raises:
        SnippetSyntaxError: a snippet comment that is not understood, or one that is
            not followed by a Python block.
    """
    lines = text.splitlines()
    out: list[Snippet] = []
    i = 0
    pending: tuple[int, str] | None = None
    while i < len(lines):
        directive = _DIRECTIVE.match(lines[i])
        if directive:
            pending = (i + 1, directive.group("body"))
            i += 1
            continue
        fence = _FENCE.match(lines[i])
        if not fence:
            if pending and lines[i].strip():
                raise SnippetSyntaxError(
                    f"{page}:{pending[0]}: <!-- snippet: {pending[1]} --> is not right "
                    "before a ```python block")
            i += 1
            continue
        ticks, info = fence.group("ticks"), fence.group("info").strip()
        start = i
        i += 1
        body: list[str] = []
        while i < len(lines) and not lines[i].strip().startswith(ticks):
            body.append(lines[i])
            i += 1
        i += 1  # the closing fence
        language = info.split()[0].lstrip(".{").lower() if info else ""
        if pending and pending[1].strip() == "output":
            if not out or out[-1].output is not None:
                raise SnippetSyntaxError(f"{page}:{pending[0]}: an output block must follow "
                                         "a snippet (one output block each)")
            out[-1].output = textwrap.dedent("\n".join(body)) + "\n"
            pending = None
            continue
        if language not in ("python", "py"):
            if pending:
                raise SnippetSyntaxError(
                    f"{page}:{pending[0]}: <!-- snippet: {pending[1]} --> precedes a "
                    f"{language or 'plain'} block, not a Python one")
            continue
        snippet = Snippet(page, start + 1, textwrap.dedent("\n".join(body)) + "\n")
        if pending:
            _apply(snippet, pending[1])
            pending = None
        out.append(snippet)
    return out


def run_pages(docs: Path) -> list[str]:
    """Every page of :data:`RUN_PAGES` that exists, relative to ``docs``, sorted."""
    pages: set[str] = set()
    for entry in RUN_PAGES:
        if entry.endswith("/"):
            pages.update(p.relative_to(docs).as_posix() for p in (docs / entry).rglob("*.md"))
        elif (docs / entry).is_file():
            pages.add(entry)
    return sorted(pages)


def preamble(docs: Path) -> Snippet:
    """The preamble block (on :data:`PREAMBLE_PAGE`).

    Raises:
        SnippetSyntaxError: when the page has none, or more than one.
    """
    found = [s for s in parse((docs / PREAMBLE_PAGE).read_text(encoding="utf-8"), PREAMBLE_PAGE)
             if s.preamble]
    if len(found) != 1:
        raise SnippetSyntaxError(f"{PREAMBLE_PAGE} must hold exactly one preamble block, "
                                 f"found {len(found)}")
    return found[0]
