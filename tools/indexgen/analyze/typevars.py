"""Type variables of a return annotation, solved from the arguments of a call.

``def ident(v: T) -> T`` called as ``ident(Table())`` gives what it is handed, a ``Table``
-- not what ``T`` alone reads as (its bound, ``Item``, whose every override a call on the
result would list; or nothing, for a ``TypeVar`` without one).  A call keeps its arguments
(:class:`~indexgen.analyze.paths.Given`); where the function's return annotation names a
type variable of the build (a module attribute assigned ``TypeVar(...)``, not one of the
parameters of the method's generic class), each argument is bound to its parameter (as
:mod:`indexgen.analyze.overloads` binds them) and matched against the parameter's
annotation:

- ``x: T`` (or ``T | None``): T is what the argument is; ``cls: type[T]``: an instance of
  the class handed; ``xs: list[T]`` (``Iterable[T]``, ``tuple[T, ...]``...): what iterating
  it gives; ``m: dict[K, V]``: its keys and values (``fn: Callable[..., T]`` solves
  nothing: on torch, what FSDP's hooks give that way flowed on to where the code tests
  what it got, which the evaluation does not follow);
- a value that is certainly of the type variable's bound (or of one of its constraints;
  any value, where it has neither) stands for itself; one that may be (an abstract
  ``Mapping`` for ``T = TypeVar("T", bound=Item)``) for what ``T`` reads as today; one that
  cannot be, for nothing (a type checker would not take it);
- where an argument nothing is known of is bound to such a parameter, a parameter the call
  leaves out has a default that is not ``None``, or ``*args`` may fill one, the type
  variable is what it reads as today as well.  An argument's values are found as the
  overload matching finds them (:meth:`~indexgen.analyze.overloads.Overloads.handed`), but
  a parameter of the caller whose annotation says nothing of what it holds (none, ``Any``,
  ``tuple[Any, ...]``) counts as unknown: what all its callers hand it is no type a checker
  would solve the variable to (torch's ``promote_constants(inputs)`` in a closure
  ``inner(*inputs: Any)`` that every lowering calls).

The parameters read are those the summary keeps: of a function with ``typing.overload``
stubs, of each stub and of its implementation (:mod:`indexgen.extract.stubs`); of any other
plain function, the annotation of its first parameter only (the ``(`` shape,
:func:`indexgen.extract.calls.accepts`), which the call's first positional argument fills.
Where no type variable is solved so, the call gives what the annotation gives today.

A method that returns the instance it is called on (``-> Self``): :mod:`indexgen.analyze.
receivers`.
"""

from __future__ import annotations

import ast
import re

from indexgen.analyze.annotation_syntax import (
    TYPE_PARAMETERS,
    alternatives,
    dotted,
    parsed,
    type_arguments,
)
from indexgen.analyze.fits import MAY, YES
from indexgen.analyze.members import BOUND
from indexgen.analyze.parameters import bind, call_arguments, parameters_of
from indexgen.analyze.paths import Given, arguments
from indexgen.analyze.results import NO_VARS, hollow
from indexgen.analyze.values import (
    MAPPING_TYPES,
    NONE,
    SEQUENCE_TYPES,
    Value,
    Values,
    ordered,
    union,
)
from indexgen.extract.model import Definition
from indexgen.extract.stubs import PARAMETERS

WORD = re.compile(r"[A-Za-z_]\w*")  # the names an annotation's text holds (and its parts)
#: What declares a type variable a return annotation may name (solved from the arguments).
_DECLARES = frozenset({"TypeVar"})
#: The kinds of definitions whose ``(`` shape holds their first parameter's annotation.
_SHAPED = frozenset({"function", "staticmethod"})
#: Stand-ins for the parameters of a function the summary keeps only the first of: any
#: further positional or keyword argument is taken, and tells nothing.
_REST = (("v", "", "", ""), ("w", "", "", ""))


def names_in(node: ast.AST) -> set[str]:
    """The plain names an annotation holds, in its strings too (``"T"``, ``list["T"]``)."""
    found = set()
    for n in ast.walk(node):
        if type(n) is ast.Name:
            found.add(n.id)
        elif type(n) is ast.Constant and type(n.value) is str:
            try:
                found |= names_in(ast.parse(n.value.strip(), mode="eval").body)
            except (SyntaxError, ValueError, RecursionError):
                pass
    return found


