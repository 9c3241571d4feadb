"""Which ``isinstance`` tests test a builtin type or an abstract container.

``isinstance(x, dict)`` or ``isinstance(x, Iterable)`` says nothing of the project's
classes, and the global pass reads such a narrowed ``x`` as a plain ``dict`` of unknown
elements where the code had typed it a ``dict[str, Item]``: those narrowings are left out of
what a bound value takes (:func:`indexgen.extract.narrowing.held`).  A class of the tree
that has such a name (tomlkit's ``Container``) is no abstract container: the module's own
bindings decide (:func:`type_names`).
"""

from __future__ import annotations

import builtins
import collections.abc

from indexgen.extract.model import FileSummary

#: The builtin types and the abstract containers (``Iterable``, ``Mapping``, of
#: ``collections.abc`` or ``typing``), by name.
_BUILTIN_TYPES = frozenset(n for n in dir(builtins) if isinstance(getattr(builtins, n), type)
                           ) | frozenset(collections.abc.__all__)


#: Modules whose names of :data:`_BUILTIN_TYPES` are those types (``typing.Mapping``).
_TYPE_MODULES = frozenset({"builtins", "collections", "collections.abc", "typing",
                           "typing_extensions", "abc"})


def type_names(summary: FileSummary) -> tuple[frozenset[str], frozenset[str]]:
    """How a module writes the builtin types and abstract containers: the names of
    :data:`_BUILTIN_TYPES` it binds to something else (a class of its top level, a name it
    imports from a module other than :data:`_TYPE_MODULES`: tomlkit's own ``Container``, not
    ``collections.abc``'s), and the names it binds to :data:`_TYPE_MODULES` (``import typing
    as t``: ``t``, with the modules' own names), for :func:`indexgen.extract.narrowing.held`."""
    own = {d.name for d in summary.definitions if d.kind == "class" and not d.parent}
    own.update(i.alias or i.name for i in summary.imports
               if i.name and i.module not in _TYPE_MODULES)
    modules = {i.alias or i.name for i in summary.imports if (
        f"{i.module}.{i.name}" if i.name else i.module) in _TYPE_MODULES and (i.alias or i.name)}
    return frozenset(own & _BUILTIN_TYPES), _TYPE_MODULES | modules


def builtin_type(name: str, names: tuple[frozenset[str], frozenset[str]]) -> bool:
    """Whether a tested class written ``name`` is a builtin type or an abstract container:
    one of :data:`_BUILTIN_TYPES` by a name the module does not bind otherwise, or read on
    a name of such a module (``t.Iterable``, ``collections.abc.Mapping``; ``names``:
    :func:`type_names`)."""
    head, _, last = name.rpartition(".")
    if last not in _BUILTIN_TYPES:
        return False
    return head in names[1] if head else last not in names[0]


NO_NAMES = (frozenset(), _TYPE_MODULES)
