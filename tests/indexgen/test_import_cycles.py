"""No module of indexgen imports, through others, a module that imports it -- type-only
imports (``if TYPE_CHECKING:``) included: ``run.settled`` takes what it reads of a build as
arguments instead of reading a ``Plan``, which imports it.

``from indexgen.run import fanout`` is read as an import of the module ``fanout`` (the
package itself is initialized before any of its modules, never by them).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "tools" / "indexgen"


def _modules(root: Path) -> dict[str, Path]:
    return {".".join(p.relative_to(root.parent).with_suffix("").parts).removesuffix(
        ".__init__"): p for p in root.rglob("*.py")}


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                name = f"{node.module}.{alias.name}"
                found.add(name if name in modules else node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found & modules.keys()


def import_cycle(root: Path) -> list[str] | None:
    """One cycle of imports among the modules of the package at ``root``, or None."""
    modules = _modules(root)
    graph = {m: _imports(p, modules) - {m} for m, p in modules.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for t in sorted(graph[m]):
            if state.get(t) == 1:
                return [*stack[stack.index(t):], t]
            if t not in state and (cycle := visit(t)):
                return cycle
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (cycle := visit(m)):
            return cycle
    return None


def test_the_finder_finds_a_type_only_cycle(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "run").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "run" / "__init__.py").write_text("")
    (pkg / "run" / "a.py").write_text("from pkg.run.b import B\n")
    (pkg / "run" / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                      "    from pkg.run.a import A\n")
    assert import_cycle(pkg) == ["pkg.run.a", "pkg.run.b", "pkg.run.a"]
    (pkg / "run" / "b.py").write_text("from pkg.run import c\n")  # a module, not the package
    (pkg / "run" / "c.py").write_text("")
    assert import_cycle(pkg) is None


def test_no_import_cycle_in_indexgen():
    assert import_cycle(ROOT) is None
