"""Whether a dotted name is a builtin or an attribute of one, as the evaluation knows them.

One table, :func:`builtin_exists`, read by the resolver (an alias such as ``run =
object.__setattr__`` names a builtin), by :mod:`indexgen.analyze.containers` (a builtin's
attribute is one only when the builtin has it: ``list.render`` is none) and by the members of
values: the call graph's ``builtin`` edges are checked with it; and :func:`outside_lacks`,
which says when a class of the standard library certainly has no attribute of a name (the
attribute of an instance of it is then made up: ``typing.TextIO.getvalue``); and
:func:`stdlib_constant`, the builtin type of a constant of the standard library.  It imports
nothing of the pass, so that each of them can.
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
import re
import sys
from collections import defaultdict, deque
from functools import lru_cache
from pathlib import Path
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


#: Modules of the standard library whose classes :func:`outside_lacks` reads: importing them
#: runs nothing of the tree documented, nor anything that acts (no window, no browser).
_STDLIB = frozenset({
    "abc", "argparse", "array", "ast", "asyncio", "collections", "collections.abc",
    "concurrent.futures", "contextlib", "copy", "csv", "dataclasses", "datetime", "decimal",
    "enum", "fractions", "functools", "io", "inspect", "itertools", "json", "logging",
    "numbers", "os", "pathlib", "pickle", "queue", "random", "re", "socket", "string",
    "subprocess", "tempfile", "textwrap", "threading", "traceback", "types", "typing",
    "unittest", "uuid", "warnings", "weakref", "zipfile"})


@lru_cache(maxsize=4096)
def outside_lacks(cls: str, attr: str) -> bool:
    """Whether the class ``cls`` of the standard library (its dotted name: ``typing.TextIO``)
    certainly has no attribute ``attr``, so that ``attr`` of an instance of it is nothing the
    build may name (``typing.TextIO.getvalue``: the object is some other class).  False when
    the class is not one of :data:`_STDLIB`'s, is no class, has a ``__getattr__`` (any
    attribute may exist), or the name is an instance's own (``__init__`` sets it): only a
    class's attributes are known without running it."""
    parts = cls.split(".")
    found: object = _MISSING
    for i in range(len(parts) - 1, 0, -1):
        module = ".".join(parts[:i])
        if module in _STDLIB:
            found = importlib.import_module(module)
            for part in parts[i:]:
                found = getattr(found, part, _MISSING)
            break
    if not isinstance(found, type) or hasattr(found, attr) or any(
            "__getattr__" in vars(k) for k in found.__mro__):  # (its instances', not its
        return False                                          # metaclass's: EnumType's)
    return not any(_names(k.__module__, attr) for k in found.__mro__ if k is not object)


def says_nothing(qualname: str) -> bool:
    """Whether an outside class named ``qualname`` says nothing of its instances
    (``typing.Any``, which an alias such as torch's ``PyTree = Any`` makes an annotation
    of): their attributes and calls are unknown, not ``typing.Any.size``."""
    module, _, last = qualname.rpartition(".")
    return last == "Any" and module in ("typing", "typing_extensions")


#: Modules of the standard library whose constants :func:`stdlib_constant` reads.
_CONSTANTS = _STDLIB | {"math", "sys", "cmath", "errno", "stat"}


@lru_cache(maxsize=4096)
def stdlib_constant(dotted: str) -> str | None:
    """The builtin type (``float``) of a constant of the standard library named ``dotted``
    (``math.inf``, ``sys.maxsize``), or None for anything else (a module, a class, a
    function: their attributes are named after them, ``os.path.join``): the attribute of
    such a value is its type's, not a name under it (``math.inf.clone`` is no name)."""
    module, _, name = dotted.rpartition(".")
    if module not in _CONSTANTS or not name:
        return None
    found = getattr(importlib.import_module(module), name, _MISSING)
    kind = type(found)
    return kind.__name__ if getattr(builtins, kind.__name__, None) is kind \
        and not callable(found) else None


@lru_cache(maxsize=64)
def _words(module: str) -> frozenset[str]:
    """The words of the text of a module of the standard library written in Python (none
    for one that is not: its classes' instance attributes are descriptors of the class),
    read once."""
    file = getattr(sys.modules.get(module), "__file__", None) or ""
    text = Path(file).read_text(encoding="utf-8") if file.endswith(".py") else ""
    return frozenset(re.findall(r"\w+", text))


def _names(module: str, attr: str) -> bool:
    """Whether ``attr`` occurs as a word in the source of ``module`` (an instance attribute
    that ``__init__`` or another function of it may set: never judged missing)."""
    return attr in _words(module)
