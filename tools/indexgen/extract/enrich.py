"""Stage 1d: what a reader wants to know of each definition beyond its place.

From the syntax tree: signatures (``name(a: int = 1) -> T``, ``self``/``cls`` dropped for
methods), labels from decorators resolved through the file's imports (``dataclass``,
``abstractmethod``, ``cached``, ``property``...), a static ``__all__``, and the attributes of
classes (assigned in the class body or as ``self.x`` in ``__init__``).  Docstrings are parsed
with griffe's own parsers (:mod:`indexgen.extract.docstrings`); parameter entries without a type take
the annotation and default from the signature, as griffe does when it knows the function.

griffe's static visitor is not used: it modelled the same facts at about a quarter of the
whole build's cost (and, before a fix, quadratically in long module bodies).
"""

from __future__ import annotations

import ast
from typing import NamedTuple

from indexgen.extract.alternatives import checking_only
from indexgen.extract.docstrings import DocSection, parse_docstring, role_targets
from indexgen.extract.getattr_names import refine_getattr_names
from indexgen.extract.model import Definition, FileSummary
from indexgen.extract.nodes import HOLDERS
from indexgen.extract.property_calls import add_called_properties
from indexgen.extract.rules import import_aliases
from indexgen.extract.served import served_names
from indexgen.extract.structure import FUNCS, Structure
from indexgen.extract.syntax import dotted, expr_text, unparse

# Decorators (by their full name once imports are resolved) and the labels they give.
DECORATOR_LABELS = {
    "property": ("property",), "staticmethod": ("staticmethod",),
    "classmethod": ("classmethod",), "abc.abstractmethod": ("abstractmethod",),
    "functools.cache": ("cached",), "functools.lru_cache": ("cached",),
    "functools.cached_property": ("cached", "property"),
    "cached_property.cached_property": ("cached", "property"),
    "dataclasses.dataclass": ("dataclass",),
}
_ALL_EXTENDERS = ("extend", "append")


class Signature(NamedTuple):
    """What the signature and the docstring's parameter types read of a function's node (kept
    instead of the node, whose body the tree would keep alive)."""

    name: str
    args: ast.arguments
    returns: ast.AST | None


#: Docstrings and signatures left for later (:func:`finish`): (definition, its
#: :class:`Signature` or None for a class, its raw docstring); None for the module docstring.
Later = list[tuple[Definition, Signature | None, str] | None]


def enrich(summary: FileSummary, structure: Structure, tree: ast.Module, text: str,
           later: Later | None = None) -> None:
    """Fill signatures, labels, ``__all__``, class attributes, parsed docstrings and
    cross-reference targets.

    Args:
        summary: The file's summary.
        structure: The scanned structure: every definition with its syntax node.
        tree: The parsed module.
        text: The decoded source (unused; kept for the stage's uniform signature).
        later: Where to leave the signatures and parsed docstrings for :func:`finish`, or None
            to make them now.  Only a page needs them (the global pass reads neither): a
            build's worker makes them while it waits for the global pass.
    """
    aliases = import_aliases(summary)
    if summary.docstring:
        if later is None:
            summary.doc = parse_docstring(summary.docstring)
        else:
            later.append(None)
    # a file whose identifiers (the walk's) hold no __all__ (no TYPE_CHECKING) has none to
    # read: the summary's defaults stand (most files: their statements are not looked at)
    if "__all__" in summary.identifiers:
        summary.exports, summary.all_computed = _exports(tree)
    summary.served = served_names(tree, summary.exports)
    if "TYPE_CHECKING" in summary.identifiers:
        summary.type_checking = checking_only(tree.body, summary.checking_spans)
    references = set(role_targets(summary.docstring))
    for definition, node in structure.defs:
        definition.labels = sorted(set(definition.labels) | _labels(definition, aliases))
        raw = structure.docstrings.get(definition.anchor, "")
        if definition.kind == "class":
            definition.attributes = _class_attributes(node)
            signature = None
        else:
            signature = Signature(node.name, node.args, node.returns)
        if raw:  # its summary (first paragraph) is the structure's already
            references.update(role_targets(raw))
        if later is None:
            _finish_one(definition, signature, raw)
        elif signature is not None or raw:
            later.append((definition, signature, raw))
        references.update(definition.type_refs)
    if "getattr" in summary.identifiers:  # getattr(self, name.lower()), name a local
        refine_getattr_names(structure)
    if "property" in summary.identifiers:  # name = property(getter, ...) in a class body
        for prop, fget, raw in add_called_properties(structure):
            prop.signature = _ast_signature(Signature(prop.name, fget.args, fget.returns),
                                            prop.kind)
            if later is None:
                _finish_one(prop, None, raw)
            elif raw:
                later.append((prop, None, raw))
    summary.references = sorted(references)


