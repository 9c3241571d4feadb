"""An independent oracle for the claims indexgen's pages make, built on Python's ``ast`` only.

Nothing here imports indexgen's extraction or analysis code: the oracle walks the source tree
itself and states, from the syntax trees, what the pages should claim -- definitions with
their lines, imports with their lines, which files import which, the static call edges and
the test files that import from each module.  The readers of ``page_claims.py`` take the
claims back out of the generated Markdown, so tests compare two independent accounts.

Call edges follow the rules the user guide states for names: a call is at the line Python
reports for it (``reported_lines.py``, from CPython's compiler), its caller the innermost
class or function (not a nested function) whose lines hold it; ``self.m``/``cls.m`` look in
the class and its bases, ``super().m`` in the bases; other names go through the module
namespace (the first binding in source order: a definition, an assignment or an import --
imports following re-exports through packages; then imports in functions, star imports and
submodules); calling a class runs its ``__init__`` (or a project base's).  The oracle does not
infer types: a call on a name bound inside the function is not resolved here, so its edges
are the ones every page must show, and the pages' edges at the call sites it resolves must
be its own.  Anchors follow the documented convention: ``sym-<qualname>``,
``-2``... for redefinitions, ``-overload-<k>`` for ``typing.overload`` stubs.  A class
body's ``name = property(getter, ...)`` defines the property ``name`` (kind ``property``),
where the getter is a function the body defines before it and ``name`` is no definition of
the class; it holds no calls of its own.
"""

from __future__ import annotations

import ast
import builtins
import os
from dataclasses import dataclass, field
from pathlib import Path

from reported_lines import reported_lines

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_BUILTINS = set(dir(builtins))


@dataclass
class Def:
    """A definition the oracle found."""

    qualname: str
    kind: str  # class / function / property (made by a property(...) call)
    line: int
    end: int
    anchor: str = ""
    overload: bool = False
    node: ast.AST | None = None
    parent_class: str = ""


@dataclass
class Mod:
    """One module of the tree."""

    name: str
    rel: str
    tree: ast.Module
    is_package: bool
    defs: list[Def] = field(default_factory=list)
    names: dict[str, tuple] = field(default_factory=dict)
    stars: list[str] = field(default_factory=list)
    all_names: list[str] | None = None
    attr_anchors: dict[str, str] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)


def _package_prefix(root: Path) -> str:
    parts = []
    folder = Path(os.path.realpath(root))
    while (folder / "__init__.py").is_file() and folder.name.isidentifier():
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts)