class TypeVars:
    """Type variables of return annotations solved from calls; mixed into
    :class:`~indexgen.analyze.types.Types` (through :class:`~indexgen.analyze.overloads.
    Overloads`), whose resolver, memo, cycle guard, ``annotation``, ``element``, ``call``,
    ``handed``, ``wanted``, ``fits``, ``mro``, ``local_names``, ``bound_annotation`` and
    ``_generic`` it uses."""

    resolver: object
    _memo: dict
    _parsed: dict

    def type_vars(self, key: str, text: str, cls: str) -> frozenset[str]:
        """The names of the type variables of the build that the annotation ``text`` of file
        ``key`` names (``cls``: the class of the method it annotates, whose own type
        parameters are none of them), read once (:data:`~indexgen.analyze.results.NO_VARS`
        for none)."""
        memo = ("typevars", key, text, cls)
        found = self._memo.get(memo)
        if found is None:
            own = self._generic(key, cls)[0] if cls else ()
            found = frozenset(n for n in set(WORD.findall(text)) if n not in own
                              and self.is_type_var(key, n))
            found = self._memo[memo] = found or NO_VARS
        return found

    def is_type_var(self, key: str, name: str, declares: frozenset[str] = _DECLARES
                    ) -> bool:
        """Whether ``name``, written in file ``key``, is a module attribute of the build
        assigned a ``TypeVar(...)`` (with a bound or constraints or not; ``declares``: the
        names of what may declare it): one whose line holds a module-level call of one of
        them (the summary keeps of the value only what its type is read from, which for a
        bound is the bound's name)."""
        target = self.resolver.name_in(key, name)
        if target is None or target.kind != "project" or not target.qualname:
            return False
        attr = self.resolver.module(target.key).attrs.get(target.qualname)
        return attr is not None and self._declared(target.key).get(attr.lineno) in declares

    def _declared(self, key: str) -> dict[int, str]:
        """The lines of file ``key`` that call what declares a type parameter at module
        level, each with that callee's last name."""
        memo = ("typevar lines", key)
        found = self._memo.get(memo)
        if found is None:
            found = self._memo[memo] = {
                c.line: last for c in self.resolver.files[key].calls
                if not c.caller and (last := c.text.rpartition(".")[2]) in TYPE_PARAMETERS}
        return found

    def solved(self, value: Value, d: Definition, key: str, anchor: str, given: Given
               ) -> Values:
        """What calling the function ``value`` (its definition or one of its stubs ``d``)
        with the arguments ``given`` (written in ``anchor`` of file ``key``) gives, with the
        type variables of its return annotation solved from them; none where none is (see
        the module's doc)."""
        names = self.type_vars(value[1], d.returns, d.parent)
        if names is NO_VARS:
            return NONE
        return self._guard.get(("\17", value, d.lineno, key, anchor, given), self._solved,
                               value, d, names, key, anchor, given)

    def _solved(self, value: Value, d: Definition, names: frozenset[str], key: str,
                anchor: str, given: Given) -> Values:
        params = parameters_of(d) if d.names and PARAMETERS in d.names else None
        shape = d.names.get("(") if params is None and d.kind in _SHAPED else None
        if params is None and (value[-1] == BOUND or not shape or len(shape) < 2):
            return NONE  # (a bound plain function's first parameter is the instance)
        if params is None:
            params = [("p", "", "", shape[1]), *_REST]
        positional, keywords, more, more_named = call_arguments(arguments(given))
        shift = 1 if value[-1] == BOUND else 0
        bound = bind(params, len(positional), keywords, more, more_named, shift)
        if bound is None:
            return NONE
        pairs, left = bound
        found: dict[str, list[Values]] = {}
        unknown: set[str] = set()
        taken = set()
        for i, arg in pairs:
            taken.add(i)
            text = params[i][3]
            held = self.type_vars(value[1], text, d.parent) & names if text else None
            if held:
                steps = positional[arg] if type(arg) is int else keywords[arg]
                self._match(value[1], d.parent, parsed(self._parsed, text),
                            self._given(key, anchor, steps), held, found, unknown)
        for i, p in enumerate(params):  # left out (its default), or filled by *args
            if i not in taken and p[3] and not (i in left and p[2] == "#None"):
                unknown |= self.type_vars(value[1], p[3], d.parent) & names
        if not found:
            return NONE
        solved = {}
        for name in names:
            got = union(found.get(name, ()))
            if name in unknown or not got:
                got = union([got, self.annotation(value[1], name, d.parent)])
            solved[name] = got
        return self.bound_annotation(value[1], d.returns, d.parent, solved)

    def _given(self, key: str, anchor: str, steps: tuple | None) -> Values:
        """What an argument is (:meth:`~indexgen.analyze.overloads.Overloads.handed`); none
        for a parameter of the caller whose annotation says nothing of what it holds (see
        the module's doc)."""
        if steps and len(steps) == 1 and steps[0][0] == "n":
            sources = self.local_names(key, anchor).get(steps[0][1])
            if sources and all(self._untyped(key, anchor, x.lstrip("^")) for x in sources):
                return NONE
        return self.handed(key, anchor, steps)

    def _untyped(self, key: str, anchor: str, source: str) -> bool:
        """Whether one source of a parameter says nothing of its type: what its callers hand
        (``<``), the end of a narrowing (``#12``), an annotation that reads as nothing
        or as a container of nothing known."""
        if not source or source[0] == "<" or source[0] == "#":
            return True
        if source[0] != ":":
            return False
        d = self._defs[key][0].get(anchor)
        found = self.annotation(key, source[1:], d.parent if d is not None else "")
        return not found or hollow(found)

    def _match(self, key: str, cls: str, node: ast.AST | bool, values: Values,
               names: frozenset[str], found: dict, unknown: set) -> None:
        """Bind the type variables ``names`` that the parameter annotation ``node`` holds
        to what the argument's ``values`` make them (``found``: name -> values; ``unknown``:
        those it leaves open)."""
        t = type(node)
        if t is ast.Constant and type(node.value) is str:
            node = parsed(self._parsed, node.value)
            t = type(node)
        if t is ast.Name and node.id in names:
            self._bound_to(key, cls, node.id, values, found, unknown)
            return
        held = names_in(node) & names if node else names
        split = alternatives(node) if node else None
        if split is not None:  # T | None: T (a None handed is no value)
            split = [a for a in split if names_in(a) & names]
            if len(split) == 1:
                self._match(key, cls, split[0], values, names, found, unknown)
            else:
                unknown |= held
            return
        if t is not ast.Subscript:
            unknown |= held
            return
        last = dotted(node.value).rpartition(".")[2]
        args = type_arguments(node)
        values = frozenset(v for v in values if v[0] != "=" or v[1] != "NoneType")
        if last in ("type", "Type") and len(args) == 1:
            inner = frozenset(("i", v[1], v[2]) for v in values if v[0] == "c")
            if len(inner) < len(values):
                unknown |= held
            self._match(key, cls, args[0], inner, names, found, unknown)
        elif last in SEQUENCE_TYPES or last in ("tuple", "Tuple") and len(args) == 2 \
                and type(args[1]) is ast.Constant and args[1].value is ...:
            each = [self.element(v) if v[0] != "=" else NONE for v in ordered(values)]
            if not all(each):  # (a literal list, an instance not known to be iterable)
                unknown |= held
            self._match(key, cls, args[0], union(each), names, found, unknown)
        elif last in MAPPING_TYPES and len(args) == 2:
            if any(v[0] != "d" for v in values):
                unknown |= held
            for k, arg in enumerate(args):
                self._match(key, cls, arg, union(v[1 + k] for v in values if v[0] == "d"),
                            names, found, unknown)
        else:
            unknown |= held

    def _bound_to(self, key: str, cls: str, name: str, values: Values, found: dict,
                  unknown: set) -> None:
        """Bind the type variable ``name`` to the values of an argument that fit its bound
        (see the module's doc)."""
        want = self.wanted(key, name, cls)
        kept = set()
        for v in ordered(values):
            fit = self.fits(frozenset({v}), want)
            if fit == YES:
                if v[0] != "=":
                    kept.add(v)
                elif v[1] == "type":  # a builtin class named (f(int)): not read
                    unknown.add(name)
                elif v[1] != "NoneType":  # a literal: an instance of its builtin class
                    kept.add(("b", v[1]))
            elif fit == MAY:
                unknown.add(name)
        if not values:
            unknown.add(name)
        if kept:
            found.setdefault(name, []).append(frozenset(kept))
