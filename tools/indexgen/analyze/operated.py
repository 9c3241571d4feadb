"""What an operator expression gives, for the type evaluation.

:class:`Operated` is mixed into :class:`~indexgen.analyze.results.Results`, whose ``call``
hands it a binary operation: ``a | b`` is the path ``a.__or__(b)``, which
:func:`~indexgen.analyze.paths.parse` reads as the tuple of the operands called with the
:class:`~indexgen.analyze.paths.Operator` ``__or__``.  It gives what the dunder Python picks
returns: the left operand's ``__or__`` where its class in the build defines one, else the
right operand's ``__ror__`` (a left operand that is a builtin, outside the build, or
unknown: ``"(" + expr`` is ``expr.__radd__("(")``); first the right operand's, as in
Python, where its class is a proper subclass of the left one's and gives ``__ror__``
another implementation.  A dunder that may return ``NotImplemented`` is not told apart.
A builtin sequence or set (``xs + ys``, ``a | b``) gives one of the elements of either.

A unary operation (``~a``: ``a.__invert__()``) is a method call like any other.
"""

from __future__ import annotations

from indexgen.analyze.memo import GuardedMemo
from indexgen.analyze.values import NONE, OUTSIDE, Value, Values, ordered, union

#: Operators of a builtin sequence or set -> whether they give the elements of either operand
#: (``xs + ys``, ``a | b``, ``a ^ b``) or of the left one (``xs * 2``, ``a - b``, ``a & b``).
_SEQUENCE_OPS = {"__add__": True, "__or__": True, "__xor__": True, "__mul__": False,
                 "__sub__": False, "__and__": False}


class Operated:
    """Binary operators; mixed into :class:`~indexgen.analyze.results.Results`, whose
    ``call``, ``_class_member`` and ``mro`` it uses."""

    _guard: GuardedMemo

    def dunder(self, value: Value, name: str) -> Values:
        """The dunder method ``name`` of an instance's class, as the project defines it (none
        for any other value, and for a class whose only ``name`` is an outside base's)."""
        if value[0] != "i":
            return NONE
        found = self._class_member(value[1], value[2], name, True)
        return frozenset(f for f in found if f[0] not in OUTSIDE) if found else NONE

    def operated(self, operands: tuple, name: str, key: str, anchor: str) -> Values:
        """What the binary operation with the dunder ``name`` gives on ``operands`` (the
        values of the left and the right operand: see the module's docstring)."""
        left, right = operands[0], operands[1] if len(operands) > 1 else NONE
        reflected = "__r" + name[2:]
        found = []
        for a in ordered(left) if left else ((),):
            if a and a[0] == "s" and name in _SEQUENCE_OPS:  # xs + ys: a list of either's
                found.append(frozenset({("s", union([a[1], *(b[1] for b in right if b[0] == "s")]))
                                        }) if _SEQUENCE_OPS[name] else frozenset({a}))
                continue
            own = self.dunder(a, name) if a else NONE
            for b in ordered(right):
                theirs = self.dunder(b, reflected)
                if theirs and (not own or self._reflected_first(b, a, theirs, reflected)):
                    found.append(self._dunder_result(theirs, b, key, anchor))
                elif own:
                    found.append(self._dunder_result(own, a, key, anchor))
            if own and not right:
                found.append(self._dunder_result(own, a, key, anchor))
        return union(found)

    def _reflected_first(self, b: Value, a: Value, theirs: Values, reflected: str) -> bool:
        """Whether Python tries ``b``'s reflected dunder (``theirs``) before ``a``'s own:
        ``b``'s class is a proper subclass of ``a``'s and gives it another implementation."""
        if a[0] != "i" or (b[1], b[2]) == (a[1], a[2]) or (a[1], a[2]) not in self.mro(b[1],
                                                                                     b[2]):
            return False
        return theirs != self.dunder(a, reflected)

    def _dunder_result(self, methods: Values, on: Value, key: str, anchor: str) -> Values:
        """What calling the dunder ``methods`` of the instance ``on`` gives."""
        receiver = frozenset({on})
        return union(self.call(f, key, anchor, (), receiver) for f in ordered(methods))