class Oracle:
    """The oracle's view of one source root.

    Args:
        root: The source root (a package folder, or a folder holding packages).
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        prefix = _package_prefix(root)
        self.mods: dict[str, Mod] = {}
        for path in sorted(root.rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if any(p.startswith(".") or p == "__pycache__" for p in rel.split("/")):
                continue
            try:
                tree = ast.parse(path.read_bytes())
            except (SyntaxError, ValueError):
                continue
            parts = rel[:-3].split("/")
            package = parts[-1] == "__init__"
            if package:
                parts.pop()
            name = ".".join(([prefix] if prefix else []) + parts)
            mod = Mod(name, rel, tree, package)
            self._scan(mod)
            mod.kinds = {d.qualname: d.kind for d in mod.defs}
            self.mods.setdefault(name, mod)
        self.by_rel = {m.rel: m for m in self.mods.values()}

    # -- definitions and the module namespace ----------------------------------------------
    def _scan(self, mod: Mod) -> None:
        counts: dict[str, int] = {}
        stubs: dict[str, int] = {}

        def visit(body, prefix, cls, top):
            for node in body:
                if isinstance(node, (*_FUNCS, ast.ClassDef)):
                    q = prefix + node.name
                    decos = [d.attr if isinstance(d, ast.Attribute) else getattr(d, "id", "")
                             for d in node.decorator_list]
                    overload = "overload" in decos
                    if overload:
                        stubs[q] = stubs.get(q, 0) + 1
                        anchor = f"sym-{q}-overload-{stubs[q]}"
                    else:
                        counts[q] = counts.get(q, 0) + 1
                        anchor = f"sym-{q}" + (f"-{counts[q]}" if counts[q] > 1 else "")
                    kind = "class" if isinstance(node, ast.ClassDef) else "function"
                    mod.defs.append(Def(q, kind, node.lineno, node.end_lineno, anchor, overload,
                                        node, cls))
                    if top:
                        mod.names.setdefault(node.name, ("def", q))
                    if kind == "class":
                        visit(node.body, q + ".", q, False)
                elif isinstance(node, (ast.Import, ast.ImportFrom)) and top:
                    self._bind_import(mod, node)
                elif isinstance(node, (ast.Assign, ast.AnnAssign)) and top:
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for t in targets:
                        for n in ([t] if isinstance(t, ast.Name) else getattr(t, "elts", [])):
                            if isinstance(n, ast.Name) and n.id != "__all__":
                                if n.id not in mod.attr_anchors:
                                    counts[n.id] = counts.get(n.id, 0) + 1
                                    mod.attr_anchors[n.id] = f"sym-{n.id}" + (
                                        f"-{counts[n.id]}" if counts[n.id] > 1 else "")
                                value = _chain(node.value) if node.value is not None else None
                                mod.names.setdefault(n.id, ("alias", value) if value
                                                     else ("value", n.id))
                            if isinstance(n, ast.Name) and n.id == "__all__":
                                mod.all_names = _strings(node.value)
                else:
                    for name in ("body", "orelse", "finalbody"):
                        visit(getattr(node, name, []) or [], prefix, cls, top)
                    for handler in getattr(node, "handlers", []) or []:
                        visit(handler.body, prefix, cls, top)
                    for case in getattr(node, "cases", []) or []:
                        visit(case.body, prefix, cls, top)

        visit(mod.tree.body, "", "", True)
        self._called_properties(mod)
        # function-level imports bind names too (after the module's own bindings)
        for node in ast.walk(mod.tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self._bind_import(mod, node)

    @staticmethod
    def _called_properties(mod: Mod) -> None:
        """Add the properties the class bodies make by calling ``property``."""
        names = {d.qualname: d for d in mod.defs}
        for cls in [d for d in mod.defs if d.kind == "class"]:
            for stmt in cls.node.body:
                if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                        and isinstance(stmt.targets[0], ast.Name)
                        and isinstance(stmt.value, ast.Call)
                        and isinstance(stmt.value.func, ast.Name)
                        and stmt.value.func.id == "property"):
                    continue
                call, q = stmt.value, f"{cls.qualname}.{stmt.targets[0].id}"
                if any(isinstance(a, ast.Starred) for a in call.args) or any(
                        k.arg is None for k in call.keywords) or q in names:
                    continue
                getter = next((k.value for k in call.keywords if k.arg == "fget"),
                              call.args[0] if call.args else None)
                fget = names.get(f"{cls.qualname}.{getattr(getter, 'id', '')}")
                if isinstance(getter, ast.Name) and fget is not None and \
                        fget.kind == "function" and fget.line < stmt.lineno:
                    names[q] = Def(q, "property", stmt.lineno, stmt.end_lineno, f"sym-{q}",
                                   False, stmt, cls.qualname)
                    mod.defs.append(names[q])

    def _bind_import(self, mod: Mod, node: ast.AST) -> None:
        for alias in node.names:
            if isinstance(node, ast.Import):
                if alias.asname:
                    mod.names.setdefault(alias.asname, ("module", alias.name))
                else:
                    top = alias.name.split(".")[0]
                    mod.names.setdefault(top, ("module", top))
            else:
                source = self.absolute(mod, node)
                if alias.name == "*":
                    if source not in mod.stars:
                        mod.stars.append(source)
                else:
                    mod.names.setdefault(alias.asname or alias.name,
                                         ("from", source, alias.name))

    @staticmethod
    def absolute(mod: Mod, node: ast.ImportFrom) -> str:
        """The absolute module a ``from`` import reads."""
        if not node.level:
            return node.module or ""
        base = mod.name.split(".") if mod.is_package else mod.name.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
        return ".".join(base + ([node.module] if node.module else []))

    def anchors(self, mod: Mod) -> dict[str, str]:
        """qualname -> the anchor a reference lands on (the first definition that is not an
        overload stub, else the first stub)."""
        found: dict[str, str] = {}
        for d in mod.defs:
            if d.qualname not in found or ("-overload-" in found[d.qualname] and not d.overload):
                found[d.qualname] = d.anchor
        return found

    # -- name resolution ---------------------------------------------------------------------
    def lookup(self, module: str, parts: list[str], depth: int = 0):
        """``("def", module, qualname)``, ``("module", module)``, ``("external", dotted)`` or
        None for ``parts`` read in the namespace of ``module``."""
        if depth > 40:
            return None
        mod = self.mods.get(module)
        if mod is None:
            return self.module_attr(module, parts, depth + 1)
        head, rest = parts[0], parts[1:]
        binding = mod.names.get(head)
        if binding is None:
            for star in mod.stars:  # what `from star import *` brings, transitively
                other = self.mods.get(star)
                if other is None:
                    continue
                if (head not in other.all_names if other.all_names is not None
                        else head.startswith("_")):
                    continue
                found = self.lookup(star, parts, depth + 1)
                if found:
                    return found
            if mod.is_package and f"{module}.{head}" in self.mods:
                return self.module_attr(f"{module}.{head}", rest, depth + 1)
            return None
        kind = binding[0]
        if kind == "def":
            return self.member(module, binding[1], rest)
        if kind == "alias":
            return self.lookup(module, binding[1].split(".") + rest, depth + 1) \
                if binding[1].split(".")[0] != head else None
        if kind == "value":
            return ("def", module, head) if not rest else None
        if kind == "module":
            return self.module_attr(binding[1], rest, depth + 1)
        if binding[1] == module and mod.is_package and f"{module}.{binding[2]}" in self.mods:
            # `from . import sub` in the package itself: Python imports the submodule
            return self.module_attr(f"{module}.{binding[2]}", rest, depth + 1)
        return self.module_attr(binding[1], [binding[2], *rest], depth + 1)  # from-import

    def module_attr(self, module: str, rest: list[str], depth: int):
        """Attributes ``rest`` of the module object ``module``."""
        if module in self.mods:
            return ("module", module) if not rest else self.lookup(module, rest, depth)
        for i in range(len(rest), 0, -1):
            if ".".join([module, *rest[:i]]) in self.mods:
                return self.module_attr(".".join([module, *rest[:i]]), rest[i:], depth)
        return ("external", ".".join([module, *rest]))

    def member(self, module: str, qualname: str, rest: list[str]):
        kinds = self.mods[module].kinds
        for i, part in enumerate(rest):
            if kinds.get(qualname) != "class":
                return None
            if f"{qualname}.{part}" not in kinds:
                found = self.in_bases(module, qualname, part)
                return found if found and i == len(rest) - 1 else None
            qualname = f"{qualname}.{part}"
        return ("def", module, qualname)

    def constructor(self, module: str, qualname: str):
        """What calling a definition runs: for a class, the ``__init__`` it defines or its
        project bases define before any base outside the tree (depth first, in base order),
        else the class itself."""
        if self.mods[module].kinds.get(qualname) != "class":
            return ("def", module, qualname)
        found = self._init_of(module, qualname, 0)
        return found if found else ("def", module, qualname)

    def _init_of(self, module: str, cls: str, depth: int):
        if f"{cls}.__init__" in self.mods[module].kinds:
            return ("def", module, f"{cls}.__init__")
        node = next(d.node for d in self.mods[module].defs if d.qualname == cls)
        for base in node.bases:
            chain = _chain(base)
            target = self.lookup(module, chain.split(".")) if chain else None
            if not target or target[0] != "def" or depth > 40:
                return None  # a base outside the tree: its __init__ runs
            if self.mods[target[1]].kinds.get(target[2]) == "class":
                found = self._init_of(target[1], target[2], depth + 1)
                if found:
                    return found
        return None

    def in_class(self, module: str, cls: str, name: str, depth: int = 0):
        if f"{cls}.{name}" in self.mods[module].kinds:
            return ("def", module, f"{cls}.{name}")
        return self.in_bases(module, cls, name, depth)

    def in_bases(self, module: str, cls: str, name: str, depth: int = 0):
        if depth > 40:
            return None
        node = next(d.node for d in self.mods[module].defs if d.qualname == cls)
        for base in node.bases:
            chain = _chain(base)
            target = self.lookup(module, chain.split(".")) if chain else None
            if target and target[0] == "def":
                found = self.in_class(target[1], target[2], name, depth + 1)
                if found:
                    return found
        return None

    # -- the claims --------------------------------------------------------------------------
    def call_edges(self) -> set[tuple[str, str, str, str, int]]:
        """(caller rel, caller anchor or '' for module level, callee rel, callee anchor, line),
        a call's line being the one Python reports (``reported_lines.py``)."""
        edges = set()
        for mod in self.mods.values():
            owner = _owners(mod)
            lines = reported_lines(mod.tree)
            for node in ast.walk(mod.tree):
                if not isinstance(node, ast.Call):
                    continue
                caller = owner(node.lineno)
                target = self._call_target(mod, caller, node.func)
                if target and target[0] == "def" and target[1] in self.mods:
                    target = self.constructor(*target[1:])
                    callee = self.mods[target[1]]
                    anchor = (self.anchors(callee).get(target[2])
                              or callee.attr_anchors.get(target[2]))
                    if anchor is None:
                        continue
                    edges.add((mod.rel, caller.anchor if caller else "", callee.rel, anchor,
                               lines[id(node)]))
        return edges

    def _call_target(self, mod: Mod, caller: Def | None, func: ast.AST):
        if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call)
                and isinstance(func.value.func, ast.Name) and func.value.func.id == "super"):
            cls = caller.parent_class if caller else ""
            return self.in_bases(mod.name, cls, func.attr) if cls else None
        chain = _chain(func)
        if not chain:
            return None
        parts = chain.split(".")
        if caller and caller.kind == "function" and parts[0] in self._locals(caller):
            if parts[0] in ("self", "cls") and caller.parent_class:
                return self.in_class(mod.name, caller.parent_class, parts[1]) \
                    if len(parts) == 2 else None
            return None
        return self.lookup(mod.name, parts)

    def _locals(self, caller: Def) -> set[str]:
        cache = self.__dict__.setdefault("_locals_cache", {})
        if id(caller) not in cache:
            cache[id(caller)] = _locals(caller.node)
        return cache[id(caller)]

    def import_targets(self, mod: Mod) -> set[str]:
        """Files (rel) the file's imports read from or reach through re-exports."""
        found = set()
        for node in ast.walk(mod.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in self.mods:
                        found.add(self.mods[alias.name].rel)
            elif isinstance(node, ast.ImportFrom):
                source = self.absolute(mod, node)
                for alias in node.names:
                    if alias.name == "*":  # from m import *: reads m (all its public names)
                        if source in self.mods:
                            found.add(self.mods[source].rel)
                        continue
                    target = self.module_attr(source, [alias.name], 0)
                    if target and target[0] in ("def", "module") and target[1] in self.mods:
                        found.add(self.mods[target[1]].rel)
                        if source in self.mods and source != target[1]:
                            found.add(self.mods[source].rel)  # the re-exporting package
        found.discard(mod.rel)
        return found


def _chain(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    parts.append(node.id)
    return ".".join(reversed(parts))


def _strings(node: ast.AST | None) -> list[str] | None:
    if isinstance(node, (ast.List, ast.Tuple)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return [e.value for e in node.elts]
    return None


def _owners(mod: Mod):
    """line -> the innermost definition holding it (a table filled outer to inner)."""
    table: dict[int, Def] = {}
    for d in sorted(mod.defs, key=lambda d: (d.line, -d.end)):
        if d.kind == "property":
            continue  # a property(...) call's: its line is the class body's
        for line in range(d.line, d.end + 1):
            table[line] = d
    return table.get


def _locals(func: ast.AST) -> set[str]:
    """Names bound inside a function (nested functions included), minus ``global`` ones."""
    bound, declared = set(), set()
    for node in ast.walk(func):
        if node is func:
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (*_FUNCS, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
    for a in (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs,
              func.args.vararg, func.args.kwarg):
        if a is not None:
            bound.add(a.arg)
    return bound - declared


def precision_recall(claimed: set, truth: set) -> tuple[float, float]:
    """Precision and recall of ``claimed`` against ``truth`` (1.0 for empty sets)."""
    hits = len(claimed & truth)
    return (hits / len(claimed) if claimed else 1.0, hits / len(truth) if truth else 1.0)
