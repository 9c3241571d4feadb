"""The pairwise conformance matrix (issue 30 item 2): every pair of values of two FSDP2
options in at least one case, each case trained with torch's ``fully_shard`` and with
fsdp_ref side by side and compared bitwise (:mod:`tests.conformance.matrix_check`).

The options, their values and the constraints: :mod:`tests.conformance.matrix_options`;
the cases: :mod:`tests.conformance.matrix_cases`; one case's training:
:mod:`tests.conformance.scenarios_matrix`. The cases of one world size run as a few
batches in the session's worker pool of that size (the first test of each size runs
them, only the selected ones: ``pytest tests/conformance/test_matrix.py -k c07`` runs
case 7 alone). A failing case is shrunk (options reset to their defaults one at a time,
re-run in the pool) and the failure names the smallest option set that still fails with
one of the same kinds of difference
(``FSDP_REF_MATRIX_SHRINK=0`` skips the shrinking, for a quick look at many failures).
"""

from __future__ import annotations

import itertools
import os
import re
import time
from typing import Any

import pytest

from tests.conformance import harness, matrix_cases, matrix_check, matrix_doc
from tests.conformance.matrix_options import CONSTRAINTS, OPTIONS, defaults, violation

COVERING = matrix_cases.generate()
CASES = COVERING + matrix_cases.pinned()
IDS = ([f"c{i:02d}" for i in range(len(COVERING))]
       + [f"p{i:02d}" for i in range(len(CASES) - len(COVERING))])
BATCH = 8  # cases per pool call
BATCH_TIMEOUT_S = 600.0


class Matrix:
    """Runs cases in the session's pools, a batch per call, and remembers the outcomes."""

    def __init__(self, pools, selected: list[int]) -> None:
        self.pools, self.selected = pools, selected
        self.outcomes: dict[int, dict[str, Any]] = {}

    def outcome(self, index: int) -> dict[str, Any]:
        """Case ``index``'s outcome; the first call for a world size runs every selected
        case of that size."""
        if index not in self.outcomes:
            ws = matrix_cases.world_size(CASES[index])
            todo = [i for i in self.selected
                    if matrix_cases.world_size(CASES[i]) == ws and i not in self.outcomes]
            for start in range(0, len(todo), BATCH):
                chunk = todo[start:start + BATCH]
                for i, out in zip(chunk, self.run([CASES[i] for i in chunk])):
                    self.outcomes[i] = out
        return self.outcomes[index]

    def run(self, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Run ``cases`` (all of one world size) in one pool call; per case the
        per-rank outcomes, the CPU seconds of its slowest rank and its share of the
        call's wall seconds."""
        pool = self.pools.get(matrix_cases.world_size(cases[0]))
        start = time.perf_counter()
        replies = pool.run("tests.conformance.scenarios_matrix:run_batch",
                           runs=[matrix_check.runs_of(c) for c in cases],
                           timeout_s=BATCH_TIMEOUT_S)
        wall = (time.perf_counter() - start) / len(cases)
        return [{"per_rank": [harness._restored(r[k]["outcome"]) for r in replies],
                 "cpu_s": max(r[k]["cpu_s"] for r in replies), "wall_s": wall}
                for k in range(len(cases))]

    def fails_like(self, found: list[str]):
        """A predicate: does a case fail with one of the kinds of problem in ``found``
        (so that shrinking does not wander off to another difference)?"""
        kinds = _kinds(found)
        return lambda case: bool(kinds & _kinds(
            matrix_check.problems(case, self.run([case])[0]["per_rank"])))


def _kinds(found: list[str]) -> set[str]:
    """Each problem line with its numbers blanked out (step, rank and values), a
    stand-in run of torch counted as torch."""
    return {re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "#", re.sub(r"torch with \{[^}]*\}", "torch",
                                                            line))[:160]
            for problem in found for line in problem.splitlines() if line.startswith("rank")}


