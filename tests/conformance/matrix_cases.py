"""The cases of the pairwise conformance matrix: a covering array of
:data:`~tests.conformance.matrix_options.OPTIONS` in which every pair of values of two
options occurs in at least one case (all-pairs), and the shrinker of a failing case.

The generator is a deterministic greedy all-pairs (in the manner of AETG, one candidate
per case): while some pair of values is not covered, start a case from the first such
pair, then give each remaining option, in the order of ``OPTIONS``, the value that covers
the most pairs not yet covered with the values already chosen (ties: the earlier value),
among the values with which the case can still be completed without breaking a
:data:`~tests.conformance.matrix_options.CONSTRAINTS` entry. A pair that no valid case
holds is not required (:func:`impossible_pairs` lists them). The same options always give
the same cases, in the same order.

:func:`shrink` makes a failing case smaller: it resets one option at a time to its
default, keeps each reset after which the case still fails, and repeats until no reset
keeps it failing.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from typing import Any

from tests.conformance.matrix_options import OPTIONS, WORLD_SIZE, defaults, violation

Pair = tuple[tuple[str, Any], tuple[str, Any]]

_NAMES = tuple(OPTIONS)


def _completion(case: dict[str, Any]) -> dict[str, Any] | None:
    """A full valid case extending the partial ``case`` (defaults first), or None."""
    if violation(case):
        return None
    todo = [n for n in _NAMES if n not in case]
    if not todo:
        return dict(case)
    name = todo[0]
    for value in OPTIONS[name]:
        done = _completion({**case, name: value})
        if done is not None:
            return done
    return None


def _pairs_of(case: dict[str, Any]) -> set[Pair]:
    names = [n for n in _NAMES if n in case]
    return {((a, case[a]), (b, case[b])) for a, b in itertools.combinations(names, 2)}


def _all_pairs() -> list[Pair]:
    return [((a, va), (b, vb))
            for a, b in itertools.combinations(_NAMES, 2)
            for va in OPTIONS[a] for vb in OPTIONS[b]]


@functools.cache
def impossible_pairs() -> tuple[Pair, ...]:
    """The pairs of values no valid case holds (made so by the constraints)."""
    return tuple(p for p in _all_pairs() if _completion(dict(p)) is None)


@functools.cache
def generate() -> tuple[dict[str, Any], ...]:
    """The covering array: every possible pair of values in at least one case."""
    impossible = set(impossible_pairs())
    uncovered = [p for p in _all_pairs() if p not in impossible]
    todo = set(uncovered)
    cases: list[dict[str, Any]] = []
    while todo:
        seed = next(p for p in uncovered if p in todo)
        case = dict(seed)
        for name in _NAMES:
            if name in case:
                continue
            best, best_gain = None, -1
            for value in OPTIONS[name]:
                trial = {**case, name: value}
                if _completion(trial) is None:
                    continue
                gain = len(_pairs_of(trial) & todo)
                if gain > best_gain:
                    best, best_gain = value, gain
            case[name] = best
        todo -= _pairs_of(case)
        cases.append({n: case[n] for n in _NAMES})
    return tuple(cases)


#: Cases beyond the covering array, each a combination of three or more options that
#: once differed from torch and that no pair of values is sure to meet again (the
#: generator's next cases may cover the pairs with other options that hide it), with why.
PINNED: tuple[tuple[dict[str, Any], str], ...] = (
    ({"mesh": "hsdp", "microbatches": 2, "is_last_backward": True, "all_reduce_off": True},
     "HSDP accumulation with set_is_last_backward(False) and set_requires_all_reduce(False) "
     "on the first microbatch, gradient sync on: the root group's gradients differed in "
     "the last bits (the pairs of these options come with gradient_sync_off=True in the "
     "covering array, which turns the all-reduce off anyway)"),
)


def pinned() -> tuple[dict[str, Any], ...]:
    """:data:`PINNED`'s cases, every other option at its default."""
    return tuple({**defaults(), **options} for options, _ in PINNED)


def non_default(case: dict[str, Any]) -> dict[str, Any]:
    """The options of ``case`` that are not at their default."""
    base = defaults()
    return {n: v for n, v in case.items() if v != base[n]}


def describe(case: dict[str, Any]) -> str:
    """``case`` as its non-default options, ``name=value`` (the defaults if none)."""
    changed = non_default(case)
    return ", ".join(f"{n}={v!r}" for n, v in changed.items()) or "all defaults"


def world_size(case: dict[str, Any]) -> int:
    return WORLD_SIZE[case["mesh"]]


def shrink(case: dict[str, Any], fails: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The smallest case found from ``case`` that still ``fails``: options reset to their
    defaults one at a time (skipping resets that break a constraint), each reset kept
    when the case still fails, until a whole pass keeps none."""
    base = defaults()
    current = dict(case)
    changed = True
    while changed:
        changed = False
        for name in _NAMES:
            if current[name] == base[name]:
                continue
            trial = {**current, name: base[name]}
            if violation(trial) is None and fails(trial):
                current, changed = trial, True
    return current
