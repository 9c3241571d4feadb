"""How a call reached its callee when the call does not name it: the label of a "Calls" edge.

Most calls name their callee: ``blockquote(state)``, ``mod.blockquote(state)``,
``self.run()``, ``x.run()`` reaching ``C.run``, ``C()`` reaching ``C.__init__`` or the
``__init__`` of a base of ``C`` (and ``cls()``, ``type(self)()``, ``self.__class__()``: the
class of the instance), an instance called (its class's ``__call__``), an imported alias
(``from m import f as g; g()``); a class is taken to be called by its name unless the
file records the value that held it (``maker = self.makers[kind]; maker()``).  The others
reach it as a value that travelled to the call: ``for rule in self.rules: rule(state)``,
``handler = self._handlers[name]; handler(x)``, ``fn(x)`` on a parameter, ``f = make_rule();
f()``, ``self._hook()``, ``partial(f, 1)()``.  :func:`through` says so for such an edge, with
the first hop of how the value got there, read from what the caller's own file records: the
sources of the caller's local names (:attr:`~indexgen.extract.model.Definition.names`, see
:mod:`indexgen.extract.bindings`), the attributes its class assigns
(:attr:`~indexgen.extract.model.Definition.members`) and the module's names
(:attr:`~indexgen.extract.model.FileSummary.attributes`).  The global pass is asked
nothing more:

- ``through `rule`: an element of `self.rules```, ``through `handler`: an item of
  `self._handlers```, ``through `f`: returned by `make_rule()```, ``through `p`: `heading`
  wrapped by `partial```, ``through `h`: bound to `self.handle```;
- ``through the parameter `fn`, from its callers`` (the callers' own pages list what they
  hand it as "Passes as a callback");
- ``through `self._hook`: an attribute set in `__init__` to `heading```;
- a call of what an expression gives: ``through an item of `self._handlers```,
  ``through `rebuild`: item 1 of what `_flatten()` returns`` (``flat, rebuild = _flatten(t)``),
  ``through what `make_rule()` returns``, ``through `heading` wrapped by `partial```;
- where nothing is recorded: ``through the value `h```, ``through the attribute `obj.fn```.

A value with several sources names at most two (the one that names the callee alone, where
one does: ``self._hook = heading`` for the edge to ``heading``).
"""

from __future__ import annotations

import re

from indexgen.analyze.context import CallEdge
from indexgen.extract.arguments import without_arguments
from indexgen.extract.shadows import MARK as SHADOW
from indexgen.extract.syntax import WRAPPERS
from indexgen.render.markdown import code
from indexgen.render.page import Page

#: The kinds of edge that are calls (an override is another callee of a call listed already).
_CALLED = frozenset({"project", "closure", "external"})
#: Constructors and what a call of a class runs: ``C()`` names ``C.__init__``.
_MADE = frozenset({"__init__", "__new__"})
#: The class of the instance, called: the constructor is named by the instance's type.
_OWN_CLASS = re.compile(r"^(?:cls|type\(\w+\)|\w+\.__class__)$")
#: What a name carries besides itself: a narrowing (``x@12``), a rebinding (``fn·8``), a
#: shadowed ``self`` (``selfʹ``).
_MARKS = re.compile(rf"@\d+|\u00b7\d+|{SHADOW}")
_ELEMENT = re.compile(r"^next\(iter\((.+)\)\)$")
_WRAPPED = re.compile(r"^(?:[\w.]*\.)?(\w+)\((?:\)\()?([\w.]+)")
#: At most this many first hops are named for a value with several sources.
_SHOWN = 2


def may_label(e: CallEdge) -> bool:
    """Whether :func:`through` may label the edge ``e``: a call (not a callback handed, a
    property read, an override of another callee) that does not name its callee by its last
    name, nor calls an instance of a class (its ``__call__``).  Most calls name their
    callee: the bullets ask :func:`through` only about the others."""
    name = e[5].rpartition(".")[2]
    return e[2] in _CALLED and name != "__call__" and e[1].rpartition(".")[2] != name


