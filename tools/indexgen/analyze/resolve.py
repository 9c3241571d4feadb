"""Static name resolution across the files of a build.

:class:`Resolver` answers "what does the dotted name ``a.b.c``, written in module M, refer
to?" the way Python's import system would at run time, as far as the source alone tells:

- a name bound in M -- the first binding in source order wins: a class or function (and
  ``Class.method``), a module attribute, an import; imports inside functions and class bodies
  come last;
- a name M imports: ``from x import y`` reads the attribute ``y`` of module ``x`` -- what
  ``x`` binds under that name (a definition, its own import: a re-export, an alias
  assignment) or else the submodule ``x.y``; ``import a.b`` binds ``a``, ``import a.b as c``
  binds ``c`` to ``a.b``; ``from m import *`` makes m's public names (or its ``__all__``)
  visible;
- an alias assignment at module level (``run = _impl.run``);
- attributes of a module found that way (``C.run_all_gather`` with ``C`` bound to a module).

Names that leave the build (``torch.distributed.all_reduce``) resolve to an *external* dotted
name; names that cannot be known statically (an attribute of an instance, a name nothing binds)
to None.  Methods reached through ``self``, ``cls`` or ``super()`` are looked up in the class
and then its project base classes, depth first in base order.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from functools import partial
from operator import itemgetter
from typing import NamedTuple

from indexgen.analyze.builtin_names import builtin_exists
from indexgen.extract.model import FileSummary, ImportRecord, ModuleAttribute, definition_anchors

_BUILTINS = frozenset(dir(builtins))
_MAX_DEPTH = 40
_UNKNOWN = object()
_LINE_ORDER = itemgetter(0, 1)  # a binding's (line, order) in _Module


class Target(NamedTuple):
    """What a name refers to.

    Attributes:
        kind: ``project`` (a definition or module of this build), ``external`` or ``builtin``.
        key: File key of a project target, else ''.
        qualname: Qualname of a project definition ('' for a module); for external and
            builtin targets, the full dotted name.
    """

    kind: str
    key: str = ""
    qualname: str = ""


_target = partial(tuple.__new__, Target)  # Target(...) without its Python-level __new__ frame


class _Module:
    """The names one file binds at module level."""

    def __init__(self, s: FileSummary) -> None:
        self.s = s
        self.defs = definition_anchors(s.definitions)
        self.kinds: dict[str, str] = {}
        self.bases: dict[str, list[str]] = {}
        self.qualname_of: dict[str, str] = {}  # anchor -> qualname
        self.effects: dict[str, list[str]] = {}  # anchor -> finding categories of its body
        # qualname -> (anchor, condition) of each definition it may be bound to, when a
        # condition decides it at import time (indexgen.extract.alternatives)
        self.choices: dict[str, list[tuple[str, str]]] = {}
        for d in s.definitions:
            self.kinds.setdefault(d.qualname, d.kind)
            self.qualname_of[d.anchor] = d.qualname
            if d.effects:
                self.effects[d.anchor] = d.effects
            if d.names and "?" in d.names:
                self.choices.setdefault(d.qualname, []).append((d.anchor, d.names["?"][0]))
            for alias in d.names.get("?=", ()) if d.names else ():  # name = this function
                name, _, condition = alias.partition("\t")
                self.choices.setdefault(name, []).append((d.anchor, condition))
            if d.kind == "class":
                self.bases.setdefault(d.qualname, d.bases)
        self.attrs = {a.name: a for a in s.attributes}
        self.star: list[ImportRecord] = [i for i in s.imports if i.name == "*"]
        # Each name's binding at module level: the first in source order (a definition, an
        # assignment, an import; under TYPE_CHECKING, after a def's), then the local imports.
        first: list[tuple[int, int, str, object]] = []
        first += [(d.lineno, 0, d.qualname, "def") for d in s.definitions if not d.parent]
        first += [(a.lineno, 1, a.name, a) for a in s.attributes]
        late = 1 << 40  # an import under TYPE_CHECKING of a name a def binds: after the def
        first += [(i.lineno + late * (i.scope == "type-checking" and i.bound_name in self.kinds),
                   2, i.bound_name, i) for i in s.imports
                  if i.name != "*" and i.scope in ("module", "type-checking")]
        self.binding: dict[str, object] = {}
        for _line, _order, name, what in sorted(first, key=_LINE_ORDER):
            self.binding.setdefault(name, what)
        for i in s.imports:
            if i.name != "*" and i.scope not in ("module", "type-checking"):
                self.binding.setdefault(i.bound_name, i)


class PerFile(dict):
    """File key -> a table made from that file on first use (``make(key)``).

    Once made, ``tables[key]`` is a plain dictionary lookup: the name resolution and the type
    evaluation of a build ask for the tables of a file hundreds of thousands of times, and a
    method that checks a cache costs a Python-level call each time.  ``make`` must not hold
    the object that holds the tables (a bound method of it would): a build frees its project
    by reference counting, with the cyclic collector paused, and a cycle would keep it.
    """

    def __init__(self, make) -> None:
        super().__init__()
        self.make = make

    def __missing__(self, key: str):
        table = self[key] = self.make(key)
        return table


class Resolver:
    """Resolve dotted names written in the files of a build.

    Args:
        files: Summaries by file key (compact summaries suffice).
        modules: Module names of files whose summaries have none (test files: their path
            below the project folder, the name another test file imports them by).
    """

    def __init__(self, files: dict[str, FileSummary],
                 modules: dict[str, str] | None = None) -> None:
        self.files = files
        self.by_module: dict[str, str] = {}
        for key, s in files.items():
            if s.module:  # test files have no module name of their own
                self.by_module.setdefault(s.module, key)
        for module, key in (modules or {}).items():  # names given to them (test files)
            self.by_module.setdefault(module, key)
        self._modules: dict[str, _Module] = PerFile(lambda key: _Module(files[key]))
        self._memo: dict[tuple[str, ...], Target | None] = {}
        self._names: dict[str, dict[str, Target | None]] = PerFile(lambda key: {})  # name_in
        self._absolute: dict[str, Target | None] = {}  # see absolute

    def module(self, key: str) -> _Module:
        """The names bound by one file (built on first use)."""
        return self._modules[key]

    def anchor(self, key: str, qualname: str) -> str:
        """Anchor of a definition or module attribute ('' for a module or an unknown name)."""
        if not qualname:
            return ""
        table = self._modules[key]
        found = table.defs.get(qualname)
        if found is None and qualname in table.attrs:
            found = table.attrs[qualname].anchor
        return found or ""

    # -- entry points ----------------------------------------------------------------------
    def name_in(self, key: str, dotted: str) -> Target | None:
        """What ``dotted``, written at module level of file ``key``, refers to."""
        names = self._names[key]
        found = names.get(dotted, _UNKNOWN)
        if found is _UNKNOWN:  # a lookup from the top: its result is the same every time
            parts = dotted.split(".")
            found = self._in_module(key, parts, 0)
            if found is None and parts[0] in _BUILTINS and not self._binds(key, parts[0]):
                found = _target(("builtin", "", dotted))
            names[dotted] = found
        return found

    def absolute(self, dotted: str) -> Target | None:
        """An absolute dotted path (``pkg.mod.Class.method``) of the build, if it is one."""
        found = self._absolute.get(dotted, _UNKNOWN)
        if found is _UNKNOWN:  # a lookup from the top, like name_in's: the same every time
            found = self._absolute[dotted] = self._absolute_path(dotted)
        return found

    def _absolute_path(self, dotted: str) -> Target | None:
        parts = dotted.split(".")
        for i in range(len(parts), 0, -1):
            key = self.by_module.get(".".join(parts[:i]))
            if key:
                return self._member_path(key, parts[i:], 0)
        return None

    def attribute_of(self, module: str, name: str) -> Target | None:
        """What ``from module import name`` binds (a definition, a re-export, a submodule)."""
        return self._attribute_of(module, [name], 0)

    def reexports(self, module: str, name: str) -> Iterator[tuple[str, str]]:
        """``(file key, name there)`` of each file ``from module import name`` reads on its
        way: the module's own, then, while it imports the name from another (``from .core
        import name``), that one's; a cycle of re-exports ends after a few steps."""
        for _ in range(_MAX_DEPTH):
            key = self.by_module.get(module)
            if key is None:
                return
            yield key, name
            bound = self._modules[key].binding.get(name)
            if not isinstance(bound, ImportRecord) or not bound.name or bound.name == "*":
                return
            module, name = bound.module, bound.name

    def method(self, key: str, cls: str, name: str, depth: int = 0) -> Target | None:
        """``name`` looked up in class ``cls`` of file ``key``, then in its project bases."""
        table = self._modules[key]
        if f"{cls}.{name}" in table.defs:
            return Target("project", key, f"{cls}.{name}")
        return self.inherited(key, cls, name, depth)

    def inherited(self, key: str, cls: str, name: str, depth: int = 0) -> Target | None:
        """``name`` looked up in the project base classes of ``cls`` (``super().name``)."""
        if depth > _MAX_DEPTH:
            return None
        for base in self._modules[key].bases.get(cls, []):
            if "[" in base:  # a subscripted generic base: Field[str] is Field
                base = base.partition("[")[0]
            target = self.name_in(key, base) if "(" not in base else None
            if target and target.kind == "project" and target.qualname:
                found = self.method(target.key, target.qualname, name, depth + 1)
                if found:
                    return found
        return None

    # -- the lookup --------------------------------------------------------------------------
    def _binds(self, key: str, name: str) -> bool:
        return name in self._modules[key].binding

    def _in_module(self, key: str, parts: list[str], depth: int) -> Target | None:
        """``parts`` as seen from the namespace of module ``key`` (memoized: thousands of
        calls in a build go through the same imports)."""
        memo_key = (key, *parts)
        found = self._memo.get(memo_key, _UNKNOWN)
        if found is _UNKNOWN:
            if depth > _MAX_DEPTH:
                return None  # a cycle: not memoized, the outermost lookup decides
            found = self._memo[memo_key] = self._lookup(key, parts, depth)
        return found

    def _lookup(self, key: str, parts: list[str], depth: int) -> Target | None:
        table = self._modules[key]
        head, rest = parts[0], parts[1:]
        bound = table.binding.get(head)
        if bound == "def":
            return self._definition(key, head, rest)
        if isinstance(bound, ModuleAttribute):
            alias = bound.alias_of.split(".") if bound.alias_of else [head]
            if alias[0] != head:  # run = _impl.run: what it names, when the source tells
                found = self._in_module(key, alias + rest, depth + 1)
                if found is None and builtin_exists(".".join(alias + rest)) and not self._binds(key, alias[0]):
                    found = _target(("builtin", "", ".".join(alias + rest)))
                if found is not None or rest:
                    return found
            # else the attribute itself (NOTHING = _Nothing.NOTHING: a class attribute)
            return Target("project", key, head) if not rest else None
        if isinstance(bound, ImportRecord):
            if bound.name and bound.module == table.s.module and table.s.is_package:
                # ``from . import sub`` in the package itself binds its submodule: read as an
                # attribute of the package, it would look itself up again
                sub = self.by_module.get(f"{bound.module}.{bound.name}")
                if sub:
                    return self._member_path(sub, rest, depth + 1)
            return self.imported(bound, rest, depth + 1)
        for star in table.star:
            found = self._from_star(star, parts, depth + 1)
            if found is not None:
                return found
        if table.s.is_package:  # the submodule, as an attribute of the package
            sub = self.by_module.get(f"{table.s.module}.{head}")
            if sub:
                return self._member_path(sub, rest, depth + 1)
        return None

    def _definition(self, key: str, name: str, rest: list[str]) -> Target | None:
        table = self._modules[key]
        qualname = name
        for i, part in enumerate(rest):
            if table.kinds.get(qualname) != "class":
                return None  # an attribute of a function or of an instance
            if f"{qualname}.{part}" not in table.defs:
                found = self.inherited(key, qualname, part)
                return found if found and i == len(rest) - 1 else None
            qualname = f"{qualname}.{part}"
        return _target(("project", key, qualname))

    def imported(self, imp: ImportRecord, rest: list[str], depth: int = 0) -> Target | None:
        """What ``name.rest`` is where the import ``imp`` binds ``name``."""
        if imp.name:  # from module import name
            return self._attribute_of(imp.module, [imp.name, *rest], depth)
        if imp.alias:  # import a.b as c
            return self._module_path(imp.module, rest, depth)
        return self._module_path(imp.module.split(".")[0], rest, depth)  # import a.b binds a

    def _from_star(self, imp: ImportRecord, parts: list[str], depth: int) -> Target | None:
        key = self.by_module.get(imp.module)
        if key is None:
            return None
        s = self.files[key]
        visible = s.exports if s.exports is not None else None
        if visible is not None and parts[0] not in visible:
            return None
        if visible is None and parts[0].startswith("_"):
            return None
        return self._in_module(key, parts, depth)

    def _attribute_of(self, module: str, parts: list[str], depth: int) -> Target | None:
        """``parts`` read as attributes of the module object ``module``."""
        key = self.by_module.get(module)
        if key is None:
            return self._module_path(module, parts, depth)
        bound = self._modules[key].binding.get(parts[0])
        sub = self.by_module.get(f"{module}.{parts[0]}") if isinstance(
            bound, ImportRecord) and bound.scope == "function" else None
        if sub:  # an import in one of the package's functions sets no attribute of it
            return self._member_path(sub, parts[1:], depth)
        return self._in_module(key, parts, depth)

    def _module_path(self, module: str, rest: list[str], depth: int) -> Target | None:
        """The module ``module`` (maybe outside the build), then attributes ``rest`` of it."""
        key = self.by_module.get(module)
        if key is not None:
            return self._member_path(key, rest, depth)
        for i in range(len(rest), 0, -1):  # a project module below an outside package
            sub = self.by_module.get(".".join([module, *rest[:i]]))
            if sub:
                return self._member_path(sub, rest[i:], depth)
        return _target(("external", "", ".".join([module, *rest])))

    def _member_path(self, key: str, rest: list[str], depth: int) -> Target | None:
        return self._in_module(key, rest, depth) if rest else _target(("project", key, ""))
