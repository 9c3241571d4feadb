"""Stage 1b: the structure of a module: definitions, module attributes and imports.

:class:`Structure` walks the statements of the module and of its classes (entering ``if``,
``try``, ``with``, loops and ``match`` blocks, never function bodies) and records every class,
function and method -- redefinitions included, each with its own anchor -- the module-level
assignments and the imports with their scope.  Imports inside function bodies are added later by
the identifier walk (:mod:`indexgen.extract.identifiers`) through :meth:`Structure.add_import`.
"""

from __future__ import annotations

import ast

from indexgen.extract.alternatives import Binding
from indexgen.extract.attribute_source import attribute_source
from indexgen.extract.docstrings import first_paragraph
from indexgen.extract.model import Definition, FileSummary, ImportRecord, ModuleAttribute
from indexgen.extract.syntax import (
    constant_strings,
    dotted,
    expr_text,
    is_type_checking,
)

FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_BLOCKS = (ast.If, ast.Try, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)
_TRY_STAR = getattr(ast, "TryStar", ast.Try)
if hasattr(ast, "TryStar"):
    _BLOCKS = (*_BLOCKS, ast.TryStar)
_ACCESSORS = (".setter", ".getter", ".deleter")  # a property's other functions: no rebinding


class Structure:
    """Fills the definitions, attributes and imports of a summary (one use per file).

    Args:
        summary: The summary to fill.
        text: The decoded source (for the text of attribute values).

    Attributes:
        defs: Every definition with its syntax node, in source order.
        module_imports: ``id()`` of the import statements outside function bodies.
        docstrings: Raw docstring of every definition, by anchor (griffe replaces what it
            models; the rest is parsed from these).
    """

    def __init__(self, summary: FileSummary, text: str) -> None:
        self.s = summary
        self.text = text
        self.defs: list[tuple[Definition, ast.AST]] = []
        self.module_imports: set[int] = set()
        self.docstrings: dict[str, str] = {}
        self._anchors: set[str] = set()
        self._overloads: dict[str, int] = {}
        self._attribute_names: set[str] = set()
        #: Every binding of a name by a definition, or by a module-level import, with the
        #: branches holding it (:mod:`indexgen.extract.alternatives`).
        self.bound: list[Binding] = []
        #: Module-level names bound to strings or literal containers of strings
        #: (:func:`~indexgen.extract.syntax.constant_strings`): what a dynamic import of
        #: ``NAMES[key]`` may import.
        self.constants: dict[str, list[str]] = {}
        self._lines: list[str] | None = None

    def scan(self, tree: ast.Module) -> None:
        """Record the module's definitions, attributes and imports."""
        self._scan_body(tree.body, "", "", "module")

    def _anchor(self, name: str, overload: bool = False) -> str:
        """A unique id: ``sym-<name>``, ``-2``, ``-3``... for redefinitions; overload stubs get
        ``sym-<name>-overload-<k>`` so that ``sym-<name>`` stays with the implementation."""
        if overload:
            k = self._overloads[name] = self._overloads.get(name, 0) + 1
            anchor = f"sym-{name}-overload-{k}"
            self._anchors.add(anchor)
            return anchor
        anchor = base = "sym-" + name
        n = 1
        while anchor in self._anchors:
            n += 1
            anchor = f"{base}-{n}"
        self._anchors.add(anchor)
        return anchor

    def _scan_body(self, body: list[ast.stmt], prefix: str, parent: str, scope: str,
                   branches: tuple = ()) -> None:
        """Record what ``body`` defines; ``branches``: the ``if``/``try`` branches that hold it
        (see :mod:`indexgen.extract.alternatives`)."""
        for node in body:
            t = type(node)
            if t in FUNCS or t is ast.ClassDef:
                self._add_def(node, prefix, parent, branches)
            elif t is ast.Import or t is ast.ImportFrom:
                self.module_imports.add(id(node))
                self.add_import(node, scope if not parent else "nested")
                if not parent:
                    self.bound += [(a.asname or a.name.partition(".")[0], f"%{a.lineno}",
                                    branches) for a in node.names]
            elif t in _BLOCKS:
                inner = "type-checking" if t is ast.If and is_type_checking(node.test) else scope
                if t is ast.If:
                    then, other = (*branches, ("if", node.test)), (*branches, ("else", node.test))
                elif t is ast.Try or t is _TRY_STAR:
                    then = other = (*branches, ("try", None))
                else:
                    then = other = branches
                self._scan_body(node.body, prefix, parent, inner, then)
                self._scan_body(getattr(node, "orelse", []), prefix, parent, scope, other)
                for handler in getattr(node, "handlers", ()):
                    self._scan_body(handler.body, prefix, parent, scope,
                                    (*branches, ("except", handler.type)))
                self._scan_body(getattr(node, "finalbody", []), prefix, parent, scope, branches)
            elif t is ast.Match:
                for case in node.cases:
                    self._scan_body(case.body, prefix, parent, scope, branches)
            elif not parent and (t is ast.Assign or t is ast.AnnAssign):
                self._add_attribute(node, branches)
            if (not parent and t is ast.If and not self.s.main_line
                    and _is_main_guard(node.test)):
                self.s.main_line = node.lineno

    def _add_def(self, node: ast.AST, prefix: str, parent: str, branches: tuple = ()) -> None:
        qualname = prefix + node.name
        decorators = [expr_text(d) for d in node.decorator_list]
        start = min([d.lineno for d in node.decorator_list] + [node.lineno])
        if type(node) is ast.ClassDef:
            kind = "class"
            sig = ", ".join([expr_text(b) for b in node.bases]
                            + [f"{k.arg}={expr_text(k.value)}" if k.arg
                               else f"**{expr_text(k.value)}" for k in node.keywords])
            bases = [expr_text(b) for b in node.bases]
        else:
            kind = _function_kind(decorators) if parent else "function"
            sig = ""
            bases = []
        first = node.body[0]  # ast.get_docstring for the two in three that have none
        doc = (ast.get_docstring(node, clean=True) or "") if (
            type(first) is ast.Expr and type(first.value) is ast.Constant) else ""
        overload = any(d.rpartition(".")[2] == "overload" for d in decorators)
        definition = Definition(
            kind=kind, qualname=qualname, lineno=node.lineno,
            end_lineno=node.end_lineno or node.lineno, start_lineno=start, signature=sig,
            summary=first_paragraph(doc), bases=bases, decorators=decorators,
            anchor=self._anchor(qualname, overload), parent=parent, overload=overload,
            type_refs=[] if kind == "class" else _annotation_names(node),
        )
        self.docstrings[definition.anchor] = doc
        if type(node) is ast.AsyncFunctionDef:
            definition.labels.append("async")
        self.defs.append((definition, node))
        self.s.definitions.append(definition)
        if not overload and not any(d.endswith(_ACCESSORS) for d in decorators):
            self.bound.append((qualname, definition.anchor, branches))
        if type(node) is ast.ClassDef:
            self._scan_body(node.body, qualname + ".", qualname, "class", branches)

    def _add_attribute(self, node: ast.Assign | ast.AnnAssign, branches: tuple = ()) -> None:
        targets = node.targets if type(node) is ast.Assign else [node.target]
        names = []
        for target in targets:
            if type(target) is ast.Name:
                names.append(target.id)
            elif type(target) in (ast.Tuple, ast.List):
                names.extend(e.id for e in target.elts if type(e) is ast.Name)
        if not names:
            return
        if type(node.value) is ast.Name and type(targets[0]) is ast.Name:  # name = function
            self.bound.append((names[0], "=" + node.value.id, branches))
        held = constant_strings(node.value) if node.value is not None else None
        if held is not None and len(names) == 1:
            self.constants.setdefault(names[0], held)
        known = self._attribute_names
        new = [name for name in names if name not in known and name != "__all__"]
        if not new:  # __all__ = [...], a name bound again: none of the texts below is read
            return
        annotation = expr_text(node.annotation) if type(node) is ast.AnnAssign else ""
        value = self._value_text(node.value) if node.value is not None else ""
        alias_of = ""
        if type(node.value) in (ast.Name, ast.Attribute):
            alias_of = dotted(node.value)
            alias_of = "" if "(...)" in alias_of else alias_of
        source = attribute_source(node)
        for name in new:
            self.s.attributes.append(ModuleAttribute(
                name=name, lineno=node.lineno, annotation=annotation, value=value,
                constant=name.isupper() or (name.lstrip("_").isupper()),
                anchor=self._anchor(name), alias_of=alias_of, source=source))
        known.update(new)

    def _value_text(self, value: ast.AST) -> str:
        if self._lines is None:
            self._lines = self.text.split("\n")
        lines = self._lines
        line = lines[value.lineno - 1] if value.lineno - 1 < len(lines) else ""
        if not line.isascii():
            line = line.encode()[value.col_offset:].decode("utf-8", "replace")
        else:
            line = line[value.col_offset:]
        if value.end_lineno != value.lineno and value.end_col_offset is not None:
            line = line.rstrip() + " ..."
        elif value.end_col_offset is not None and line.isascii():
            line = line[: value.end_col_offset - value.col_offset]
        line = line.strip()
        return line if len(line) <= 80 else line[:77] + "..."

    def add_import(self, node: ast.Import | ast.ImportFrom, scope: str) -> None:
        """Record the names one import statement binds, with their absolute module."""
        s = self.s
        if type(node) is ast.Import:
            for alias in node.names:
                s.imports.append(ImportRecord(alias.name, alias.name, "", alias.asname or "",
                                              alias.lineno, scope, statement=node.lineno))
            return
        written = "." * node.level + (node.module or "")
        module = node.module or ""
        if node.level:
            package = s.module.split(".") if s.is_package else s.module.split(".")[:-1]
            base = package[: len(package) - (node.level - 1)] if node.level - 1 else package
            module = ".".join(base + ([node.module] if node.module else []))
        for alias in node.names:  # each name on its own line in ``from x import (a,\n b)``
            s.imports.append(ImportRecord(written, module, alias.name, alias.asname or "",
                                          alias.lineno, scope, statement=node.lineno))


