"""Whether a dotted name is a builtin or an attribute of one, as the evaluation knows them.

One table, :func:`builtin_exists`, read by the resolver (an alias such as ``run =
object.__setattr__`` names a builtin), by :mod:`indexgen.analyze.containers` (a builtin's
attribute is one only when the builtin has it: ``list.render`` is none) and by the members of
values: the call graph's ``builtin`` edges are checked with it.  It imports nothing of the
pass, so that each of them can.
"""

from __future__ import annotations

import builtins
import contextlib
from collections import defaultdict, deque
from functools import lru_cache
from types import SimpleNamespace

#: The builtins, and the containers of :mod:`collections` the evaluation knows.
_ROOTS = SimpleNamespace(**vars(builtins), deque=deque, defaultdict=defaultdict,
                         contextlib=contextlib)
_MISSING = object()


@lru_cache(maxsize=4096)
def builtin_exists(dotted: str) -> bool:
    """Whether ``dotted`` names a builtin or an attribute of one (``str.join``; not
    ``list.render``)."""
    found: object = _ROOTS
    for part in dotted.split("."):
        found = getattr(found, part, _MISSING)
        if found is _MISSING:
            return False
    return True
