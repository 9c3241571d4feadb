"""The streams page's tables against the code, and every row proved by a mutation.

``docs/design/streams.md`` lists every wait (by site name) and every deferred free, with
the scenario in which removing it makes the race detector report. These tests

* scan ``src/fsdp_ref`` (with ``ast``) for every wait and every free, and require the
  tables to list exactly those (each wait site used once in the code);
* run each row's scenarios with the wait removed (or the free moved earlier) and require
  a race on every rank, and that the mutation actually ran;
* run each scenario unmutated and require no race at all.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "design" / "streams.md"
SRC = ROOT / "src" / "fsdp_ref"
PROTOCOL = "tests.sanitizer.scenarios:protocol"
WORLD = {"int_reshard": 4, "hsdp": 4, "hsdp_accum": 4}  # others: 2 ranks

# (call name, index of the site argument)
_WAITS = {"wait_event": 1, "wait_stream": 1, "synchronize": 0, "wait_work": 2}


def _table(heading: str) -> list[list[str]]:
    """The rows (cells) of the first table after ``heading`` on the page."""
    text = PAGE.read_text().split(heading, 1)[1]
    rows = []
    for line in text.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if not set(cells[0]) <= {"-"}:
                rows.append(cells)
        elif rows:
            break
    return rows[1:]  # without the header


def _proofs(cell: str) -> list[tuple[str, bool]]:
    found = re.findall(r"`(\w+)` \((GPU|CPU) path\)", cell)
    assert found, f"no scenario in {cell!r}"
    return [(name, path == "GPU") for name, path in found]


WAIT_ROWS = {row[0].strip("`"): _proofs(row[-1]) for row in _table("## Every wait")}
FREE_ROWS = {row[0].strip("`"): _proofs(row[-1]) for row in _table("## Deferred frees")}
# "Frees that need no deferral: `a` (why), `b` (why)."
NOT_DEFERRED = re.findall(r"`(\w+)` \(", PAGE.read_text().split("Frees that need no deferral:")[1]
                          .split("\n\n")[0])


def _code_calls():
    """``(kind, literal, where)`` for every wait and every logged free in the library."""
    for path in sorted(SRC.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            where = f"{path.name}:{node.lineno}"
            on_raw = isinstance(func, ast.Attribute) and getattr(func.value, "attr", "") == "raw"
            if name in _WAITS and not on_raw:  # (the wrappers' own calls on device objects)
                arg = node.args[_WAITS[name]] if len(node.args) > _WAITS[name] else None
                arg = next((k.value for k in node.keywords if k.arg == "site"), arg)
                literal = arg.value if isinstance(arg, ast.Constant) else None
                yield "wait", literal, where
            elif (name == "log" and node.args and isinstance(node.args[0], ast.Constant)
                  and node.args[0].value == "free"):
                yield "free", node.args[2].value, where


def test_every_wait_in_the_code_is_a_row():
    waits = [(site, where) for kind, site, where in _code_calls() if kind == "wait"]
    assert all(site is not None for site, _ in waits), (
        f"waits without a literal site name (they would escape the table): {waits}"
    )
    sites = [site for site, _ in waits]
    assert len(sites) == len(set(sites)), f"a site name is used twice: {sorted(sites)}"
    assert set(sites) == set(WAIT_ROWS), (
        f"in the code, not on the page: {set(sites) - set(WAIT_ROWS)}; "
        f"on the page, not in the code: {set(WAIT_ROWS) - set(sites)}"
    )


def test_every_free_in_the_code_is_a_row():
    frees = {detail for kind, detail, _ in _code_calls() if kind == "free"}
    assert frees == set(FREE_ROWS) | set(NOT_DEFERRED)
    assert not set(FREE_ROWS) & set(NOT_DEFERRED)


def _cases():
    for site, proofs in WAIT_ROWS.items():
        for scenario, gpu in proofs:
            yield pytest.param(site, scenario, gpu, id=f"{site}-{scenario}-{'gpu' if gpu else 'cpu'}")
    for buffer, proofs in FREE_ROWS.items():
        for scenario, gpu in proofs:
            yield pytest.param(f"free:{buffer}", scenario, gpu,
                               id=f"free_{buffer}-{scenario}-{'gpu' if gpu else 'cpu'}")


@pytest.mark.parametrize(("mutation", "scenario", "gpu_path"), list(_cases()))
def test_removing_it_is_detected(dist_pools, mutation, scenario, gpu_path):
    pool = dist_pools.get(WORLD.get(scenario, 2))
    results = pool.run(PROTOCOL, scenario=scenario, gpu_path=gpu_path, mutation=mutation)
    for rank, res in enumerate(results):
        assert res["mutated"], f"rank {rank}: {mutation} never ran in {scenario}"
        assert res["races"], f"rank {rank}: {mutation} removed, nothing detected in {scenario}"


_SCENARIOS = sorted({(s, gpu) for rows in (WAIT_ROWS, FREE_ROWS) for proofs in rows.values()
                     for s, gpu in proofs})


@pytest.mark.parametrize(("scenario", "gpu_path"), _SCENARIOS,
                         ids=[f"{s}-{'gpu' if g else 'cpu'}" for s, g in _SCENARIOS])
def test_unmutated_scenario_is_clean(dist_pools, scenario, gpu_path):
    pool = dist_pools.get(WORLD.get(scenario, 2))
    for res in pool.run(PROTOCOL, scenario=scenario, gpu_path=gpu_path):
        assert res["races"] == [], "\n".join(res["reports"])
