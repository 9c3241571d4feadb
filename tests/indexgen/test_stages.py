"""indexgen's pipeline is visible in its folders: one package per stage, and a stage imports
only from the stages before it.

The order: the shared modules at the top of the package (``errors``, ``paths``, ``layout``),
then ``extract``, ``analyze``, ``render``, ``run``, and last the package's face
(``__init__``, ``__main__``).  Every import of an ``indexgen`` module is checked, those inside
functions and under ``TYPE_CHECKING`` too, read from the syntax trees of the sources.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "tools" / "indexgen"
SHARED = ("errors", "paths", "layout")
STAGES = ("extract", "analyze", "render", "run")
FACE = ("__init__", "__main__")


def rank(module: str) -> int:
    """The place of a module of indexgen (dotted, without ``indexgen.``) in the order."""
    head = module.split(".")[0]
    if head in SHARED:
        return 0
    if head in STAGES:
        return 1 + STAGES.index(head)
    if head in FACE:
        return 1 + len(STAGES)
    raise AssertionError(f"indexgen.{module} belongs to no stage: put it in one of "
                         f"{STAGES} or make it shared ({SHARED})")


def module_of(path: Path) -> str:
    rel = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(rel[:-1] if rel[-1] == "__init__" and len(rel) > 1 else rel)


def imported(tree: ast.Module) -> list[tuple[str, int]]:
    """(indexgen module without the prefix, line) of every import of indexgen in a tree."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name.removeprefix("indexgen."), node.lineno) for a in node.names
                      if a.name.startswith("indexgen.")]
        elif isinstance(node, ast.ImportFrom) and node.level:
            raise AssertionError(f"relative import at line {node.lineno}: write it absolute")
        elif isinstance(node, ast.ImportFrom) and node.module == "indexgen":
            # a shared module, a stage package, or else a name the package's face re-exports
            found += [(a.name if a.name in (*SHARED, *STAGES) else "__init__", node.lineno)
                      for a in node.names]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("indexgen."):
            found.append((node.module.removeprefix("indexgen."), node.lineno))
    return found


def violations(sources: dict[str, str]) -> list[str]:
    """Imports from a later stage, as ``module line: imports target``."""
    bad = []
    for module, text in sorted(sources.items()):
        for target, line in imported(ast.parse(text)):
            if rank(target) > rank(module):
                bad.append(f"indexgen.{module} line {line}: imports indexgen.{target}")
    return bad


def test_every_module_lies_in_a_stage_package():
    top = sorted(p.stem for p in PACKAGE.glob("*.py"))
    assert top == sorted((*SHARED, *FACE)), (
        f"modules at the top of tools/indexgen: {top}; put each in a stage package")
    for stage in STAGES:
        assert (PACKAGE / stage / "__init__.py").is_file()
        assert ast.get_docstring(ast.parse((PACKAGE / stage / "__init__.py").read_text()))


def test_imports_flow_from_later_stages_to_earlier_ones():
    sources = {module_of(p): p.read_text() for p in sorted(PACKAGE.rglob("*.py"))}
    assert len(sources) > 30
    assert violations(sources) == []


@pytest.mark.parametrize("module, text, bad", [
    ("extract.model", "from indexgen.render.page import Page\n", True),
    ("extract.model", "def f():\n    from indexgen.run import plan\n", True),
    ("analyze.project", "from indexgen.extract import rules\n", False),
    ("render.page", "import indexgen.run.jobs\n", True),
    ("errors", "from indexgen.extract.model import Call\n", True),
    ("run.cli", "from indexgen import build\n", True),  # the face re-exports: a later stage
])
def test_the_check_catches_an_import_from_a_later_stage(module, text, bad):
    found = violations({module: text})
    assert bool(found) is bad, found