def finish(summary: FileSummary, later: Later) -> None:
    """Make what :func:`enrich` left in ``later``: the summary is then as if nothing had
    been left."""
    for item in later:
        if item is None:
            summary.doc = parse_docstring(summary.docstring)
        else:
            _finish_one(*item)
    later.clear()


def _finish_one(definition: Definition, signature: Signature | None, raw: str) -> None:
    if signature is not None:
        definition.signature = _ast_signature(signature, definition.kind)
    if raw:
        definition.doc = parse_docstring(raw)
        if signature is not None:
            _types_from_signature(definition.doc, signature)


def _labels(definition: Definition, aliases: dict[str, str]) -> set[str]:
    labels: set[str] = set()
    for decorator in definition.decorators:
        name = decorator.split("(", 1)[0]
        head, _, rest = name.partition(".")
        full = aliases.get(head, head) + ("." + rest if rest else "")
        labels.update(DECORATOR_LABELS.get(full, ()))
    return labels


def _exports(tree: ast.Module) -> tuple[list[str] | None, bool]:
    """Names of a static ``__all__`` (literal lists, ``+=``, ``.extend``/``.append``), sorted,
    or None when there is none or it is computed; and whether it is computed."""
    names: list[str] | None = None
    stack = list(reversed(tree.body))
    while stack:
        node = stack.pop()
        t = type(node)
        if t in (ast.If, ast.Try, ast.With):
            for block in (node.body, getattr(node, "orelse", []),
                          *(h.body for h in getattr(node, "handlers", ())),
                          getattr(node, "finalbody", [])):
                stack.extend(reversed(block))
            continue
        if t in (ast.For, ast.While) and any(_all_statement(n)[0] for n in ast.walk(node)):
            return None, True  # filled in a loop (torch._numpy._funcs): computed
        target, value, extend = _all_statement(node)
        if target is None:
            continue
        found = _strings(value)
        if found is None:
            return None, True  # computed: not static
        names = (names or []) + found if extend else found
    return (sorted(set(names)) if names is not None else None), False


def _all_statement(node: ast.AST) -> tuple[str | None, ast.AST | None, bool]:
    """``("__all__", value, extends)`` when ``node`` sets or extends ``__all__``."""
    t = type(node)
    if t is ast.Assign and any(type(x) is ast.Name and x.id == "__all__" for x in node.targets):
        return "__all__", node.value, False
    if t is ast.AnnAssign and type(node.target) is ast.Name and node.target.id == "__all__":
        return "__all__", node.value, False
    if t is ast.AugAssign and type(node.target) is ast.Name and node.target.id == "__all__":
        return "__all__", node.value, True
    if t is ast.Expr and type(node.value) is ast.Call and dotted(node.value.func) in (
            "__all__.extend", "__all__.append"):
        args = node.value.args
        value = args[0] if len(args) == 1 else None
        if dotted(node.value.func) == "__all__.append" and value is not None:
            value = ast.List(elts=[value])
        return "__all__", value, True
    return None, None, False


def _strings(node: ast.AST | None) -> list[str] | None:
    if type(node) in (ast.List, ast.Tuple) and all(
            type(e) is ast.Constant and type(e.value) is str for e in node.elts):
        return [e.value for e in node.elts]
    return None


def _class_attributes(cls: ast.ClassDef) -> list[tuple[str, int]]:
    """``(name: annotation, line)`` of the names assigned in a class body or as ``self.name``
    in its ``__init__``, at their first assignment, in line order; names that are also
    methods or properties of the class are left out."""  # noqa: D401
    methods = {n.name for n in cls.body if type(n) in FUNCS}
    found: dict[str, tuple[str, int]] = {}

    def add(name: str, annotation: ast.AST | None, line: int) -> None:
        if name in methods:
            return
        text = _annotation_text(annotation)
        old = found.get(name)
        if old is None:
            found[name] = (text, line)
        elif not old[0] and text:
            found[name] = (text, old[1])

    for stmt in _statements(cls.body):
        for name, annotation in _targets(stmt, None):
            add(name, annotation, stmt.lineno)
        if type(stmt) in FUNCS and stmt.name == "__init__" and stmt.args.args:
            me = stmt.args.args[0].arg
            for inner in _statements(stmt.body):
                for name, annotation in _targets(inner, me):
                    add(name, annotation, inner.lineno)
    rows = [(f"{name}: {text}" if text else name, line) for name, (text, line) in found.items()]
    return sorted(rows, key=lambda item: (item[1], item[0]))


