"""Code references on the hand-written pages, checked against the code.

Every page ``docs/**/*.md`` outside the generated ``docs/reference/`` names code in
backticks. :func:`check_pages` reports each such name that names nothing: the page, the
line, the reference and the nearest existing name (:mod:`difflib`). What exists comes
from :class:`~docs_site.codeindex.CodeIndex`: our code read statically (``ast`` over
``src/``, ``tools/``, ``tests/``; nothing of ours is imported), torch and the standard
library looked up in the installed modules.

The rules, tried in this order on each backticked text. Fenced code blocks (example user
code) are never read.

1. **A dotted name** ``a.b.c`` (a call ``a.b(...)`` is checked as ``a.b``; a file name
   such as ``fully_shard.py`` is a path, rule 5) is checked when its first part ``a``
   anchors it:

   * one of our top packages (``fsdp_ref``, ``indexgen``, ``docs_site``, ``tests``),
     ``torch`` or a customary alias of it (``nn``, ``F``, ``dist``, ``dcp``, ``FSDP``),
     or a standard-library module;
   * a class of ours or of torch (``CommContext.finish_reductions``,
     ``DTensor.from_local``) or a module-level instance of ours (``recorder.name_buffer``);
   * a module of ours by its last part, when the next part is a function or class at the
     top of some module of ours or nearly one of that module's names
     (``reduction.start_reduction``; also when that module is gone), and it is not a call.

   The rest must then exist: imports and re-exports (``fsdp_ref.fully_shard``) are
   followed, and a class's members are its methods, class-level fields, ``self.x``
   attributes and inherited members. Any other first part is a user's variable
   (``model.unshard()``, ``param.grad``, ``optim.step()``) or another library's class
   (``NF4Tensor``) and is not checked, unless it is within a letter or two of a class of
   ours (a misspelt class).
2. **Text with spaces** (a shell command, an expression, a phrase) is not a reference as
   a whole: only its words that are paths with a file extension
   (``python benchmarks/compare.py``) and the module after ``-m`` are checked.
3. **A class name** alone (``CommContext``) is flagged only when it is not ours or torch's
   and within a letter or two of a class of ours; other bare identifiers (parameters,
   options, stream names) are not references.
4. **A test name** ``test_x`` (``*`` allowed) must be a test function under ``tests/``.
5. **A path**: text with a ``/`` whose first part is a top-level entry of the
   repository, a folder of its code (``fsdp_ref``, ``sanitizer``) or ``torch``; or a
   bare ``name.py``. It exists when a file or folder of the repository ends with it
   (``fsdp_ref/streams.py``); one starting ``torch/`` is looked up in the installed
   torch, and a bare name also in torch's ``torch/distributed/fsdp/`` (the upstream the
   pages compare with: ``_fsdp_param_group.py``). ``*`` and ``{a,b}`` are
   expanded; a ``#fragment`` or ``:line`` is dropped; ``path::name`` also needs ``name``
   defined in that file. Other paths are placeholders (``ROOT/a/b.py``) or pages of the
   built site (``api/**``) and are not checked.
6. **Stream-wait sites**: in a table with a ``site`` column, each site must be the
   literal ``site`` argument of a wait call in ``src/``, and a ``where`` cell must name
   the function or method whose body issues that wait.

Options and values (``reshard_after_forward=True``), plain words and bare identifiers
are not references. Run ``python tools/docs_site/coderefs.py`` (exit status 1 on a
finding); ``tests/docs/test_coderefs.py`` runs it on every page under ``make test``.
"""

from __future__ import annotations

import difflib
import fnmatch
import re
import sys
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a script: tools/ on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from docs_site.codeindex import OURS, CodeIndex, defs_in, members, near, runtime  # noqa: E402

__all__ = ["Finding", "check_page", "check_pages", "pages"]

ALIASES = {"nn": "torch.nn", "F": "torch.nn.functional", "dist": "torch.distributed",
           "dcp": "torch.distributed.checkpoint",
           "FSDP": "torch.distributed.fsdp.FullyShardedDataParallel"}
UPSTREAM = "torch/distributed/fsdp/"
EXTENSIONS = {"py", "md", "json", "toml", "yml", "yaml", "svg", "js", "css", "txt", "cfg",
              "sh", "html"}
