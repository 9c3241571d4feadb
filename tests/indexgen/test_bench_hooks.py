"""The indexgen benchmarks time the pass's and the build's steps by the functions' names:
each name they patch must still be a function of indexgen, or the benchmark breaks the day a
step moves to another module (``indexgen_pass_timeline.py`` did when the call graph's
second round moved to ``analyze/second_round.py``)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _bench(name: str):
    sys.path.insert(0, str(BENCH))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(BENCH))


def test_every_step_the_build_benchmark_times_exists():
    steps = _bench("indexgen_steps").STEPS
    assert len(steps) > 10
    for module, dotted, _label, _level in steps:
        owner = importlib.import_module(module)
        for part in dotted.split("."):
            owner = getattr(owner, part)  # AttributeError names the step that moved
        assert callable(owner), (module, dotted)


def test_every_part_the_pass_timeline_patches_exists():
    parts = _bench("indexgen_pass_timeline").PARTS
    assert len(parts) > 5
    for owner, name, _in_children in parts:
        assert callable(getattr(owner, name, None)), (owner, name)
