"""``docs/design/lifecycle.md``'s table of the stops of one iteration against a traced one.

The table names, row by row, the file and function a reader visits while following one
iteration. A real iteration is traced (:mod:`tests.docs.lifecycle_trace`, in a process of
its own) and every row must have been entered, in the table's order, and live in the file
the table says. The sentence below the table, how many of its stops one gradient takes
from its group's post-backward to ``.grad`` and in which files, is checked against the
first gradient's way in the same trace. The trace also checks the claim beside the table:
no call goes back up the layers (into a module the caller does not import) but the callbacks of the two
autograd nodes (``fsdp_ref/autograd_nodes.py``), which autograd runs and which call back
the group or state that put them into the graph.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "design" / "lifecycle.md"


def stops_table(text: str) -> list[tuple[str, str]]:
    """``(file, function)`` of each row of the page's table of stops."""
    section = text.split("## The stops of one iteration", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0].isdigit():
            rows.append((cells[1], cells[2]))
    return rows


NUMBERS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}


def table_rows(text: str) -> dict[int, tuple[str, str]]:
    """The table's rows by their number."""
    return dict(enumerate(stops_table(text), start=1))


def gradient_claim(text: str) -> tuple[int, set[str], set[int]]:
    """From "Following one gradient ... takes N stops in F files (rows a-b and c, then
    d-e ...)": ``N``, the number of files, and the rows named."""
    m = re.search(r"Following one gradient from its group's post-backward to `\.grad` takes "
                  r"(\w+) stops in (\w+) files \(([^)]*)\)", " ".join(text.split()))
    assert m, "lifecycle.md no longer says how many stops a gradient takes"
    rows: set[int] = set()
    for a, b in re.findall(r"(\d+)(?:-(\d+))?", m.group(3)):
        rows.update(range(int(a), int(b or a) + 1))
    return NUMBERS[m.group(1)], NUMBERS[m.group(2)], rows


def in_order(rows: list[tuple[str, str]], trace: list[tuple[str, str]]) -> str | None:
    """``None`` if ``rows`` are entries of ``trace`` in the same order, else why not."""
    position = -1
    index = {entry: i for i, entry in enumerate(trace)}
    for row in rows:
        if row not in index:
            where = [f for f, fn in trace if fn == row[1]]
            return f"{row} was never entered" + (f" (it is in {where[0]})" if where else "")
        if index[row] < position:
            return f"{row} is entered before the row above it"
        position = index[row]
    return None


@pytest.fixture(scope="module")
def trace() -> dict:
    proc = subprocess.run([sys.executable, "-m", "tests.docs.lifecycle_trace"], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.splitlines()[-1])


def test_the_table_is_the_traced_iteration(trace):
    rows = stops_table(PAGE.read_text())
    assert len(rows) >= 20, rows
    problem = in_order(rows, [tuple(e) for e in trace["first"]])
    assert problem is None, problem


def test_the_stops_of_one_gradient_are_the_traced_ones(trace):
    text = PAGE.read_text()
    count, files, named = gradient_claim(text)
    rows = table_rows(text)
    way = {tuple(e) for e in trace["gradient"]}
    on_the_way = {n for n, row in rows.items()
                  if row in way and row[0] in ("param_group.py", "reduce.py")}
    assert named == on_the_way, (sorted(named), sorted(on_the_way))
    assert count == len(named)
    assert files == len({rows[n][0] for n in named}) == 2
    assert ("param_grad.py", "ParamGrad.accumulate_sharded_grad") in way


def test_no_call_goes_back_up_the_layers(trace):
    callbacks = [e for e in trace["upward"] if e[0] == "autograd_nodes.py"]
    assert sorted(callbacks) == [
        ["autograd_nodes.py", "PostBackward.backward", "param_group.py",
         "FSDPParamGroup.post_backward"],
        ["autograd_nodes.py", "PreBackward.backward", "state.py", "FSDPState._pre_backward"],
    ]
    assert [e for e in trace["upward"] if e not in callbacks] == []


def test_the_order_check_catches_a_swap_and_a_wrong_file():
    trace = [("a.py", "f"), ("b.py", "g"), ("a.py", "h")]
    assert in_order([("a.py", "f"), ("a.py", "h")], trace) is None
    assert "before the row above" in in_order([("a.py", "h"), ("b.py", "g")], trace)
    assert "it is in b.py" in in_order([("a.py", "g")], trace)
