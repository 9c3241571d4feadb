"""Stage 1d: enrich the definitions with griffe's static object model.

griffe's :class:`griffe.Visitor` runs over the tree that was already parsed (no second parse)
and contributes what it models better than a plain walk: docstrings, rendered signatures,
labels (``dataclass``, ``property``, ``abstractmethod``...), a static ``__all__`` and the
attributes of classes (including ``self.x`` assignments in ``__init__``).  griffe's log messages
are silenced while it runs (:meth:`griffe.Logger.disable`), so the library prints nothing;
logging is configured nowhere.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import griffe

from indexgen.docstrings import first_paragraph, parse_docstring, role_targets
from indexgen.model import Definition, FileSummary
from indexgen.structure import Structure


@functools.lru_cache(maxsize=1)
def _extensions() -> griffe.Extensions:
    """griffe's built-in extensions (loaded once per process)."""
    return griffe.load_extensions()


# Statements for which griffe looks up the next sibling (an attribute's docstring).
_ATTRIBUTE_NODES = (ast.Assign, ast.AnnAssign) + ((ast.TypeAlias,) if hasattr(ast, "TypeAlias")
                                                  else ())
# Statements whose bodies griffe enters and that may hold such statements.
_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def _next_siblings(tree: ast.Module) -> dict[int, tuple[ast.AST, ast.AST | None]]:
    """``id(statement) -> (parent, next sibling)`` for every attribute-like statement.

    The next sibling is the next child of the parent in :func:`ast.iter_child_nodes` order,
    which is what griffe's ``ast_next`` returns.  One pass over the statements (expressions
    are not entered), so the cost is linear in the size of the file.
    """
    found: dict[int, tuple[ast.AST, ast.AST | None]] = {}
    stack: list[ast.AST] = [tree]
    while stack:
        parent = stack.pop()
        children = None
        for name in _BODIES:
            for child in getattr(parent, name, ()):
                if isinstance(child, _ATTRIBUTE_NODES):
                    if children is None:
                        children = list(ast.iter_child_nodes(parent))
                        index = {id(c): i for i, c in enumerate(children)}
                    i = index[id(child)]
                    found[id(child)] = (parent, children[i + 1] if i + 1 < len(children)
                                        else None)
                elif hasattr(child, "body"):
                    stack.append(child)
    return found


