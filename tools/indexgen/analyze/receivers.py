"""What a method that returns the instance it is called on gives: the receiver's class.

``Base.copy`` annotated ``-> Self`` (or ``def copy(self: T) -> T`` with ``T`` bound to
``Base`` or a base of it, and no parameter but the instance typed with ``T``) gives, called
as ``Leaf().copy()``, a ``Leaf`` -- not a ``Base``, whose every override a call on the result
would list (torch's ``nn.Sequential(...).cuda(d).parameters()``, ``with CppTemplateKernel(...)
as kernel``: ``Module.cuda`` and ``Kernel.__enter__`` return ``Self``).  The type evaluation
hands a call what the attribute called was read on (:meth:`~indexgen.analyze.types.Types.
_steps`: the receivers); each receiver whose class has the method (the method's class in its
MRO; a class, as for a classmethod's ``Leaf.create()``, stands for its instances; ``super()``
for the class it is written in) replaces the method's class in what the call gives.  A
method whose return annotation says no such thing is asked nothing more: which do is read
once per method (:data:`~indexgen.analyze.results.NO_VARS` for none) and tested before the
call (:meth:`~indexgen.analyze.results.Results.call`).
"""

from __future__ import annotations

from functools import partial

from indexgen.analyze.parameters import parameters_of
from indexgen.analyze.results import NO_VARS
from indexgen.analyze.typevars import WORD
from indexgen.analyze.values import Value, Values
from indexgen.extract.model import Definition

#: The kinds of methods called on what gives them their first argument.
_RECEIVING = frozenset({"method", "classmethod"})


class Receivers:
    """Methods that return their receiver; mixed into :class:`~indexgen.analyze.types.Types`
    (through :class:`~indexgen.analyze.overloads.Overloads`), whose memo, cycle guard,
    ``call``, ``mro``, ``annotation`` and ``type_vars`` it uses."""

    _memo: dict

    def received(self, value: Value, d: Definition, key: str, anchor: str, args: tuple,
                 on: Values) -> Values:
        """What calling the method ``value`` (its definition ``d``), read on ``on`` (the
        receivers), gives: where its return annotation says it gives the instance it is
        called on (``-> Self``, or a type variable bound to its class or a base: ``def
        copy(self: T) -> T``), each instance of that class it gives is each receiver whose
        class has the method (``Table().copy()`` gives a ``Table``)."""
        found = self.call(value, key, anchor, args)
        own = self._self_typed(value[1], d)
        if own is NO_VARS or not found:
            return found
        defining = (value[1], d.parent)
        receivers = set()
        for r in on:
            if r[0] == "c" or r[0] == "p":  # C.create(), super().copy(): of the class
                r = ("i", r[1], r[2])
            if r[0] == "i" and defining in self.mro(r[1], r[2]):
                receivers.add(r)
        if not receivers:
            return found
        out = set(found)
        for v in found:
            if v[0] == "i" and len(v) == 3 and (v[1], v[2]) in own:
                out.discard(v)
                out |= receivers
        return frozenset(out)

    def _self_typed(self, key: str, d: Definition) -> frozenset[tuple[str, str]]:
        """The classes whose instances the return annotation of the method ``d`` of file
        ``key`` says are the receiver (``-> Self``: its class; ``-> T``, ``T`` bound to the
        class or a base and no parameter but the instance typed with it: the bound's), read
        once; :data:`~indexgen.analyze.results.NO_VARS` for none, or another function."""
        memo = ("self typed", key, d.qualname, d.lineno)
        found = self._memo.get(memo)
        if found is None:  # (a table: the same wherever it is first asked for)
            found = self._memo[memo] = self._guard.isolated(partial(self._receiving, key, d))
        return found

    def _receiving(self, key: str, d: Definition) -> frozenset[tuple[str, str]]:
        found = set()
        words = set(WORD.findall(d.returns)) if d.kind in _RECEIVING else ()
        if "Self" in words:
            found.add((key, d.parent))
        held = self.type_vars(key, d.returns, d.parent) if words else ()
        params = parameters_of(d) or ()
        for name in held:
            if any(p[3] and name in self.type_vars(key, p[3], d.parent) for p in params):
                continue  # (typed by an argument: solved from it)
            bases = self.mro(key, d.parent)
            found.update((v[1], v[2]) for v in self.annotation(key, name, d.parent)
                         if v[0] == "i" and (v[1], v[2]) in bases)
        return frozenset(found) or NO_VARS
