"""What a call of a function with ``typing.overload`` stubs returns: what the stubs it may
match say.

A function's stubs state, one by one, which return type goes with which arguments
(tomlkit's ``item(value: dict[str, Any], ...) -> Table`` beside ``item(value: int, ...) ->
Integer``); its implementation's annotation (``-> Item``) says only what they have in
common.  A call whose path keeps its arguments (``item(:dict(:data), _sort_keys=flag)``:
:func:`indexgen.extract.arguments.handed_text`) is matched against the stubs' parameters
(:mod:`indexgen.extract.stubs`), in the stubs' order, as a type checker reads them:

- the arguments are bound to a stub's parameters by place and by keyword; a stub that
  cannot take them (too many or too few, a keyword it has no parameter for) is dropped;
- each argument whose type the evaluation knows -- a literal (``None``, ``True``, ``12``,
  ``"r"``, a list, dict, set or tuple display), a call of a builtin class (``dict(x)``), a
  builtin class named (``int``), a path of known values -- is checked against its
  parameter's annotation (:mod:`indexgen.analyze.fits`): a stub is dropped when no value
  the argument may have fits it.  A parameter the call leaves out is what the
  implementation's default makes it (``_parent=None`` does not fit ``_parent: Array``);
- an argument nothing is known of rules nothing out.  Two kinds are not evaluated: one
  whose parameter every stub the call may match annotates alike (it tells none from
  another: taken to fit), and a parameter of the caller that states nothing of its type
  (no annotation, or ``Any``: what all its callers hand it is costly to find and rarely
  decides);
- the first stub the call certainly matches (each argument known, and each of its values
  fits) ends the walk, as it does for a type checker: the stubs after it describe other
  calls.  But a later stub that differs from it only in parameters the call leaves out
  (whose defaults a stub writes ``...``) is kept too, and so is a later stub for ``None``
  where an argument is not a literal (the evaluation reads ``X | None`` as ``X``: the value
  may be ``None``).

An argument that may be one of several values is matched value by value (at most
:data:`_COMBINATIONS` combinations of them, else all together).  The call gives the union
of the return annotations of the stubs kept -- and what the implementation gives too where
one of those says nothing the evaluation reads (``-> T``) or leaves open what the
``return`` statements may say (``-> list[T]``, ``-> Callable[..., R]``).  When no stub is
kept, when every stub says what the implementation says, or when the call keeps no
arguments (``f()``), the call gives what the implementation's annotation or its ``return``
statements give, as any function's does.  A stub is dropped only when the call cannot
match it, or a stub before it certainly matches: the pages are as true as the stubs (a
stub that misstates what the implementation returns misleads them as it misleads a type
checker).
"""

from __future__ import annotations

from itertools import product
from math import prod

from indexgen.analyze.fits import ASSUMED, NO, YES, Fits
from indexgen.analyze.members import BOUND
from indexgen.analyze.parameters import bind, call_arguments, parameters_of
from indexgen.analyze.paths import Given, arguments
from indexgen.analyze.receivers import Receivers
from indexgen.analyze.results import hollow
from indexgen.analyze.typevars import TypeVars
from indexgen.analyze.values import NONE, Value, Values, ordered, union
from indexgen.extract.model import Definition, FileSummary

#: Most combinations of the values of the arguments matched one by one.
_COMBINATIONS = 16
#: Return annotations that say the call gives nothing (no value, no edge).
_NOTHING = frozenset({"None", "NoReturn", "Never", "typing.NoReturn", "typing.Never"})
#: Builtin classes whose call gives exactly an instance of them (``dict(x)``).
_MADE = frozenset({"bool", "int", "float", "complex", "str", "bytes", "bytearray", "list",
                   "tuple", "dict", "set", "frozenset"})
#: Annotations that say nothing of a parameter's type.
_UNTYPED = frozenset({":Any", ":typing.Any", ":object"})
#: Stand-in defaults that say nothing of the value (a stub's ``...``, a default not read).
_UNSAID = frozenset({"", "#Ellipsis", "_"})


