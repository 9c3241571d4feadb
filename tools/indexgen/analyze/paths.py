"""The paths of the extraction stage, split into the steps the type evaluation walks.

The extraction stage writes what a name or an argument is as a path of text
(``self.rules[name](state, _)``, ``[a, *b]``, ``getattr(x, "visit_*")``:
:func:`indexgen.extract.syntax.path`); :func:`parse` reads one back as a tuple of steps,
once per distinct text (:class:`~indexgen.analyze.types.Types` keeps them).
"""

from __future__ import annotations

import re

from indexgen.extract.arguments import closing_at
from indexgen.extract.operators import BINARY_NAMES

_NAME = re.compile(r"[A-Za-z_]\w*(?:@\d+)?")  # x@12: x where an isinstance test narrows it
#: self.data@12: an attribute path where an isinstance test narrows it
#: (:mod:`indexgen.extract.attribute_narrowing`)
_NARROWED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+@\d+")
_TOKEN = re.compile(r"#[^,)]*")  # a literal argument of a call (#None, #12, #str)
KEYWORD = re.compile(r"([A-Za-z_]\w*)=")  # a keyword argument (no path holds a "=")


class Given(str):
    """The arguments a path keeps of a call of anything but the builtins it keeps them for,
    as written after ``(:`` (:func:`indexgen.extract.arguments.handed_text`): only
    :mod:`indexgen.analyze.overloads` reads them (:func:`arguments`), and the type
    evaluation calls the callee as if they were not there -- most are never read, and are
    not parsed."""

    __slots__ = ()


class Operator(str):
    """A binary operator's dunder (``__or__``), as the arguments of the call step that
    applies it to the operands a path's first step holds as a tuple (``("u", (left,
    right))``: :func:`parse` reads ``a.__or__(b)`` so, :mod:`indexgen.extract.operators`),
    for :meth:`indexgen.analyze.results.Results.call` to pick the dunder Python picks."""

    __slots__ = ()


def parse(text: str) -> tuple:
    """The steps of a path: ``("n", name)``, or a literal (:func:`~indexgen.extract.syntax.
    literal`): ``("l", items)`` for ``[a, b]`` and ``("m", items)`` for ``{a, *m}``, each item
    ``(unpacked, steps)``, and ``("u", places)`` for ``(a, _)``, each place steps or None; or
    ``("q", pattern)`` (a quoted name given to ``getattr``,
    :func:`indexgen.extract.syntax.name_pattern`); then ``("a", attr)``, ``("c", args)`` (args: steps of the kept
    arguments, None for ``_``; a :class:`Given` for a call's ``(:`` arguments) and
    ``("i", index or None)``.  A binary operation ``a.__or__(b)`` (no ``(:``) is
    ``("u", (steps of a, steps of b or None))`` then ``("c", Operator("__or__"))``."""
    narrowed = _NARROWED.match(text) if "@" in text else None
    if narrowed is not None:  # self.data@12.run: the narrowed path is one name
        if "(" not in text:
            return (("n", narrowed.group()), *parse("x" + text[narrowed.end():])[1:])
        return _parse(text, narrowed.end(), [("n", narrowed.group())])[0]
    if "(" not in text and "[" not in text and "{" not in text:  # a dotted name
        parts = text.split(".")
        return (("n", parts[0]), *[("a", part) for part in parts[1:]])
    steps, _ = _parse(text, 0)
    return steps


def _items(text: str, pos: int) -> tuple[tuple, int, bool]:
    """The items of ``(a, _, ...)`` from ``pos``, just past its opening parenthesis (a
    call's kept arguments, a tuple's places, a :class:`Given`): the steps of each, None for
    ``_``; and of a :class:`Given`'s, ``(("v", "12"),)`` for a literal (``#12``),
    ``("=", name, steps)`` for a keyword one, ``("*",)`` and ``("**",)`` for unpacked ones.
    Then the position past the closing parenthesis, and whether each item was followed by
    ``", "`` or the closing one (where one was not: the items before it, and the end of
    ``text``)."""
    items: list = []
    n = len(text)
    keywords = "=" in text  # (most lists have none: no match tried)
    while pos < n and text[pos] != ")":
        if text[pos] == "*":  # *args or **kwargs: what they hold is not written
            star = "**" if text.startswith("**", pos) else "*"
            items.append((star,))
            pos += len(star)
        else:
            keyword = KEYWORD.match(text, pos) if keywords else None  # name=value
            if keyword is not None:
                pos = keyword.end()
            if text[pos] == "_" and text[pos + 1:pos + 2] in (",", ")"):
                value, pos = None, pos + 1
            elif text[pos] == "#":
                token = _TOKEN.match(text, pos)
                value, pos = (("v", token.group()[1:]),), token.end()
            else:
                value, pos = _parse(text, pos)
            items.append(value if keyword is None else ("=", keyword.group(1), value))
        if text.startswith(", ", pos):
            pos += 2
        elif not text.startswith(")", pos):
            return tuple(items), n, False  # not written so: what was read
    return tuple(items), pos + 1, True


