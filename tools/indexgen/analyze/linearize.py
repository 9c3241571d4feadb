"""The order Python looks a name up in a class's bases: the C3 linearization.

``class DateAdd(Expression, Func, IntervalOp)`` with ``Func(Condition)``,
``IntervalOp(TimeUnit)`` and every one of them an ``Expr`` looks ``__init__`` up in
``DateAdd, Expression, Func, Condition, IntervalOp, TimeUnit, Expr``: a construction runs
``TimeUnit.__init__``, where a depth-first walk of the bases (``Expression, Expr, ...``)
would stop at ``Expr.__init__``.  A class's order is the class, then the merge of its bases'
orders and of the list of its bases: the first head of those lists that is in no list's
tail comes next, and leaves every list it heads (Python's ``type.mro``).  Where no head
qualifies (an order Python would refuse, which a build whose bases are resolved only in
part can read), the rest follows depth first, each class once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from indexgen.analyze.resolve import Resolver

T = TypeVar("T")


def c3(first: T, orders: list[list[T]], bases: list[T]) -> list[T]:
    """``first``, then the C3 merge of its bases' ``orders`` and of the ``bases`` list."""
    if len(bases) < 2:  # one base (most classes): its order after the class
        return list(dict.fromkeys([first, *orders[0]])) if orders else [first]
    out = [first]
    todo = [list(s) for s in (*orders, bases) if s]
    while todo:
        head = next((s[0] for s in todo if not any(s[0] in t[1:] for t in todo)), None)
        if head is None:  # no consistent order: the rest depth first
            out += [c for s in todo for c in s if c not in out and c != first]
            out = list(dict.fromkeys(out))
            break
        if head != first and head not in out:
            out.append(head)
        todo = [t for t in ((s[1:] if s[0] == head else s) for s in todo) if t]
    return out


def own_bases(resolver: Resolver, key: str, cls: str) -> list[tuple[str, str]]:
    """The bases the class ``cls`` of file ``key`` names, in order: ``(file key,
    qualname)`` of a class of the build, ``("", dotted)`` of one outside it; a subscript's
    class (``Generic[T]``: ``Generic``), none for a call (``namedtuple(...)``)."""
    out = []
    for base in resolver.module(key).bases.get(cls, []):
        if "(" in base or "[" in base:
            base = base.split("[", 1)[0]
            if "(" in base:
                continue
        target = resolver.name_in(key, base)
        if target and target.kind == "project" and target.qualname:
            out.append((target.key, target.qualname))
        elif target and target.kind == "external":
            out.append(("", target.qualname))
    return out