class _TreeVisitor(griffe.Visitor):
    """griffe's static visitor, fed with an already parsed tree instead of parsing again.

    griffe finds the docstring of an attribute by scanning the children of the assignment's
    parent up to the assignment, which is quadratic in the length of a module or class body
    (a 2 MB file of module constants took minutes).  Before griffe visits an assignment, its
    ``parent`` link points at a stand-in of the parent's type that holds only the assignment
    and its next sibling, so the scan takes two steps and griffe's result is unchanged.
    """

    def __init__(self, *args: object, tree: ast.Module, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self._tree = tree
        self._next = _next_siblings(tree)

    def visit(self, node: ast.AST) -> None:
        """Visit a node (see the class docstring for what happens to assignments first)."""
        entry = self._next.get(id(node))
        if entry is not None:
            parent, sibling = entry
            stand_in = type(parent).__new__(type(parent))
            stand_in.body = [node] if sibling is None else [node, sibling]
            node.parent = stand_in
        super().visit(node)

    def get_module(self) -> griffe.Module:
        """Visit the given tree and return griffe's module object."""
        visited = getattr(self, "_visited_nodes", None)
        try:
            self.visit(self._tree)
            return self.current.module
        finally:
            if visited is not None:  # griffe >= 2 links parents; unlink so trees can be freed
                for node in visited:
                    vars(node).pop("parent", None)
                visited.clear()


def griffe_module(summary: FileSummary, tree: ast.Module, text: str) -> griffe.Module | None:
    """griffe's module object for a parsed file, or None when griffe fails on it."""
    name = summary.module.rpartition(".")[2] or "module"
    try:
        with griffe.logger.disable():
            return _TreeVisitor(name, Path(summary.relpath), text, _extensions(),
                                tree=tree).get_module()
    except Exception:  # noqa: BLE001 - griffe failing on odd code must not lose the page
        return None


def enrich(summary: FileSummary, structure: Structure, tree: ast.Module, text: str) -> None:
    """Take docstrings, signatures, labels and ``__all__`` from griffe's static model.

    Args:
        summary: The file's summary (docstring, parsed docstring, exports and the references
            of its docstrings and annotations are set).
        structure: The scanned structure: every definition with its syntax node (labels,
            docstrings, signatures and class attributes are set); a definition griffe does not
            model (a redefinition, a property setter) keeps what the syntax tree gave it.
        tree: The parsed module.
        text: The decoded source.
    """
    module = griffe_module(summary, tree, text)
    parsed: set[str] = set()
    if module is not None:
        parsed = _from_module(summary, structure.defs, module)
    else:
        summary.doc = parse_docstring(summary.docstring) if summary.docstring else []
    references = set(role_targets(summary.docstring))
    for definition, node in structure.defs:
        if definition.kind != "class" and not definition.signature:
            definition.signature = _ast_signature(node, definition.kind)
        raw = structure.docstrings.get(definition.anchor, "")
        if definition.anchor not in parsed and raw:
            definition.doc = parse_docstring(raw)
        references.update(role_targets(raw))
        references.update(definition.type_refs)
    summary.references = sorted(references)


def _from_module(summary: FileSummary, defs: list[tuple[Definition, ast.AST]],
                 module: griffe.Module) -> set[str]:
    """Copy griffe's model into the definitions; return the anchors whose docstring it parsed."""
    parsed = set()
    if module.docstring is not None:
        summary.docstring = module.docstring.value
        summary.doc = parse_docstring(module.docstring)
    try:
        exports = module.exports
    except Exception:  # noqa: BLE001 - griffe may fail on dynamic __all__
        exports = None
    if exports is not None:
        names = [e for e in exports if isinstance(e, str)]
        summary.exports = sorted(set(names)) if len(names) == len(exports) else None
    for definition, _node in defs:
        obj = module
        for part in definition.qualname.split("."):
            members = getattr(obj, "members", None)
            obj = members.get(part) if members else None
            if obj is None or obj.is_alias:
                obj = None
                break
        if obj is None or obj.lineno != definition.start_lineno:
            continue  # redefinition or setter: griffe keeps only one object per name
        definition.labels = sorted(set(definition.labels) | set(obj.labels))
        if obj.docstring is not None:
            definition.summary = first_paragraph(obj.docstring.value)
            definition.doc = parse_docstring(obj.docstring)
            parsed.add(definition.anchor)
        if obj.is_function:
            try:
                definition.signature = obj.signature()
            except Exception:  # noqa: BLE001 - keep the ast fallback
                pass
        elif obj.is_class:
            definition.attributes = _class_attributes(obj)
    return parsed


def _class_attributes(cls: griffe.Class) -> list[tuple[str, int]]:
    """Class and instance attributes of a griffe class (properties excluded), by line."""
    found = []
    for name, member in cls.members.items():
        if member.is_alias or not member.is_attribute or "property" in member.labels:
            continue
        try:
            annotation = member.annotation
            text = f"{name}: {annotation}" if annotation is not None else name
        except Exception:  # noqa: BLE001 - unresolvable annotations
            text = name
        found.append((text, member.lineno or 0))
    return sorted(found, key=lambda item: (item[1], item[0]))


def _ast_signature(node: ast.FunctionDef | ast.AsyncFunctionDef, kind: str) -> str:
    """Signature from the syntax tree, dropping ``self``/``cls`` like griffe does."""
    args = node.args
    if kind in ("method", "property", "classmethod"):
        n_positional = len(args.posonlyargs) + len(args.args) - 1
        args = ast.arguments(
            posonlyargs=args.posonlyargs[1:] if args.posonlyargs else [],
            args=args.args if args.posonlyargs else args.args[1:],
            vararg=args.vararg, kwonlyargs=args.kwonlyargs, kw_defaults=args.kw_defaults,
            kwarg=args.kwarg,
            defaults=args.defaults[-n_positional:] if args.defaults and n_positional > 0 else [],
        )
    try:
        text = f"{node.name}({ast.unparse(args)})"
        if node.returns is not None:
            text += f" -> {ast.unparse(node.returns)}"
    except Exception:  # noqa: BLE001
        text = f"{node.name}(...)"
    return text