def through(p: Page, caller: str, e: CallEdge) -> str:
    """'' when the call of edge ``e`` (made by the definition of anchor ``caller``, '' for
    the module level, on the page ``p``) names its callee or is no call of it (a callback
    handed, a property read, an override of another callee), else how the
    callee was reached (see the module's docstring): a phrase starting with "through", in
    Markdown."""
    if not may_label(e):
        return ""  # by name, or a call of an instance of a class (its __call__)
    text, name = e[1], e[5].rpartition(".")[2]  # the call as written, the callee's name
    defs = p.by_anchor
    if text in p.import_bound:  # from m import blockquote as bq; bq()
        return ""
    # a class's constructor, maybe inherited (Linear(), _Union() -> Module.__init__, _Union)
    made = name in _MADE or name.lstrip("_")[:1].isupper()
    if made and _OWN_CLASS.match(text):
        return ""  # the instance's class: cls(), type(self)(), self.__class__()
    if text[-1] == "]":
        held = text[:text.rindex("[")]
        kept = held.rpartition(".")[2]
        if made and kept[:1].isupper() and not kept.isupper():
            return ""  # a subscripted generic class: OrderedSet[int]()
        return "through " + _item(_plain(text))
    if text[-1] == ")":
        return "through " + _value(text)
    d = defs.get(caller) if caller else None
    if text == "self" or d is not None and d.names.get(text) == ["@"]:
        return ""  # the instance called (its class's __call__)
    shown = code(_plain(text))
    head, dot, attr = text.partition(".")
    if not dot:  # a name of the function, else of the module
        sources = d.names.get(text) if d is not None else None
        if sources is None:
            sources = [x for a in p.s.attributes if a.name == text
                       for x in (a.source, "=" + a.alias_of if a.alias_of else "") if x]
        given = next((x for x in sources if x[0] == "<"), None)
        if given is not None:
            inner = given[2:given.index("|")] if given[1] == "\u03bb" else ""
            return (f"through the parameter {shown}" + (f" of {code(inner)}" if inner else "")
                    + ", from its callers")
        hops = _hops(sources, name)
        if hops:
            return f"through {shown}: " + " or ".join(_joined(hops)) + (
                " or more" if len(hops) > _SHOWN else "")
        return "" if made else "through the value " + shown  # a class is called by name
    if "." not in attr and d is not None and d.parent and (
            head in ("self", "cls") or d.names.get(head) == ["@"]):
        cls = defs.get(p.anchors.get(d.parent, ""))
        found = _set_to(cls.members.get(attr, ()), name) if cls is not None else ""
        if found:
            return f"through {shown}: an attribute set {found}"
    return "" if made else "through the attribute " + shown


def _plain(text: str) -> str:
    """A name or path as the source spells it (a call's kept arguments left out:
    ``convs[_](:#3)`` is ``convs[_]()``)."""
    if "(:" in text:
        text = without_arguments(text)
    return _MARKS.sub("", text) if ("@" in text or "\u00b7" in text or SHADOW in text) \
        else text


def _value(path: str) -> str:
    """What a call of the value of ``path`` (a call itself) calls: a wrapped function
    (``partial(f, _)``: "`f` wrapped by `partial`") or what the call returns."""
    found = _WRAPPED.match(path)
    if found is not None and found.group(1) in WRAPPERS:
        return f"{code(_plain(found.group(2)))} wrapped by {code(found.group(1))}"
    return f"what {code(_plain(path))} returns"


def _item(path: str) -> str:
    """``an item of `table```, ``item 1 of what `pair()` returns`` (``a, b = pair()``): what
    the subscript ``path`` gives."""
    at = path.rindex("[")
    key = path[at + 1:-1]
    return (f"item {key} of " if key.isdigit() else "an item of ") + _holder(path[:at])


def _holder(path: str) -> str:
    """A container's path in words: `` `xs` ``, or ``what `f()` returns``."""
    return f"what {code(path)} returns" if path[-1:] == ")" else code(path)


#: One first hop: how a name is given it ("bound to", "returned by", or '' where the
#: object says it: "an element of `xs`"), the object, and whether it names the callee.
Hop = tuple[str, str, bool]


def _hop(source: str, name: str) -> Hop | None:
    """The first hop of a value of one source, or None for one that says nothing of a
    callable (a type, a container, a narrowing); ``name``: the callee's name."""
    if source[0] != "=" or source == "=None":
        return None
    path = _plain(source[1:])
    if not path or path[0] in "[{(\"'" or path[0].isdigit():
        return None
    element = _ELEMENT.match(path)
    if element is not None:
        return "", "an element of " + _holder(element.group(1)), False
    if path[-1] == "]" and "[" in path:
        return "", _item(path), False
    if path[-1] == ")":
        found = _WRAPPED.match(path)
        if found is not None and found.group(1) in WRAPPERS:
            return "", _value(path), found.group(2).rpartition(".")[2] == name
        return "returned by", code(path), False
    return "bound to", code(path), path.rpartition(".")[2] == name


def _hops(sources, name: str) -> list[Hop]:
    """The distinct first hops of a value of these sources; the one that names the callee
    alone, where one does."""
    hops = list(dict.fromkeys(h for h in (_hop(x, name) for x in sources) if h is not None))
    return [h for h in hops if h[2]][:1] or hops


def _joined(hops: list[Hop]) -> list[str]:
    """The first :data:`_SHOWN` hops as words, a verb said once for the hops after it that
    share it: ``bound to `a` or `b```."""
    said, verb = [], None
    for how, what, _named in hops[:_SHOWN]:
        said.append(what if how == verb or not how else f"{how} {what}")
        verb = how
    return said


def _set_to(set_by: list[tuple[str, str]], name: str) -> str:
    """``in `__init__` to `heading```: the first hops of an attribute's values, each with
    the method that assigns it (``in the class body``), or ''."""
    by = {}  # hop -> the method that assigns it first
    for anchor, source in set_by:
        hop = _hop(source, name)
        if hop is not None:
            by.setdefault(hop, anchor)
    hops = [h for h in by if h[2]][:1] or list(by)
    said = [("in " + code(by[h].rpartition(".")[2].removeprefix("sym-")) if by[h]
             else "in the class body") + " to " + (
        f"what {h[1]} returns" if h[0] == "returned by" else h[1]) for h in hops[:_SHOWN]]
    return " or ".join(said) + (" or more" if len(hops) > _SHOWN else "")
