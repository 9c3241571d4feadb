"""indexgen on the installed torch's ``torch/distributed/fsdp``, checked against ``ast``.

The package is located with ``importlib.util.find_spec`` and never imported.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

import pytest
from ig_helpers import anchors_of, broken_links
from indexgen import Config, build


def _fsdp_dir() -> Path:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("torch is not installed")
    path = Path(list(spec.submodule_search_locations)[0]) / "distributed" / "fsdp"
    if not path.is_dir():
        pytest.skip("torch has no distributed/fsdp")
    return path


@pytest.fixture(scope="module")
def fsdp_pages(tmp_path_factory):
    src = _fsdp_dir()
    out = tmp_path_factory.mktemp("fsdp") / "out"
    build(Config(roots=[src], out=out, jobs=2))
    return src, out


def _definitions(tree: ast.Module) -> list[tuple[str, int]]:
    """Top-level classes and functions and the methods of classes (nested classes too)."""
    found = []

    def visit(body, prefix, in_class):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.append((prefix + node.name, node.lineno))
            elif isinstance(node, ast.ClassDef):
                found.append((prefix + node.name, node.lineno))
                visit(node.body, prefix + node.name + ".", True)
            elif isinstance(node, (ast.If, ast.Try, ast.With)) and not in_class:
                visit(node.body, prefix, in_class)
                visit(getattr(node, "orelse", []), prefix, in_class)
                for handler in getattr(node, "handlers", []):
                    visit(handler.body, prefix, in_class)

    visit(tree.body, "", False)
    return found


_ENTRY = re.compile(r"^- \*\*`([^`]+)`\*\*: \[(\w+), line (\d+)\]\(([^)#]+)#([^)]+)\)$",
                    flags=re.M)


def test_every_definition_is_indexed_with_its_line_and_anchor(fsdp_pages):
    src, out = fsdp_pages
    files = sorted(src.rglob("*.py"))
    assert len(files) > 20
    checked = 0
    for path in files:
        rel = path.relative_to(src).as_posix()
        tree = ast.parse(path.read_bytes())
        kw = (out / f"{rel}_kw.md").read_text()
        docs = (out / f"{rel}_docs.md").read_text()
        ids = anchors_of(docs)
        entries = {}
        for name, _kind, line, page, anchor in _ENTRY.findall(kw):
            assert page == Path(rel).name + "_docs.md"
            assert anchor in ids, (rel, anchor)
            entries.setdefault(name, set()).add(int(line))
        for name, line in _definitions(tree):
            assert name in entries, (rel, name)
            assert line in entries[name], (rel, name, line, entries[name])
            checked += 1
    assert checked > 500


def test_imports_are_listed(fsdp_pages):
    src, out = fsdp_pages
    rel = "_fully_shard/_fsdp_param_group.py"
    tree = ast.parse((src / rel).read_bytes())
    kw = (out / f"{rel}_kw.md").read_text()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                assert f".{alias.name}" in kw or f"`{alias.name}" in kw
                assert f"line {node.lineno}]" in kw


def test_links_and_sections(fsdp_pages):
    _src, out = fsdp_pages
    assert broken_links(out) == []
    page = (out / "_fully_shard/_fsdp_param_group.py_docs.md").read_text()
    assert "`dist.all_gather_into_tensor`" in page or "all_gather" in page
    assert "## Performance Considerations" in page
    assert "torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py" in page
