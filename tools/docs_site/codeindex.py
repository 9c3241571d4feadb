"""What exists in the code, for checking the names the hand-written pages use.

:class:`CodeIndex` reads our code **statically**: :mod:`ast` over every ``.py`` file of
``src/``, ``tools/`` and ``tests/``; nothing of ours is imported, so a page is checked
against the source as it is, and a module that would fail to import still has its names.
It holds

* every definition by qualified name (modules, classes with their bases, methods,
  functions, class-level fields, ``self.x`` attributes, module-level variables and
  instances, and every import, so a package's re-exports resolve);
* the stream-wait sites: the literal ``site`` argument of each call of a function of
  ours that has a ``site`` parameter (the wrappers of ``fsdp_ref/streams.py``), with the
  function whose body issues it;
* every file and folder of the repository and of the installed torch package.

Names outside our code are looked up where they live: torch and the standard library by
importing the module and reading attributes (:func:`runtime`); other libraries are not
checked. :mod:`docs_site.coderefs` applies the rules of what a page's reference is.
"""

from __future__ import annotations

import ast
import difflib
import fnmatch
import importlib.util
import os
import sys
import warnings
from collections import defaultdict
from pathlib import Path

__all__ = ["OURS", "CodeIndex", "defs_in", "members", "near", "runtime"]

#: Our top packages; a name under them must be found in the static index.
OURS = ("fsdp_ref", "indexgen", "docs_site", "tests")
#: torch modules whose classes (and those of every torch module they load) anchor names.
TORCH_MODULES = ("torch", "torch.distributed", "torch.distributed.tensor",
                 "torch.distributed.fsdp", "torch.distributed.checkpoint",
                 "torch.distributed.device_mesh", "torch.autograd")
_SKIP_DIRS = {".git", ".venv", "site", "__pycache__", ".pytest_cache", ".ruff_cache",
              "include", "lib", "share", "bin"}  # (the last four: torch's C++ and binaries)
_CODE = ("src/", "tools/", "tests/", "benchmarks/")
_DEF = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_MISSING = object()


def near(word: str, candidates) -> str | None:
    """The candidate nearest to ``word`` (:mod:`difflib`), or ``None`` if none is close."""
    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return found[0] if found else None