_ID = r"[A-Za-z_]\w*"
_DOTTED = re.compile(rf"({_ID}(?:\.{_ID})+)(\(.*\))?")
_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_CELL = re.compile(r"\|(?=(?:[^`]*`[^`]*`)*[^`]*$)")  # a | outside backticks
_Problem = tuple[str, str, "str | None"]  # (reference, what is wrong, nearest name)


@dataclass(frozen=True)
class Finding:
    """A code reference on a page that names nothing in the code.

    Attributes:
        page: the page, relative to the repository.
        line: its line (1-based).
        ref: the reference as written.
        problem: what is wrong.
        nearest: the nearest existing name, or ``None`` when none is close.
    """

    page: str
    line: int
    ref: str
    problem: str
    nearest: str | None

    def __str__(self) -> str:
        close = f"nearest existing name: `{self.nearest}`" if self.nearest else "no close name"
        return f"{self.page}:{self.line}: `{self.ref}` {self.problem}; {close}"


def _close(word: str, candidates, cutoff: float) -> bool:
    return bool(difflib.get_close_matches(word, list(candidates), n=1, cutoff=cutoff))


def _name(index: CodeIndex, parts: list[str], called: bool):
    """``(exists, what it resolves to, nearest)`` for a dotted name (rule 1), or ``None``
    when nothing anchors it."""
    a, rest, text = parts[0], parts[1:], ".".join(parts)
    if a == "torch" or a in ALIASES or a in sys.stdlib_module_names:
        ok, close = runtime(".".join([ALIASES.get(a, a), *rest]))
        close = close and a + close[len(ALIASES.get(a, a)):]  # written as the page wrote it
        return ok, [text] if ok else [], close
    starts = ([a] if a in OURS else []) + index.classes.get(a, []) + index.instances.get(a, [])
    mods = index.shorts.get(a, [])
    anchored = bool(starts) or (not called and a[:1].islower() and (
        rest[0] in index.tops
        or _close(rest[0], {n for m in mods for n in index.children[m]}, 0.8)))
    starts += mods
    torch_cls = index.torch_classes().get(a, [])
    if not anchored and not torch_cls:
        if not (a[:1].isupper() and _close(a, index.classes, 0.85)):
            return None
    found = [q for start in starts for q in index.resolve(start, rest)]
    if not found and any(members(cls, a, rest)[0] for cls in torch_cls):
        found = [text]
    close = next((n for cls in torch_cls if (n := members(cls, a, rest)[1])), None)
    if not found and not close:  # the same last name elsewhere (a move) before a near one
        names = index.suffixes(len(parts))
        close = near(text, [n for n in names if n.rpartition(".")[2] == parts[-1]])
        close = close or near(text, names)
    return bool(found), found, close


def _path(index: CodeIndex, text: str, needs_ext: bool = False):
    """``(exists, nearest, problem)`` for a path (rule 5), ``None`` when none of ours."""
    path, _, names = text.split("#")[0].partition("::")
    path = re.sub(r":\d+$", "", path).removeprefix("./")
    slash, path = "/" in path, path.rstrip("/")
    ext = path.rpartition(".")[2] if "." in path.rpartition("/")[2] else ""
    if (slash and path.split("/")[0] not in index.roots) or (not slash and ext != "py") or (
            needs_ext and ext not in EXTENSIONS):
        return None
    # torch's files: any under an explicit torch/...; a bare name only from upstream FSDP
    torch = "torch/" if path.split("/")[0] == "torch" else "-" if slash else UPSTREAM
    alts = [path]
    if m := re.search(r"\{([^}]*)\}", path):
        alts = [path[:m.start()] + alt + path[m.end():] for alt in m.group(1).split(",")]
    if not all(index.match(alt, torch) for alt in alts):
        depth = path.count("/") + 1
        return (False, near(path, {"/".join(p.split("/")[-depth:]) for p in index.paths
                                   if not p.startswith("torch/") or p.startswith(torch)}),
                "is no file of the repository" + (" or of torch" if torch != "-" else ""))
    if names:
        defined = {d for hit in index.match(path, torch) for d in defs_in(index.repo / hit)}
        ok = bool(fnmatch.filter(defined, names))
        return ok, None if ok else near(names, defined), f"names nothing defined in {path}"
    return True, None, ""