def _statements(body: list[ast.stmt]):
    """The statements of a body and of the blocks inside it (not of nested functions)."""
    stack = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        if type(node) in FUNCS or type(node) is ast.ClassDef or type(node) not in HOLDERS:
            continue  # (a simple statement, most: no block to read)
        for name in ("body", "orelse", "finalbody"):
            stack.extend(reversed(getattr(node, name, None) or []))
        for handler in getattr(node, "handlers", ()):
            stack.extend(reversed(handler.body))


def _targets(stmt: ast.AST, me: str | None):
    """(name, annotation) assigned by ``stmt``: plain names, or ``me.name`` when ``me`` is
    the instance parameter of ``__init__``."""
    t = type(stmt)
    if t is ast.AnnAssign:
        pairs = [(stmt.target, stmt.annotation)]
    elif t is ast.Assign:
        pairs = [(target, None) for target in stmt.targets]
    else:
        return
    for target, annotation in pairs:
        for node in (target.elts if type(target) in (ast.Tuple, ast.List) else [target]):
            if me is None and type(node) is ast.Name:
                yield node.id, annotation
            elif (me is not None and type(node) is ast.Attribute and type(node.value) is ast.Name
                  and node.value.id == me):
                yield node.attr, annotation


def _annotation_text(annotation: ast.AST | None) -> str:
    if annotation is None:
        return ""
    if type(annotation) is ast.Constant and type(annotation.value) is str:
        return annotation.value  # a forward reference: "Foo"
    return expr_text(annotation) if type(annotation) in (ast.Name, ast.Attribute) else \
        _unparse(annotation)


def _unparse(node: ast.AST) -> str:
    try:
        return unparse(node)
    except Exception:  # noqa: BLE001 - unparse of odd trees must not stop extraction
        return "..."


def _types_from_signature(doc: list[DocSection], node: Signature) -> None:
    """Give parameter entries without a type the annotation and default of the signature,
    and a single untyped return entry the return annotation."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    defaults = dict(zip([a.arg for a in positional[len(positional) - len(args.defaults):]],
                        args.defaults))
    defaults.update((a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d)
    annotations = {a.arg: a.annotation for a in (*positional, *args.kwonlyargs,
                                                 args.vararg, args.kwarg) if a is not None}
    for section in doc:
        if section.kind in ("parameters", "other parameters"):
            for item in section.items:
                name = item.name.lstrip("*")
                if not item.annotation and annotations.get(name) is not None:
                    item.annotation = _annotation_text(annotations[name])
                if not item.default and name in defaults:
                    item.default = _unparse(defaults[name])
        elif section.kind == "returns" and len(section.items) == 1 and node.returns is not None:
            if not section.items[0].annotation:
                section.items[0].annotation = _annotation_text(node.returns)


def _ast_signature(node: Signature, kind: str) -> str:
    """``name(a: int = 1, *, b=2) -> T`` from the syntax tree, in PEP 8 spacing, without the
    ``self``/``cls`` of methods."""
    args = node.args
    skip = 1 if kind in ("method", "property", "classmethod") or node.name == "__new__" else 0
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    parts = []
    for i, (arg, default) in enumerate(zip(positional, defaults)):
        if i >= skip:
            parts.append(_param(arg, default))
        if args.posonlyargs and i == len(args.posonlyargs) - 1 and i >= skip:
            parts.append("/")
    if args.vararg is not None:
        parts.append("*" + _param(args.vararg, None))
    elif args.kwonlyargs:
        parts.append("*")
    parts += [_param(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    if args.kwarg is not None:
        parts.append("**" + _param(args.kwarg, None))
    text = f"{node.name}({', '.join(parts)})"
    if node.returns is not None:
        text += f" -> {_annotation_text(node.returns)}"
    return text


def _param(arg: ast.arg, default: ast.AST | None) -> str:
    text = arg.arg
    if arg.annotation is not None:
        text += f": {_annotation_text(arg.annotation)}"
    if default is not None:
        text += (" = " if arg.annotation is not None else "=") + _unparse(default)
    return text