def _function_kind(decorators: list[str]) -> str:
    """Kind of a function defined in a class body, from its decorators."""
    short = {d.rpartition(".")[2] for d in decorators}
    if "property" in short or "cached_property" in short or any(
        d.endswith((".setter", ".getter", ".deleter")) for d in decorators
    ):
        return "property"
    if "staticmethod" in short:
        return "staticmethod"
    if "classmethod" in short:
        return "classmethod"
    return "method"


def _is_main_guard(test: ast.AST) -> bool:
    """Whether an ``if`` test is ``__name__ == "__main__"`` (either order)."""
    if type(test) is not ast.Compare or len(test.ops) != 1 or type(test.ops[0]) is not ast.Eq:
        return False
    sides = {expr_text(test.left), expr_text(test.comparators[0])}
    return sides == {"__name__", "'__main__'"}


def _annotation_names(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """Dotted names used in a function's parameter and return annotations, sorted."""
    args = node.args
    annotations = [a.annotation for a in (*args.posonlyargs, *args.args, *args.kwonlyargs,
                                          args.vararg, args.kwarg) if a is not None]
    annotations.append(node.returns)
    names: set[str] = set()
    stack = [a for a in annotations if a is not None]
    while stack:
        sub = stack.pop()
        t = type(sub)
        # The common forms first, their children taken without ast.iter_child_nodes (the
        # result is a sorted set, so the order of the visit does not matter).
        if t is ast.Name:
            names.add(sub.id)
            continue
        if t is ast.Subscript:
            stack.append(sub.value)
            stack.append(sub.slice)
            continue
        if t is ast.Tuple:
            stack.extend(sub.elts)
            continue
        if t is ast.BinOp:  # X | Y (its operator holds no names)
            stack.append(sub.left)
            stack.append(sub.right)
            continue
        if t is ast.Attribute:
            text = dotted(sub)
            if "(...)" not in text:
                names.add(text)  # the whole chain; its inner parts are not names of their own
                continue
        elif t is ast.Constant:  # ``None``, or a forward reference: "Foo"
            if type(sub.value) is str and sub.value.isidentifier():
                names.add(sub.value)
            continue
        stack.extend(ast.iter_child_nodes(sub))
    return sorted(names)