def _check(index: CodeIndex, text: str) -> list[_Problem]:
    """The problems of one backticked text (rules 1 to 5)."""
    m = _DOTTED.fullmatch(text)
    if m and not m.group(2) and text.rpartition(".")[2] in EXTENSIONS:
        m = None  # a file name
    if m:
        got = _name(index, m.group(1).split("."), bool(m.group(2)))
        return [(text, "names nothing in the code", got[2])] if got and not got[0] else []
    out: list[_Problem] = []
    if " " in text:
        words = text.split()
        for i, word in enumerate(words):
            word = word.strip("'\",;()")
            got = _path(index, word, needs_ext=True)
            if got and not got[0]:
                out.append((word, got[2], got[1]))
            is_module = any(kind == "module" for kind, _ in index.defs.get(word, ()))
            name = _name(index, word.split("."), False) if (
                i and words[i - 1] == "-m" and _DOTTED.fullmatch(word)
                and not is_module) else None
            if name and not name[0]:
                out.append((word, "is no module", name[2]))
    elif re.fullmatch(r"_*[A-Z]\w*[a-z]\w*", text):
        known = text in index.names or text in index.torch_classes()
        close = None if known else near(text, index.classes)
        if close and difflib.SequenceMatcher(None, text, close).ratio() >= 0.85:
            out.append((text, "names no class of ours or of torch", close))
    elif re.fullmatch(r"test_\w+\*?", text):
        tests = {q.rpartition(".")[2] for q in index.defs if q.startswith("tests.")}
        if not fnmatch.filter(tests, text):
            out.append((text, "is no test function under tests/", near(text, tests)))
    elif (got := _path(index, text)) and not got[0]:
        out.append((text, got[2], got[1]))
    return out


def _site_row(index: CodeIndex, header: list[str], cells: list[str]) -> list[_Problem]:
    """Rule 6 on one row of a table with a ``site`` column."""
    def ticked(column: str) -> list[str]:
        i = header.index(column) if column in header else len(cells)
        return re.findall(r"`([^`]+)`", cells[i]) if i < len(cells) else []

    out: list[_Problem] = []
    for site in ticked("site"):
        if site not in index.waits:
            out.append((site, "is the site of no wait in src/", near(site, index.waits)))
            continue
        for where in ticked("where"):
            got = _name(index, where.split("."), False) if _DOTTED.fullmatch(where) else None
            for fn in index.waits[site]:
                if got is None or fn not in got[1]:
                    issuer = ".".join(fn.split(".")[-2:])  # Class.method or module.function
                    out.append((where, f"does not issue the wait `{site}` (`{issuer}` "
                                       "does)", issuer))
    return out


def pages(repo: Path) -> list[Path]:
    """The hand-written pages: ``docs/**/*.md`` outside the generated ``docs/reference/``."""
    docs = repo / "docs"
    return sorted(p for p in docs.rglob("*.md") if p.relative_to(docs).parts[0] != "reference")


def check_page(index: CodeIndex, path: Path, name: str | None = None) -> list[Finding]:
    """Every code reference on one page that names nothing.

    Args:
        index: what exists (:class:`~docs_site.codeindex.CodeIndex` of the repository).
        path: the page.
        name: the page's name in the findings; by default its path in the repository.
    """
    page = name or path.relative_to(index.repo).as_posix()
    findings: list[Finding] = []
    fence, header = "", None
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fence = "" if fence and stripped.startswith(fence) else fence or stripped[:3]
            continue
        if fence:
            continue
        problems: list[_Problem] = []
        if not stripped.startswith("|"):
            header = None
        else:
            cells = [c.strip() for c in _CELL.split(stripped.strip("|"))]
            if header is None:
                header = [c.lower() for c in cells]
            elif "site" in header and not set("".join(cells)) <= set("-: "):
                problems = _site_row(index, header, cells)
        reported = {ref for ref, _, _ in problems}
        for m in _SPAN.finditer(line):
            problems += [p for p in _check(index, m.group(2).strip()) if p[0] not in reported]
        findings += [Finding(page, lineno, *p) for p in problems]
    return findings


def check_pages(repo: Path) -> list[Finding]:
    """Every code reference that names nothing, on every hand-written page of ``repo``."""
    index = CodeIndex(repo)
    return [f for page in pages(repo) for f in check_page(index, page)]


def main() -> int:
    """Print the findings on this repository's pages; exit status 1 when there are any."""
    findings = check_pages(Path(__file__).resolve().parents[2])
    print("\n".join(map(str, findings)) or "every code reference on the pages names existing code")
    return 1 if findings else 0


if __name__ == "__main__":
    raise SystemExit(main())