class CodeIndex:
    """Our definitions (static), the wait sites, and repository and torch paths.

    Attributes:
        repo: the repository root.
        defs: qualified name (``fsdp_ref.reduction.Reduction.finish``) to its entries
            ``(kind, data)``: ``module``, ``class`` (module, base expressions),
            ``function``, ``var``, ``instance`` (module, expression of the class called)
            or ``alias`` (the name imported). A name bound twice has two entries.
        children: qualified name to the names defined directly in it.
        shorts: a module's last part (``reduction``) to the modules of ``src/`` and
            ``tools/`` so named.
        tops: names of the functions and classes at the top of those modules.
        classes: class name to the classes of ours so named.
        instances: name of a module-level instance (``recorder``) to its definitions.
        names: every name defined or imported anywhere in our code.
        waits: wait site to the functions whose bodies issue a wait under it.
        paths: files and folders of the repository and (as ``torch/...``) of torch.
        roots: first parts a repository path may start with: the top-level entries, the
            folders of the code (``fsdp_ref``, ``sanitizer``, ``results``) and ``torch``.
    """

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.defs: dict[str, list[tuple[str, object]]] = defaultdict(list)
        self.children: dict[str, set[str]] = defaultdict(set)
        self.shorts: dict[str, list[str]] = defaultdict(list)
        self.tops: set[str] = set()
        self.classes: dict[str, list[str]] = defaultdict(list)
        self.instances: dict[str, list[str]] = defaultdict(list)
        self.waits: dict[str, list[str]] = defaultdict(list)
        library = {}
        for folder, prefix in (("src", ""), ("tools", ""), ("tests", "tests.")):
            for path in sorted((repo / folder).rglob("*.py")):
                rel = path.relative_to(repo / folder).with_suffix("").parts
                mod = prefix + ".".join(rel[:-1] if rel[-1] == "__init__" else rel)
                tree = ast.parse(path.read_text(encoding="utf-8"))
                pkg = mod if rel[-1] == "__init__" else mod.rpartition(".")[0]
                self._add(mod, "module", None)
                self._body(mod, tree.body, mod, pkg, folder != "tests")
                if folder != "tests":
                    self.shorts[mod.rpartition(".")[2]].append(mod)
                if folder == "src":
                    library[mod] = tree
        self._collect_waits(library)
        self.names = {q.rpartition(".")[2] for q in self.defs}
        self.paths = _walk(repo, "")
        self.paths |= _walk(Path(importlib.util.find_spec("torch").origin).parent, "torch/")
        self.by_base: dict[str, list[str]] = defaultdict(list)
        for p in self.paths:
            self.by_base[p.rpartition("/")[2]].append(p)
        self.roots = {p.rpartition("/")[2] for p in self.paths if "/" not in p or
                      p.startswith(_CODE) and (repo / p).is_dir()} | {"torch"}
        self._torch_classes: dict[str, list[type]] | None = None
        self._suffixes: dict[int, set[str]] = {}

    # ---------------------------------------------------------------- reading the code
    def _add(self, qual: str, kind: str, data: object) -> None:
        self.defs[qual].append((kind, data))
        parent, _, name = qual.rpartition(".")
        self.children[parent].add(name)

    def _body(self, scope: str, body: list[ast.stmt], mod: str, pkg: str, lib: bool) -> None:
        """Index the statements of a module or class body (``scope``) of module ``mod``."""
        for node in body:
            if isinstance(node, (ast.If, ast.Try)):  # (TYPE_CHECKING imports, fallbacks)
                for block in (node.body, node.orelse, getattr(node, "finalbody", []),
                              *[h.body for h in getattr(node, "handlers", [])]):
                    self._body(scope, block, mod, pkg, lib)
            elif isinstance(node, _DEF):
                qual = f"{scope}.{node.name}"
                if lib and scope == mod:
                    self.tops.add(node.name)
                if isinstance(node, ast.ClassDef):
                    bases = [ast.unparse(b.value if isinstance(b, ast.Subscript) else b)
                             for b in node.bases]
                    self._add(qual, "class", (mod, bases))
                    self.classes[node.name].append(qual)
                    self._body(qual, node.body, mod, pkg, lib)
                    for sub in ast.walk(node):  # self.x = ... in any method
                        for t in getattr(sub, "targets", [getattr(sub, "target", None)]):
                            if (isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                                    and t.value.id == "self"):
                                self._assigned(f"{qual}.{t.attr}", sub.value, mod)
                else:
                    self._add(qual, "function", None)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                for t in getattr(node, "targets", [getattr(node, "target", None)]):
                    for name in (n for n in ast.walk(t) if isinstance(n, ast.Name)):
                        self._assigned(f"{scope}.{name.id}", node.value, mod)
                        if lib and scope == mod and isinstance(node.value, ast.Call):
                            self.instances[name.id].append(f"{scope}.{name.id}")
            elif isinstance(node, ast.Import):
                for a in node.names:
                    name = a.asname or a.name.partition(".")[0]
                    self._add(f"{scope}.{name}", "alias", a.name if a.asname else name)
            elif isinstance(node, ast.ImportFrom):
                parts = pkg.split(".")
                base = parts[: len(parts) - node.level + 1] if node.level else []
                source = ".".join(base + ([node.module] if node.module else []))
                for a in node.names:
                    self._add(f"{scope}.{a.asname or a.name}", "alias", f"{source}.{a.name}")

    def _assigned(self, qual: str, value: ast.expr | None, mod: str) -> None:
        if isinstance(value, ast.Call):
            self._add(qual, "instance", (mod, ast.unparse(value.func)))
        else:
            self._add(qual, "var", None)

    def _collect_waits(self, trees: dict[str, ast.Module]) -> None:
        """``waits``: every call of a function with a ``site`` parameter, by literal site."""
        position: dict[str, int] = {}  # wait function -> index of its site argument
        for tree in trees.values():
            for fn in ast.walk(tree):
                if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    names = [a.arg for a in fn.args.posonlyargs + fn.args.args]
                    names = names[1:] if names[:1] in (["self"], ["cls"]) else names
                    if "site" in names:
                        position[fn.name] = names.index("site")

        def visit(node: ast.AST, where: str) -> None:
            for child in ast.iter_child_nodes(node):
                inner = f"{where}.{child.name}" if isinstance(child, _DEF) else where
                if isinstance(child, ast.Call):
                    f = child.func
                    name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                    if name in position:
                        args = child.args[position[name]:position[name] + 1]
                        for arg in args + [k.value for k in child.keywords if k.arg == "site"]:
                            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                                self.waits[arg.value].append(where)
                visit(child, inner)

        for mod, tree in trees.items():
            visit(tree, mod)

    # ---------------------------------------------------------------- looking names up
    def resolve(self, qual: str, rest: list[str], depth: int = 0) -> list[str]:
        """What ``qual.rest...`` names, following imports, instances and base classes:
        qualified names (ours, or outside our code), empty when it names nothing."""
        if depth > 30:
            return []
        if qual not in self.defs:
            return [".".join([qual, *rest])] if _outside(qual, rest) else []
        out: list[str] = []
        for kind, data in self.defs[qual]:
            if kind == "alias":
                out += self.resolve(str(data), rest, depth + 1)
            elif not rest:
                out.append(qual)
            elif kind in ("module", "class") and f"{qual}.{rest[0]}" in self.defs:
                out += self.resolve(f"{qual}.{rest[0]}", rest[1:], depth + 1)
            elif kind == "module":  # from x import *
                for _, star in self.defs.get(f"{qual}.*", []):
                    out += self.resolve(str(star)[:-2], rest, depth + 1)
            if rest and kind in ("class", "instance"):
                mod, exprs = data if kind == "class" else (data[0], [data[1]])
                for expr in exprs:  # an instance's class, a class's bases
                    head, *tail = expr.split(".")
                    start = f"{mod}.{head}" if f"{mod}.{head}" in self.defs else f"builtins.{head}"
                    for target in self.resolve(start, tail, depth + 1):
                        out += self.resolve(target, rest, depth + 1)
        return out

    def torch_classes(self) -> dict[str, list[type]]:
        """Class name to the classes so named in any loaded torch module."""
        if self._torch_classes is None:
            for mod in TORCH_MODULES:
                importlib.import_module(mod)
            found: dict[str, list[type]] = defaultdict(list)
            with warnings.catch_warnings():  # (touching deprecated module attributes warns)
                warnings.simplefilter("ignore")
                for n, m in list(sys.modules.items()):
                    for k, v in list(vars(m).items()) if n.startswith("torch") and m else ():
                        if (isinstance(v, type) and k.lstrip("_")[:1].isupper()
                                and v not in found[k]):
                            found[k].append(v)
            self._torch_classes = dict(found)
        return self._torch_classes

    def suffixes(self, depth: int) -> set[str]:
        """Every name of ours written with its last ``depth`` parts (candidates for
        :func:`near`)."""
        if depth not in self._suffixes:
            self._suffixes[depth] = {".".join(q.split(".")[-depth:]) for q in self.defs
                                     if q.count(".") >= depth - 1}
        return self._suffixes[depth]

    def match(self, path: str, torch: str = "torch/") -> list[str]:
        """Paths equal to ``path`` or ending with ``/path`` (``*`` and ``?`` match as in
        :mod:`fnmatch`): the repository's, and torch's under the folder ``torch``."""
        if any(c in path for c in "*?["):
            hits = [p for p in self.paths
                    if fnmatch.fnmatch(p, path) or fnmatch.fnmatch(p, "*/" + path)]
        else:
            hits = [p for p in self.by_base.get(path.rpartition("/")[2], [])
                    if p == path or p.endswith("/" + path)]
        return [p for p in hits if not p.startswith("torch/") or p.startswith(torch)]


