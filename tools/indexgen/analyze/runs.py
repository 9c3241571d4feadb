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


#: The first run, computed before any process is forked, is the larger of one
#: ``shards + 1``-th and one :data:`WARM_UP`-th of the work: with few processes a run as
#: large as the others keeps the other cores idle that long (on 2 cores a third of torch's
#: first round, 2.1 CPU seconds, measured 0.6 s longer on the way to the last result than
#: an eighth, whose values the two processes then partly find twice).
WARM_UP = 8
#: The run the calling process computes once it has forked the others is this much larger
#: than each of theirs: a forked process works slower on the memory it shares with the
#: calling process (each object it touches is copied on the first write, its reference
#: count's), measured on torch with two processes at 1.27 times the calling process's CPU
#: seconds for the same calls in the first round, 1.45 in the second.
HERE_SHARE = 1.3


def fan_runs(fan: FanOut | None, func: Callable[[list], Any], keys: list[str],
             sizes: dict[str, int], shards: int,
             meanwhile: Callable[[], None] | None = None) -> list:
    """``func`` over the files ``keys`` in ``shards`` processes, the calling process one of
    them: the first run of about ``1 / max(shards + 1, WARM_UP)`` of the calls (``sizes``;
    a file is never split) computed here before any process is forked (the values many
    files share land in the memo the forked processes inherit), the rest cut into
    ``shards`` runs of about equal numbers of calls computed by ``fan``, which computes its
    last run here too, then ``meanwhile()``; without a fan, ``[func(keys)]`` and
    ``meanwhile()``."""
    if fan is None or shards < 2 or len(keys) < 2:
        runs = [keys]
    else:
        weight = [sizes[k] + 1 for k in keys]
        first = cut(keys, weight, max(shards + 1, WARM_UP))[0]
        rest = len(first)
        runs = [first, *cut(keys[rest:], weight[rest:], [1.0] * (shards - 1) + [HERE_SHARE])]
    first = func(runs[0])
    if len(runs) > 1:
        return [first, *fan(func, runs[1:], meanwhile=meanwhile)]
    if meanwhile is not None:
        meanwhile()
    return [first]


def cut(keys: list[str], weight: list[int], pieces: int | list[float]) -> list[list[str]]:
    """``keys`` in their order, cut into at most ``pieces`` runs of about equal ``weight``
    (one per key; a key is never split), or, ``pieces`` a list, into runs whose weights are
    in its proportions."""
    shares = [1.0] * pieces if isinstance(pieces, int) else pieces
    total, scale = sum(weight), sum(shares)
    ends, acc = [], 0.0
    for share in shares:  # where each run's weight ends (the last: at the total)
        acc += share
        ends.append(total * acc / scale)
    runs: list[list[str]] = [[]]
    acc = 0
    for key, w in zip(keys, weight):
        if acc >= ends[len(runs) - 1] and runs[-1]:
            runs.append([])
        runs[-1].append(key)
        acc += w
    return runs