def literal_value(token: str) -> Value:
    """The exact value of a literal argument as a path writes it (``#12`` without its ``#``:
    :func:`indexgen.extract.syntax.constant_text`)."""
    if token == "None":
        return ("=", "NoneType", None)
    if token == "True" or token == "False":
        return ("=", "bool", token == "True")
    if token.lstrip("-").isdigit():
        return ("=", "int", int(token))
    return ("=", "ellipsis" if token == "Ellipsis" else token)


def stub_table(files: dict[str, FileSummary], key: str) -> dict[str, list[Definition]]:
    """Qualname -> the ``typing.overload`` stubs of that name in file ``key``, in order."""
    found: dict[str, list[Definition]] = {}
    for d in files[key].definitions:
        if d.overload:
            found.setdefault(d.qualname, []).append(d)
    return found


class Overloads(TypeVars, Receivers, Fits):
    """Calls of functions with ``typing.overload`` stubs; mixed into
    :class:`~indexgen.analyze.types.Types`, whose ``call``, ``_steps``, ``annotation``,
    tables and cycle guard it uses."""

    _stubs: dict  # file key -> stub_table of the file (made on first use)

    def overloaded(self, value: Value, key: str, anchor: str, given: Given) -> Values | None:
        """What calling the function ``value``, which has stubs, with the arguments
        ``given`` (written in ``anchor`` of file ``key``) gives, by the stubs it may match;
        None when it matches none (see the module's doc)."""
        return self._guard.get(("\13", value, key, anchor, given), self._overloaded, value,
                               key, anchor, given)

    def _overloaded(self, value: Value, key: str, anchor: str, given: Given
                    ) -> Values | None:
        stubs = self._stubs[value[1]][value[2]]
        impl = self._defs[value[1]][1].get(value[2])
        if impl is not None and all(s.returns == impl.returns for s in stubs):
            return None  # (Module.to: each says -> Self) what the implementation says
        own = parameters_of(impl) if impl is not None and not impl.overload else None
        filled = {p[1]: p[2] for p in own or ()}  # the implementation's defaults
        positional, keywords, more, more_named = call_arguments(arguments(given))
        shift = 1 if value[-1] == BOUND else 0  # a plain function read on an instance
        shapes = []  # per stub: its parameters and how the call binds to them, or None
        told: dict = {}  # argument -> the annotations of the parameters it binds to
        for stub in stubs:
            params = parameters_of(stub)
            bound = bind(params, len(positional), keywords, more, more_named, shift) \
                if params is not None else None
            shapes.append((stub, params, bound))
            if bound is not None:
                for i, arg in bound[0]:
                    told.setdefault(arg, set()).add(params[i][3])
        alive = [stub for stub, params, bound in shapes if bound is not None or params is None]
        if len({stub.returns for stub in alive}) < 2:  # the arguments' types tell nothing
            return self._returns_of(alive, value, key, anchor, given)
        args = [*range(len(positional)), *keywords]
        # an argument whose parameter each stub the call may match annotates alike tells none
        # from another: not evaluated, taken to fit
        handed = [self.handed(key, anchor, steps) if len(told.get(arg, ())) > 1 or
                  len(told.get(arg, ())) < sum(b is not None for _s, _p, b in shapes)
                  else ASSUMED for arg, steps in zip(args, (*positional, *keywords.values()))]
        choices = [[frozenset({v}) for v in ordered(h)] or [NONE] if h is not ASSUMED
                   else [h] for h in handed]
        if prod(map(len, choices)) > _COMBINATIONS:
            choices = [[h] for h in handed]
        kept: set[int] = set()
        for combination in product(*choices):
            kept |= self._walk(shapes, dict(zip(args, combination)), filled, more or
                               more_named, value[1])
        return self._returns_of([stubs[i] for i in sorted(kept)], value, key, anchor,
                               given)

    def _returns_of(self, stubs: list[Definition], value: Value, key: str, anchor: str,
                    given: Given) -> Values | None:
        """What the return annotations of ``stubs`` say, None for no stubs (a type variable
        solved from the arguments ``given``: :mod:`indexgen.analyze.typevars`); where one
        says nothing read here (``-> T``, unsolved) or leaves open what the returns may say
        (``-> list[T]``, ``-> Callable[..., R]``: :func:`~indexgen.analyze.results.hollow`),
        what the implementation gives as well."""
        if not stubs:
            return None
        found = []
        for stub in stubs:
            returned = (self.solved(value, stub, key, anchor, given) or self.annotation(
                value[1], stub.returns, stub.parent)) if stub.returns else NONE
            if not returned and stub.returns not in _NOTHING or returned and hollow(returned):
                returned = returned | self.call(value, key, anchor, ())
            found.append(returned)
        return union(found)

    def handed(self, key: str, anchor: str, steps: tuple | None) -> Values:
        """What an argument (its steps; None: not known) may be, a literal or a call of a
        builtin class as the exact value ``("=", class[, value])``, the builtin class named
        itself (``int``) as a class (``("=", "type")``)."""
        if steps is None:
            return NONE
        first = steps[0]
        if len(steps) == 1 and first[0] == "n":  # a parameter typed only by its callers
            sources = self.local_names(key, anchor).get(first[1])
            if sources and all(x[0] == "<" or x in _UNTYPED for x in sources):
                return NONE
        if len(steps) == 1 and first[0] in ("v", "q"):
            return frozenset({literal_value(first[1]) if first[0] == "v"
                              else ("=", "str", first[1])})
        if len(steps) > 1 and steps[-1][0] == "c":  # dict(x), list(xs): a dict, a list
            made = self._steps(key, anchor, steps[:-1])
            if made and all(v[0] == "b" and v[1] in _MADE for v in made):
                return frozenset({("=", v[1]) for v in made})
        found = self._steps(key, anchor, steps)
        if len(steps) == 1 and ("b", first[1]) in found and self.builtin_class(first[1]):
            return found - {("b", first[1])} | {("=", "type")}  # f(int): the class itself
        return found

    def _walk(self, shapes: list, values: dict, filled: dict, loose: bool, owner: str
              ) -> set[int]:
        """The stubs kept for one combination of the arguments' values (``values``:
        argument -> values), walking them in order (see the module's doc)."""
        kept: set[int] = set()
        stop = None  # the stub the call certainly matches: (its parameters' wanted types)
        for i, (stub, params, bound) in enumerate(shapes):
            if params is None:  # a stub the summary keeps no parameters of: it may match
                if stop is None:
                    kept.add(i)
                continue
            if bound is None:
                continue
            status, wanted = self._status(stub, params, bound, values, filled, owner)
            if status == NO:
                continue
            if stop is None:
                kept.add(i)
                if status == YES and not loose:
                    stop = wanted
            elif self._also(wanted, stop, values):
                kept.add(i)
        return kept

    def _status(self, stub: Definition, params: list, bound: tuple, values: dict,
                filled: dict, owner: str) -> tuple[int, dict]:
        """Whether the call may match one stub (NO, MAY or YES: certainly), and argument ->
        (the annotation of its parameter, what that wants)."""
        pairs, left = bound
        status = YES
        wanted = {}
        for i, arg in pairs:
            text = params[i][3]
            want = self.wanted(owner, text, stub.parent) if text else None
            wanted[arg] = (text, want)
            fit = self.fits(values[arg], want)
            if fit == NO:
                return NO, wanted
            status = min(status, fit)
        for i in left:  # what the default makes it: the stub's own, or the implementation's
            kind, name, default, text = params[i]
            if default in _UNSAID:
                default = filled.get(name, "_")
            want = self.wanted(owner, text, stub.parent) if text else None
            fit = self.fits(NONE if default in _UNSAID else
                            frozenset({literal_value(default[1:]) if default[0] == "#"
                                       else ("=", "str", default[1:-1])}), want)
            if fit == NO:
                return NO, wanted
            status = min(status, fit)
        return status, wanted

    def _also(self, wanted: dict, stop: dict, values: dict) -> bool:
        """Whether a stub after the one the call certainly matches is kept: it wants the
        same for each argument (it differs in what the call leaves out), or it takes
        ``None`` for an argument that is no literal where that one does not."""
        if {a: w[0] for a, w in wanted.items()} == {a: w[0] for a, w in stop.items()}:
            return True
        for arg, (_text, want) in wanted.items():
            if want is not None and ("none",) in want and values[arg] and any(
                    v[0] != "=" for v in values[arg]):
                other = stop.get(arg, ("", None))[1]
                if other is not None and ("none",) not in other:
                    return True
        return False