def _walk(root: Path, prefix: str) -> set[str]:
    """Every file and folder under ``root``, relative to it, ``prefix`` prepended."""
    found = set()
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not d.endswith(".egg-info")]
        rel = Path(folder).relative_to(root).as_posix()
        rel = prefix + ("" if rel == "." else rel + "/")
        found.update(rel + name for name in dirs + files)
    return found


def _outside(qual: str, rest: list[str]) -> bool:
    """Whether a name outside our code exists (torch and stdlib looked up; others: yes)."""
    name = ".".join([qual, *rest])
    root = name.partition(".")[0]
    if root in OURS:
        return False
    if root not in ("torch", "builtins") and root not in sys.stdlib_module_names:
        return True
    return runtime(name)[0]


def runtime(name: str) -> tuple[bool, str | None]:
    """Whether ``name`` exists in an importable module (torch, stdlib), and if not, the
    nearest name among the members of its longest existing prefix."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except Exception:  # noqa: BLE001 - not a module: try a shorter prefix
            continue
        return members(obj, ".".join(parts[:cut]), parts[cut:])
    return False, None


def members(obj: object, prefix: str, rest: list[str]) -> tuple[bool, str | None]:
    """Whether the attributes ``rest`` exist below ``obj`` (written ``prefix``), and if
    not, the nearest existing name."""
    for i, part in enumerate(rest):
        child = getattr(obj, part, _MISSING)
        if child is _MISSING:
            close = near(part, dir(obj))
            return False, ".".join([prefix, *rest[:i], close]) if close else None
        obj = child
    return True, None


def defs_in(path: Path) -> set[str]:
    """Functions and classes of a Python file, methods as ``Class::method`` (pytest ids)."""
    if path.suffix != ".py" or not path.is_file():
        return set()
    found = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, _DEF):
            found.add(node.name)
            found |= {f"{node.name}::{m.name}" for m in getattr(node, "body", [])
                      if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return found
