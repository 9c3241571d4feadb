"""What a call gives back where it leaves out the parameter its callee returns.

``def register(self, c, factory=None): if factory is None: return lambda f:
self.register(c, f)`` ... ``return factory``: what ``register`` returns is, over all its
callers, the lambda or whatever any caller hands ``factory``; but a call that leaves
``factory`` out (``@registry.register(c)``, the decorator form) gets the lambda or the
default, never another caller's function.  :func:`left_out` names the parameters a call
leaves out, read off the arguments its path keeps (a :class:`~indexgen.analyze.paths.Given`);
:meth:`indexgen.analyze.results.Results.call` leaves the ``return`` statements that return
one of them as it is out of what that call gives.
"""

from __future__ import annotations

from indexgen.analyze.paths import Given, arguments
from indexgen.analyze.values import Values
from indexgen.extract.model import Definition

#: Kinds of definitions whose first parameter a call on an instance does not hand.
_BOUND = frozenset({"method", "classmethod", "property"})


def left_out(d: Definition, args: Given, on: Values) -> frozenset[str]:
    """The parameters of ``d`` (those its names keep: :attr:`Definition.names`, ``<k:x``)
    that a call handing ``args`` leaves out; none where an argument is unpacked (``*xs``,
    ``**kw``) or ``d`` returns none of its parameters by name."""
    names = d.names
    params = []
    for returned in names["return"]:  # (plain loops: read at every call of a function)
        if returned[0] == "=" and returned[1:] in names:
            name = returned[1:]
            for s in names[name]:
                if s[0] == "<" and s[1:].partition(":")[2].partition("=")[0] == name:
                    params.append((name, s))
    if not params:
        return frozenset()
    items = arguments(args)
    if any(item and item[0] in ("*", "**") for item in items):
        return frozenset()
    keywords = {item[1] for item in items if item and item[0] == "="}
    positional = sum(1 for item in items if not (item and item[0] == "="))
    # a method read on an instance or a class's classmethod: its first is not handed
    shift = 1 if d.kind in _BOUND and not (d.kind == "method" and on and all(
        v[0] == "c" for v in on)) else 0
    out = set()
    for name, source in params:
        spot = source[1:].partition(":")[0]
        if name in keywords or spot[:1] == "*":
            continue
        if spot == "k" or spot.isdigit() and int(spot) - shift >= positional:
            out.add(name)
    return frozenset(out)
