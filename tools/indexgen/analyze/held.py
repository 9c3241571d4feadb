"""What a project subclass of ``list`` or ``dict`` holds where no type argument says: what
its own methods put into it through the builtin's methods called explicitly.

tomlkit's ``class Array(Item, _CustomList)`` (``_CustomList(MutableSequence, list)``) states
no element type; its methods put each item with ``list.insert(self, pos, it)`` and
``list.__setitem__(self, key, it)``, and ``Table``'s (a ``dict``) with
``dict.__setitem__(self, key, _item)``.  Iterating such an instance (``for v in self:
v.unwrap()`` in ``Array.unwrap``) gives what those calls put -- for a mapping, the keys --
and a method of the builtin called on it (``self.values()``, ``self.items()``,
``self.get(k)``, ``self[i]``) what it gives of a container holding them
(:func:`~indexgen.analyze.containers.container_member`).

The calls read are those of the methods of the class and of its project bases, as their
flow records keep them (:func:`indexgen.analyze.flows.records`: the arguments that are
paths), whose first argument is ``self``: ``list.append``, ``insert``, ``__setitem__``
(what they put), ``extend`` and ``__init__`` (the elements of what they are handed);
``dict.__setitem__`` and ``setdefault`` (a key and a value); and the same called through
``super()`` where no project class after the method's own in the instance's order defines
that method (``super().__init__(trivia)`` in ``Array`` is ``Item``'s).  A class is a
``list`` (or a ``dict``) where its bases, or those of a project base, name ``list``,
``MutableSequence`` or ``UserList`` (``dict``, ``MutableMapping``, ``OrderedDict``,
``UserDict``, ``defaultdict``).  What a put hands is evaluated where it is written, so a
parameter is what its annotation and its callers make it.

A subclass of a builtin sequence that keeps the builtin's constructor (``class
Stack(list)``, no ``__init__``) holds, besides, what it is made with: ``Stack([Frame()])``
is an instance that holds ``Frame``s (:meth:`Held.built`).
"""

from __future__ import annotations

from indexgen.analyze.containers import container_member
from indexgen.analyze.flows import slots
from indexgen.analyze.paths import Given, arguments
from indexgen.analyze.values import NONE, Value, Values, ordered, union
from indexgen.extract.narrowing import at_line

#: Last names of bases that make a class a list, or a dict, at run time (or in its interface).
_LISTS = frozenset({"list", "List", "MutableSequence", "UserList"})
_DICTS = frozenset({"dict", "Dict", "MutableMapping", "OrderedDict", "UserDict",
                    "defaultdict"})
#: Last names of the builtin sequences whose constructor holds the elements of the iterable
#: it is handed (:meth:`Held.built`).
_BUILT = frozenset({"list", "List", "tuple", "set", "frozenset", "deque", "UserList"})
#: Method -> what its arguments put: ("e", slot) an element, ("x", slot) the elements of an
#: iterable, ("k", slot) a key, ("v", slot) a value (slots counted after ``self``).
_PUTS = {
    "list": {"append": (("e", 0),), "insert": (("e", 1),), "__setitem__": (("e", 1),),
             "extend": (("x", 0),), "__init__": (("x", 0),)},
    "dict": {"__setitem__": (("k", 0), ("v", 1)), "setdefault": (("k", 0), ("v", 1))},
}
#: The methods of the builtin containers a call on such an instance may be.
HELD_METHODS = frozenset(set(dir(list)) | set(dir(dict)))


