"""Sampled precision of the pages' "Calls" edges on a package (issue 31): is each edge a call
its call site can really make?

Draws ``--n`` edges (those whose SHA-256 is smallest: a sample that one edge more or less
elsewhere changes by one edge at most) from every "Calls" list of the pages that
``trace_package.py --pages DIR --json FIGURES`` built and traced, and judges what it can
without reading the code:

- ``observed``: the package's own test suite made that very call (``observed_edges``);
- ``by name``: the call names its callee directly -- a bare name bound to the callee's
  definition or class in the caller's module (by a ``def``/``class`` or an import of that
  name), or ``module.name`` through an imported module (the static name resolution, no type
  inferred);
- ``self``: ``self.m()``/``cls.m()``/``super().m()`` reaching ``m`` of the caller's class, of
  one of its bases, or of a subclass (an override an instance of the subclass runs).

Every other edge is printed with its source line, for a person to judge by reading the code;
their verdicts (``--verdicts FILE``, ``tests/indexgen/precision/<package>.txt``: one
``caller_rel:line callee_anchor ok|wrong reason`` a line) complete the figure.  A sampled edge
without a verdict and a verdict of an edge the pages no longer list are printed and make the
exit status 1 (``test_trace_recall.py`` fails on them too).  Nothing here imports indexgen: the pages are read back with
``page_claims.py``, the code with :mod:`ast`::

    python tests/indexgen/precision_sample.py SRC/pkg PAGES FIGURES.json [--verdicts V.txt]
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from page_claims import page_call_edges  # noqa: E402
from reported_lines import reported_lines  # noqa: E402


def _edges(root: Path, pages: Path) -> list[tuple]:
    found = set()
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        page = pages / f"{rel}_docs.md"
        if page.is_file():
            found |= page_call_edges(page.read_text(), rel)
    return sorted(found)


class _Module:
    """What the judge reads of one module: its calls by line, the names it binds at the top,
    the modules it imports, its classes' bases (last names)."""

    def __init__(self, path: Path) -> None:
        self.lines = path.read_text().split("\n")
        tree = ast.parse(path.read_text())
        self.calls: dict[int, list[ast.Call]] = {}
        self.bound: set[str] = set()
        self.modules: set[str] = set()
        self.bases: dict[str, list[str]] = {}
        at = reported_lines(tree)  # a call's line: the one Python reports, the pages' too
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                self.calls.setdefault(at[id(node)], []).append(node)
            elif isinstance(node, ast.ClassDef):
                self.bases[node.name] = [ast.unparse(b).split("[")[0].rpartition(".")[2]
                                         for b in node.bases]
            elif isinstance(node, ast.Import):
                self.modules |= {a.asname or a.name.partition(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                self.bound |= {a.asname or a.name for a in node.names}
                self.modules |= {a.asname or a.name for a in node.names}  # maybe modules
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.bound.add(node.name)


def _related(bases: dict[str, list[str]], a: str, b: str) -> bool:
    """Whether class ``a`` is ``b``, a subclass or a base of it (by last names)."""
    def ancestors(c: str) -> set[str]:
        seen, todo = set(), [c]
        while todo:
            x = todo.pop()
            if x not in seen:
                seen.add(x)
                todo += bases.get(x, [])
        return seen
    return b in ancestors(a) or a in ancestors(b)


def judge(root: Path, edge: tuple, observed: set, mods: dict, bases: dict) -> str:
    """``observed``, ``by name``, ``self`` or '' (to be judged by hand)."""
    if edge in observed:
        return "observed"
    caller_rel, caller, _callee_rel, callee, line = edge
    callee = callee.removeprefix("sym-").split("-")[0]
    name = callee.rpartition(".")[2]
    owner = callee.rpartition(".")[0]
    if name == "__init__":
        name, owner = owner.rpartition(".")[2], owner.rpartition(".")[0]
    mod = mods.setdefault(caller_rel, _Module(root / caller_rel))
    caller_class = caller.removeprefix("sym-").rpartition(".")[0].split("-")[0]
    for call in mod.calls.get(line, ()):
        func = call.func
        if isinstance(func, ast.Name) and func.id == name and name in mod.bound:
            return "by name"
        if not isinstance(func, ast.Attribute) or func.attr != name:
            continue
        value = func.value
        if isinstance(value, ast.Name) and value.id in mod.modules:
            return "by name"
        is_self = isinstance(value, ast.Name) and value.id in ("self", "cls") or (
            isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
            and value.func.id == "super")
        if is_self and caller_class and owner and _related(
                bases, caller_class.rpartition(".")[2], owner.rpartition(".")[2]):
            return "self"
    return ""


def sample(edges: list[tuple], n: int) -> list[tuple]:
    """The ``n`` edges whose SHA-256 is smallest: a uniform sample that an edge appearing or
    disappearing elsewhere changes by at most one edge (so the hand verdicts stay valid)."""
    def key(edge: tuple) -> str:
        return hashlib.sha256(repr(tuple(edge)).encode()).hexdigest()
    return sorted(sorted(edges, key=key)[:n])


def read_verdicts(path: Path | None) -> dict[tuple[str, str], str]:
    """``(caller_rel:line, callee anchor) -> 'ok'|'wrong'`` of a judgment file."""
    verdicts = {}
    if path and path.exists():
        for row in path.read_text().split("\n"):
            if row.strip() and not row.startswith("#"):
                site, anchor, verdict, *_why = row.split()
                if verdict not in ("ok", "wrong"):
                    raise ValueError(f"{path}: verdict {verdict!r} is neither ok nor wrong "
                                     f"in {row!r}")
                verdicts[(site, anchor)] = verdict
    return verdicts


def measure(root: Path, pages: Path, observed: set, verdicts: dict, n: int = 100) -> dict:
    """The sampled precision of the pages of the package at ``root``, with what it rests on:
    ``counts`` per way of judging, ``to_judge`` (sampled edges no rule and no verdict
    judges, as lines to complete the judgment file with), ``stale`` (verdicts of edges the
    pages no longer list) and ``wrong`` (the sampled edges judged wrong)."""
    root = root.resolve()
    edges = _edges(root, pages)
    drawn = sample(edges, n)
    mods: dict[str, _Module] = {}
    bases: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        bases.update(_Module(path).bases)
    counts: dict[str, int] = {}
    to_judge, wrong = [], []
    for edge in drawn:
        how = judge(root, edge, observed, mods, bases)
        site = f"{edge[0]}:{edge[4]}"
        if not how:
            verdict = verdicts.get((site, edge[3]))
            how = f"by hand: {verdict}" if verdict else "to judge"
            source = mods[edge[0]].lines[edge[4] - 1].strip()
            row = f"{site} {edge[3]}  # {edge[1]}: {source}"
            (wrong if verdict == "wrong" else to_judge if not verdict else []).append(row)
        counts[how] = counts.get(how, 0) + 1
    right = sum(k for how, k in counts.items() if not how.endswith(("wrong", "to judge")))
    listed = {(f"{e[0]}:{e[4]}", e[3]) for e in edges}
    return {"edges": len(edges), "sample": len(drawn), "counts": counts,
            "precision": right / len(drawn) if drawn else 0.0, "to_judge": to_judge,
            "wrong": wrong, "stale": sorted(" ".join(k) for k in verdicts if k not in listed)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("package", type=Path)
    parser.add_argument("pages", type=Path)
    parser.add_argument("figures", type=Path)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--verdicts", type=Path, default=None)
    args = parser.parse_args(argv)
    observed = {tuple(e) for e in json.loads(args.figures.read_text())["observed_edges"]}
    found = measure(args.package, args.pages, observed, read_verdicts(args.verdicts), args.n)
    for title in ("to_judge", "wrong", "stale"):
        if found[title]:
            print(f"# {title.replace('_', ' ')}:", *found[title], sep="\n")
    print(json.dumps({k: v for k, v in found.items() if k not in ("to_judge", "wrong")},
                     indent=2))
    return 1 if found["to_judge"] or found["stale"] else 0


if __name__ == "__main__":
    sys.exit(main())
