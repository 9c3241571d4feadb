"""Work cut into runs of about equal weight, the runs spread over processes.

The call graph's rounds (:mod:`indexgen.analyze.callgraph`) and the pages' assembly
(:mod:`indexgen.analyze.assemble`) are one function over many files; :func:`cut` splits the
files into runs without splitting a file, and :func:`fan_runs` computes the first run in the
calling process before the others are forked, so that what many files share is computed once
and inherited.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: ``fan(func, runs, meanwhile=None) -> [func(run) for run in runs]``, the last run in the
#: calling process and then ``meanwhile()``, each other run perhaps in a process of its own
#: (:func:`indexgen.run.fanout.fork_map` with ``here=True``).
FanOut = Callable[..., list]


def fan_runs(fan: FanOut | None, func: Callable[[list], Any], keys: list[str],
             sizes: dict[str, int], shards: int,
             meanwhile: Callable[[], None] | None = None) -> list:
    """``func`` over the files ``keys`` in ``shards`` processes, the calling process one of
    them: ``keys`` cut into ``shards + 1`` runs of about equal numbers of calls (``sizes``;
    a file is never split), the first computed here before any process is forked (the
    values many files share land in the memo the forked processes inherit), then the
    others by ``fan``, which computes its last run here too, then ``meanwhile()``; without
    a fan, ``[func(keys)]`` and ``meanwhile()``."""
    runs = ([keys] if fan is None or shards < 2 or len(keys) < 2
            else cut(keys, [sizes[k] + 1 for k in keys], shards + 1))
    first = func(runs[0])
    if len(runs) > 1:
        return [first, *fan(func, runs[1:], meanwhile=meanwhile)]
    if meanwhile is not None:
        meanwhile()
    return [first]


def cut(keys: list[str], weight: list[int], pieces: int) -> list[list[str]]:
    """``keys`` in their order, cut into at most ``pieces`` runs of about equal ``weight``
    (one per key; a key is never split)."""
    total, runs, acc = sum(weight), [[]], 0
    for key, w in zip(keys, weight):
        if acc >= total * len(runs) / pieces and runs[-1]:
            runs.append([])
        runs[-1].append(key)
        acc += w
    return runs