def _parse(text: str, pos: int, first: list | None = None) -> tuple[tuple, int]:
    if first is not None:  # the first step read already (a narrowed path)
        steps = first
    elif text.startswith(("[", "{"), pos):  # [a, b]: a list of a or b; {a, *m}: a mapping
        closing = "]" if text[pos] == "[" else "}"
        pos += 1
        items = []
        while pos < len(text) and text[pos] != closing:
            end = text.find('"=', pos + 1) if text[pos] == '"' and closing == "}" else -1
            key = None  # "root"=f: a stated key (key_text's: word characters, no quote)
            if end > 0:
                key, pos = text[pos + 1:end], end + 2
            splat = text[pos] == "*"
            sub, pos = _parse(text, pos + splat)
            items.append((splat, sub) if key is None else (splat, sub, key))
            if text.startswith(", ", pos):
                pos += 2
            elif not text.startswith(closing, pos):
                return (), len(text)
        steps = [("l" if closing == "]" else "m", tuple(items))]
        pos += 1
    elif text.startswith("(", pos):  # (a, _): a tuple, place by place (None: unknown)
        places, pos, whole = _items(text, pos + 1)
        if not whole:
            return (), len(text)
        steps = [("u", places)]
    elif text.startswith('"', pos):  # getattr's name: "run", or a pattern "visit_*"
        end = text.find('"', pos + 1)
        if end < 0:
            return (), len(text)
        steps = [("q", text[pos + 1:end])]
        pos = end + 1
    else:
        m = _NAME.match(text, pos)
        if m is None:
            return (), len(text)
        steps = [("n", m.group())]
        pos = m.end()
    n = len(text)
    while pos < n:
        ch = text[pos]
        if ch == ".":
            m = _NAME.match(text, pos + 1)
            if m is None:
                break
            steps.append(("a", m.group()))
            pos = m.end()
        elif ch == "(" and text[pos + 1:pos + 2] == ":":  # f(:x, "k"=y): kept as written
            end = closing_at(text, pos)
            steps.append(("c", Given(text[pos + 2:end])))
            pos = end + 1
        elif ch == "(":
            args, pos, _whole = _items(text, pos + 1)
            if len(args) == 1 and steps[-1][0] == "a" and steps[-1][1] in BINARY_NAMES \
                    and len(steps) > 1:  # a.__or__(b): the operands, then the operator
                steps = [("u", (tuple(steps[:-1]), args[0])), ("c", Operator(steps[-1][1]))]
            else:
                steps.append(("c", args))
        elif ch == "[":
            end = text.index("]", pos)
            inner = text[pos + 1:end]
            steps.append(("i", int(inner) if inner.lstrip("-").isdigit() else
                          inner[1:-1] if inner[:1] == '"' else None))
            pos = end + 1
        else:
            break
    return tuple(steps), pos


def arguments(given: Given, lists: bool = False) -> tuple:
    """The arguments of a :class:`Given` (:func:`_items`): each positional one's steps (None:
    not known; ``(("v", "12"),)``: a literal, ``#12``), ``("=", name, steps)`` for a keyword
    one, ``("*",)`` and ``("**",)`` for unpacked ones.  A list literal written with its
    elements (``[a, b]``) is ``#list`` (what the overload matching reads), unless ``lists``:
    then its steps (``("l", items)``)."""
    items = _items(given + ")", 0)[0]
    if lists or "[" not in given:
        return items
    return tuple(_AS_LIST if _listed(item) else ("=", item[1], _AS_LIST)
                 if item and item[0] == "=" and _listed(item[2]) else item for item in items)


_AS_LIST = (("v", "list"),)


def _listed(steps: tuple | None) -> bool:
    """Whether ``steps`` are a list literal alone."""
    return bool(steps) and len(steps) == 1 and steps[0][0] == "l"