@pytest.fixture(scope="module")
def matrix(dist_pools, request):
    selected = sorted({item.callspec.params["index"] for item in request.session.items
                       if item.module is request.module and item.originalname == "test_case"})
    return Matrix(dist_pools, selected)


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
def test_case(matrix, index, record_property):
    case = CASES[index]
    out = matrix.outcome(index)
    record_property("cpu_s", round(out["cpu_s"], 2))
    print(f"{IDS[index]}: {out['cpu_s']:.2f} CPU s (slowest rank), "
          f"~{out['wall_s']:.2f} wall s: {matrix_cases.describe(case)}")
    found = matrix_check.problems(case, out["per_rank"])
    if not found:
        return
    if os.environ.get("FSDP_REF_MATRIX_SHRINK") == "0":
        pytest.fail(f"{IDS[index]} ({matrix_cases.describe(case)}) differs from torch:\n"
                    + "\n".join(found[:30]), pytrace=False)
    smallest = matrix_cases.shrink(case, matrix.fails_like(found))
    pytest.fail(
        f"{IDS[index]} ({matrix_cases.describe(case)}) differs from torch:\n"
        + "\n".join(found[:30])
        + f"\n\nsmallest option set that still fails: {matrix_cases.describe(smallest)}\n"
        + "\n".join(matrix_check.problems(smallest, matrix.run([smallest])[0]["per_rank"])[:30]),
        pytrace=False)


# ---- the generator (no ranks) ------------------------------------------------------------


def test_every_case_is_a_configuration():
    assert all(violation(case) is None for case in CASES)
    assert len({tuple(c.values()) for c in CASES}) == len(CASES)


def test_every_pair_of_values_is_covered():
    """Counted here from the cases, not by the generator: each pair of values of two
    options is in some case, unless no valid case can hold it. Which pairs those are is
    found by brute force over the options the constraints look at (a few hundred
    combinations), not by the generator's search."""
    seen = {((a, c[a]), (b, c[b])) for c in COVERING
            for a, b in itertools.combinations(OPTIONS, 2)}
    constrained = [n for n in OPTIONS if any(
        constraint.violated({n: v, m: w}) or constraint.violated({m: w, n: v})
        for constraint in CONSTRAINTS for m in OPTIONS for v in OPTIONS[n] for w in OPTIONS[m])]
    valid = [dict(zip(constrained, values))
             for values in itertools.product(*(OPTIONS[n] for n in constrained))]
    valid = [c for c in valid if violation(c) is None]
    possible = {((a, c[a]), (b, c[b])) for c in valid
                for a, b in itertools.combinations(constrained, 2)}
    missing = [((a, va), (b, vb)) for a, b in itertools.combinations(OPTIONS, 2)
               for va in OPTIONS[a] for vb in OPTIONS[b]
               if ((a, va), (b, vb)) not in seen
               and (a not in constrained or b not in constrained
                    or ((a, va), (b, vb)) in possible)]
    assert not missing, missing[:20]
    assert len(COVERING) <= 300


def test_constraints_and_defaults():
    """The all-defaults case is valid; every constraint forbids something."""
    assert violation(defaults()) is None
    for constraint in CONSTRAINTS:
        assert any(constraint.violated({a: va, b: vb})
                   for a, b in itertools.permutations(OPTIONS, 2)
                   for va in OPTIONS[a] for vb in OPTIONS[b]), constraint.why


def test_shrink_finds_the_options_that_matter():
    """A failure that needs two options is shrunk to exactly those two, whatever else
    the case sets (a constraint keeps ``microbatches`` with the sync option)."""
    def fails(case):
        return case["mesh"] == "hsdp" and case["gradient_sync_off"]

    start = next(c for c in COVERING if fails(c) and len(matrix_cases.non_default(c)) > 4)
    assert matrix_cases.non_default(matrix_cases.shrink(start, fails)) == {
        "mesh": "hsdp", "microbatches": 2, "gradient_sync_off": True}


def test_conformance_page_is_current():
    """docs/design/conformance.md lists these options and this case count; rewrite it
    with ``python -m tests.conformance.matrix_doc``."""
    page = matrix_doc.PAGE.read_text()
    assert matrix_doc.rendered(page) == page, "run: python -m tests.conformance.matrix_doc"