class Held:
    """Items of project subclasses of ``list`` and ``dict``; mixed into
    :class:`~indexgen.analyze.types.Types` (through :class:`~indexgen.analyze.results.
    Results`), whose resolver, tables, memo, cycle guard, ``mro``, ``evaluate``,
    ``element``, ``call`` and ``narrowings`` it uses."""

    resolver: object
    _defs: dict
    _memo: dict

    def held(self, key: str, cls: str) -> Values:
        """The builtin container an instance of the project class ``cls`` of file ``key``
        is, with what its methods put into it (``("s", E)``, ``("d", K, V)``); none where it
        is neither a list nor a dict, or no method puts anything."""
        return self._guard.get(("\20", key, cls), self._held, key, cls)

    def held_call(self, value: Value, key: str, anchor: str, args: tuple, on: Values
                  ) -> Values:
        """What calling ``value``, a builtin's method read on the receivers ``on``, gives
        where a receiver is an instance of such a class (``self.values()``)."""
        name = value[1].rpartition(".")[2]
        found = []
        for r in ordered(on):
            if r[0] == "i":
                for held in ordered(self.held(r[1], r[2])):
                    found += [self.call(m, key, anchor, args)
                              for m in ordered(container_member(held, name))]
        return union(found)

    def built(self, value: Value, key: str, anchor: str, given: Given) -> Values:
        """What calling the project class ``value`` (``("c", k, C)``) with the arguments
        ``given`` in the function ``anchor`` of file ``key`` gives where the class subclasses
        a builtin sequence whose constructor no project class of its order replaces (no
        ``__init__`` or ``__new__``): an instance that holds the elements of its first
        argument, ``("i", k, C, {("s", E)})`` (``class Stack(list)``: ``Stack([Frame()])``
        and ``Stack(frames)`` hold ``Frame``s, as ``list([Frame()])`` does), which
        iterating, subscripting and the builtin's methods give (:meth:`~indexgen.analyze.
        results.Results.element`, :meth:`~indexgen.analyze.members.Members.member`); none
        for any other class or argument."""
        if not self._builds(value[1], value[2]):
            return NONE
        items = arguments(given, lists=True)
        first = items[0] if items else None
        if not first or type(first[0]) is not tuple or first[0][0] == "v":
            return NONE  # none, unknown, a keyword, *args, a literal
        elements = union(self.element(v) for v in ordered(self._steps(key, anchor, first)))
        return frozenset({("i", value[1], value[2], frozenset({("s", elements)}))}) \
            if elements else NONE

    def _builds(self, key: str, cls: str) -> bool:
        """Whether an instance of the class is made as the builtin sequence it subclasses
        makes one (:data:`_BUILT`; no ``__init__`` or ``__new__`` of a project class before
        it), read once."""
        memo = ("built", key, cls)
        found = self._memo.get(memo)
        if found is None:
            found = False
            for k, c in self.mro(key, cls):
                by_name = self._defs[k][1] if k else None
                if by_name is None or f"{c}.__init__" in by_name or f"{c}.__new__" in by_name:
                    break
                if any(base.partition("[")[0].rpartition(".")[2] in _BUILT
                       for base in self.resolver.module(k).bases.get(c, ())):
                    found = True
                    break
            self._memo[memo] = found
        return found

    def _held(self, key: str, cls: str) -> Values:
        kind = None
        mro = self.mro(key, cls)
        for k, c in mro:
            for base in self.resolver.module(k).bases.get(c, ()) if k else (c,):
                last = base.partition("[")[0].rpartition(".")[2]
                if last in _LISTS or last in _DICTS:
                    kind = "list" if last in _LISTS else "dict"
                    break
            if kind:
                break
        if kind is None:
            return NONE
        roles: dict[str, list[Values]] = {}
        for k, c in mro:
            for anchor, line, method, items, over in self._put_calls(k).get(c, ()) if k else ():
                if over and any(kk and f"{cc}.{method}" in self._defs[kk][1]
                                for kk, cc in mro[mro.index((k, c)) + 1:]):
                    continue  # super().m(...): a project base's own m
                given = slots(items)
                for role, slot in _PUTS[kind].get(method, ()):
                    path = given.get(str(slot + (not over)))
                    if path:
                        got = self.evaluate(k, anchor, self._read_at(k, anchor, path, line))
                        if role == "x":
                            role, got = "e", union(self.element(v) for v in ordered(got))
                        roles.setdefault(role, []).append(got)
        if not roles:
            return NONE
        if kind == "list":
            return frozenset({("s", union(roles.get("e", ())))})
        return frozenset({("d", union(roles.get("k", ())), union(roles.get("v", ())))})

    def _read_at(self, key: str, anchor: str, path: str, line: int) -> str:
        """``path`` as read on ``line`` of the function ``anchor``: a name written as where
        an ``isinstance`` test narrows it there (``value@12``, :meth:`~indexgen.analyze.
        hierarchy.Hierarchy.narrowings`; a flow record keeps the name as written)."""
        narrow = self.narrowings(key, anchor)
        return at_line(path, line, narrow) if narrow else path

    def _put_calls(self, key: str) -> dict[str, list[tuple[str, int, str, str, bool]]]:
        """Class -> (method anchor, line, builtin method, the record's items, whether through
        ``super()``) of the puts into ``self`` that the methods of file ``key`` write, read
        once."""
        memo = ("held puts", key)
        found = self._memo.get(memo)
        if found is None:
            found = self._memo[memo] = {}
            by_anchor = self._defs[key][0]
            for call in self.resolver.files[key].calls:
                text = call[1]
                if text[0] != "<" or not text.startswith(("<list.", "<dict.", "<super().")):
                    continue
                head, _, items = text[1:].partition("\t")
                owner, _, method = head.rpartition(".")
                over = owner == "super()"
                d = by_anchor.get(call[0])
                if d is None or not d.parent or not (over or "0=self" in items.split(",")):
                    continue
                if any(method in puts for puts in _PUTS.values()):
                    found.setdefault(d.parent, []).append((call[0], call[2], method, items,
                                                           over))
        return found
