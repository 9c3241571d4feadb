"""Sampled precision of the pages' "Calls" edges on a package (issue 31): is each edge a call
its call site can really make?

Draws ``--n`` edges at random (a fixed seed) from every "Calls" list of the pages that
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
their verdicts (``--verdicts FILE``: one ``caller_rel:line callee_anchor ok|wrong reason`` a
line) complete the figure.  Nothing here imports indexgen: the pages are read back with
``page_claims.py``, the code with :mod:`ast`::

    python tests/indexgen/precision_sample.py SRC/pkg PAGES FIGURES.json [--verdicts V.txt]
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from page_claims import page_call_edges  # noqa: E402


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
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                self.calls.setdefault(node.lineno, []).append(node)
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("package", type=Path)
    parser.add_argument("pages", type=Path)
    parser.add_argument("figures", type=Path)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--verdicts", type=Path, default=None)
    args = parser.parse_args(argv)
    root = args.package.resolve()
    observed = {tuple(e) for e in json.loads(args.figures.read_text())["observed_edges"]}
    edges = _edges(root, args.pages)
    sample = random.Random(args.seed).sample(edges, min(args.n, len(edges)))
    mods: dict[str, _Module] = {}
    bases: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        bases.update(_Module(path).bases)
    verdicts = {}
    if args.verdicts and args.verdicts.exists():
        for row in args.verdicts.read_text().split("\n"):
            if row.strip() and not row.startswith("#"):
                site, anchor, verdict, *_why = row.split()
                verdicts[(site, anchor)] = verdict
    counts: dict[str, int] = {}
    for edge in sorted(sample):
        how = judge(root, edge, observed, mods, bases)
        site = f"{edge[0]}:{edge[4]}"
        if not how:
            verdict = verdicts.get((site, edge[3]))
            how = f"by hand: {verdict}" if verdict else "to judge"
            source = mods[edge[0]].lines[edge[4] - 1].strip()
            print(f"{site} {edge[3]}  # {edge[1]}: {source}")
        counts[how] = counts.get(how, 0) + 1
    right = sum(n for how, n in counts.items() if not how.endswith(("wrong", "to judge")))
    print(json.dumps({"edges": len(edges), "sample": len(sample), **counts,
                      "precision": right / len(sample)}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
