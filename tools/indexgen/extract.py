"""Stage 1: turn one source file into a :class:`~indexgen.model.FileSummary`.

The file is parsed once with :func:`ast.parse`.  The same tree feeds griffe's static
:class:`griffe.Visitor` (the object model: docstrings, signatures, labels, ``__all__``) and a
single :func:`ast.walk` that collects what griffe does not keep: every definition including
redefinitions, imports with their lines, identifiers and interesting calls.  Nothing is imported
or executed.
"""

from __future__ import annotations

import ast
import hashlib
import io
import logging
import tokenize
from pathlib import Path

import griffe

from indexgen import rules
from indexgen.model import (
    STATUS_EMPTY,
    STATUS_SYNTAX_ERROR,
    STATUS_TOO_LARGE,
    STATUS_UNDECODABLE,
    STATUS_UNREADABLE,
    Definition,
    FileSummary,
    Finding,
    ImportRecord,
    ModuleAttribute,
)

# griffe reports unresolvable annotations through logging; a library must not print.
logging.getLogger("griffe").addHandler(logging.NullHandler())

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_BLOCKS = (ast.If, ast.Try, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)
if hasattr(ast, "TryStar"):
    _BLOCKS = (*_BLOCKS, ast.TryStar)
_EXTENSIONS = None


def decode_source(data: bytes) -> tuple[str, str]:
    """Decode source bytes the way Python does (BOM, then PEP 263 cookie, else UTF-8).

    Args:
        data: Raw file contents.

    Returns:
        ``(text, encoding)`` with universal newlines applied.

    Raises:
        UnicodeDecodeError: The bytes are not valid in the declared encoding.
        SyntaxError: The encoding cookie names an unknown encoding.
    """
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        data.decode("utf-8")  # report the offending byte if that is the problem
        raise
    text = data.decode(encoding)
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text, encoding


def module_name(relpath: str, prefix: str = "") -> str:
    """Dotted module name of a file given its path relative to a source root.

    Args:
        relpath: POSIX path relative to the root (``pkg/sub/name.py``).
        prefix: Dotted name of the root when the root is itself a package (``torch``), else ''.

    Returns:
        ``prefix.pkg.sub.name``, or ``prefix.pkg.sub`` for ``pkg/sub/__init__.py``.
    """
    parts = relpath[: -len(".py")].split("/")
    if parts[-1] == "__init__":
        parts.pop()
    if prefix:
        parts.insert(0, prefix)
    return ".".join(parts)


def extract_file(
    path: Path, root: str, relpath: str, module: str, max_bytes: int
) -> FileSummary:
    """Read and extract one file; never raises for bad content.

    Args:
        path: File to read.
        root: Source root name.
        relpath: POSIX path relative to the root.
        module: Dotted module name (see :func:`module_name`).
        max_bytes: Files larger than this are not analyzed (status ``too-large``).

    Returns:
        The summary; its ``status`` and ``error`` say why analysis stopped early, if it did.
    """
    is_package = relpath.endswith("__init__.py")
    try:
        data = path.read_bytes()
    except OSError as exc:
        return FileSummary(root, relpath, module, is_package, "", 0, STATUS_UNREADABLE,
                           f"cannot be read: {exc.strerror or exc}")
    return extract_source(data, root, relpath, module, max_bytes)


def extract_source(
    data: bytes, root: str, relpath: str, module: str, max_bytes: int
) -> FileSummary:
    """Extract a file from its bytes (see :func:`extract_file`)."""
    is_package = relpath.endswith("__init__.py")
    summary = FileSummary(root, relpath, module, is_package, hashlib.sha256(data).hexdigest(),
                          len(data))
    if not data:
        summary.status, summary.error = STATUS_EMPTY, "empty file (0 bytes)"
        return summary
    if len(data) > max_bytes:
        summary.status = STATUS_TOO_LARGE
        summary.error = f"not analyzed: {len(data):,} bytes exceeds the {max_bytes:,} byte limit"
        summary.n_lines = data.count(b"\n") + (not data.endswith(b"\n"))
        return summary
    try:
        text, summary.encoding = decode_source(data)
    except (UnicodeDecodeError, SyntaxError, LookupError) as exc:
        summary.status = STATUS_UNDECODABLE
        summary.error = f"not decodable as source text: {_decode_error(exc)}"
        summary.n_lines = data.count(b"\n") + (not data.endswith(b"\n"))
        return summary
    summary.n_lines = text.count("\n") + (not text.endswith("\n"))
    try:
        tree = ast.parse(text, filename=relpath)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        summary.status = STATUS_SYNTAX_ERROR
        line = getattr(exc, "lineno", None)
        msg = getattr(exc, "msg", None) or str(exc) or type(exc).__name__
        summary.error = f"does not parse: {msg}" + (f" (line {line})" if line else "")
        return summary
    _Extractor(summary, tree, text).run()
    return summary


def _decode_error(exc: Exception) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return f"invalid {exc.encoding} byte 0x{exc.object[exc.start]:02x} at offset {exc.start}"
    return str(exc)


def _dotted(node: ast.AST) -> str:
    """``a.b.c`` for a Name/Attribute chain; an unnamed receiver shows as ``(...)``."""
    parts = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    parts.append(node.id if type(node) is ast.Name else "(...)")
    return ".".join(reversed(parts))


def _text(node: ast.AST) -> str:
    """Source-like text of a small expression (decorators, bases)."""
    t = type(node)
    if t is ast.Name or t is ast.Attribute:
        return _dotted(node)
    if t is ast.Call:
        return _text(node.func) + "(...)" if (node.args or node.keywords) else _text(node.func) + "()"
    try:
        return ast.unparse(node)
    except Exception:  # noqa: BLE001 - unparse of odd trees must not stop extraction
        return "..."


def _is_type_checking(test: ast.AST) -> bool:
    return _text(test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING", "t.TYPE_CHECKING")


class _Extractor:
    """Fills a FileSummary from a parsed tree (one use per file)."""

    def __init__(self, summary: FileSummary, tree: ast.Module, text: str) -> None:
        self.s = summary
        self.tree = tree
        self.text = text
        self.defs: list[tuple[Definition, ast.AST]] = []
        self.module_imports: set[int] = set()
        self.anchors: set[str] = set()
        self.lines: list[str] | None = None

    def run(self) -> None:
        """Extract everything into the summary (structure, walk, findings, griffe model)."""
        s = self.s
        s.docstring = ast.get_docstring(self.tree) or ""
        self._scan_body(self.tree.body, "", "", "module")
        calls = self._walk()
        self._findings(calls)
        self._enrich_with_griffe()
        s.findings.sort(key=lambda f: (f.lineno, f.category, f.text))

    # -- module/class structure -------------------------------------------------------------
    def _anchor(self, name: str) -> str:
        anchor = base = "sym-" + name
        n = 1
        while anchor in self.anchors:
            n += 1
            anchor = f"{base}-{n}"
        self.anchors.add(anchor)
        return anchor

    def _scan_body(self, body: list[ast.stmt], prefix: str, parent: str, scope: str) -> None:
        for node in body:
            t = type(node)
            if t in _FUNCS or t is ast.ClassDef:
                self._add_def(node, prefix, parent)
            elif t is ast.Import or t is ast.ImportFrom:
                self.module_imports.add(id(node))
                self._add_import(node, scope if not parent else "nested")
            elif t in _BLOCKS:
                inner = "type-checking" if t is ast.If and _is_type_checking(node.test) else scope
                self._scan_body(node.body, prefix, parent, inner)
                self._scan_body(getattr(node, "orelse", []), prefix, parent, scope)
                for handler in getattr(node, "handlers", ()):
                    self._scan_body(handler.body, prefix, parent, scope)
                self._scan_body(getattr(node, "finalbody", []), prefix, parent, scope)
            elif t is ast.Match:
                for case in node.cases:
                    self._scan_body(case.body, prefix, parent, scope)
            elif not parent and (t is ast.Assign or t is ast.AnnAssign):
                self._add_attribute(node)

    def _add_def(self, node: ast.AST, prefix: str, parent: str) -> None:
        qualname = prefix + node.name
        decorators = [_text(d) for d in node.decorator_list]
        start = min([d.lineno for d in node.decorator_list] + [node.lineno])
        if type(node) is ast.ClassDef:
            kind = "class"
            sig = ", ".join([_text(b) for b in node.bases]
                            + [f"{k.arg}={_text(k.value)}" if k.arg else f"**{_text(k.value)}"
                               for k in node.keywords])
            bases = [_text(b) for b in node.bases]
        else:
            kind = "method" if parent else "function"
            short = {d.rpartition(".")[2] for d in decorators}
            if parent:
                if "property" in short or "cached_property" in short or any(
                    d.endswith((".setter", ".getter", ".deleter")) for d in decorators
                ):
                    kind = "property"
                elif "staticmethod" in short:
                    kind = "staticmethod"
                elif "classmethod" in short:
                    kind = "classmethod"
            sig = ""
            bases = []
        doc = ast.get_docstring(node, clean=True) or ""
        definition = Definition(
            kind=kind, qualname=qualname, lineno=node.lineno,
            end_lineno=node.end_lineno or node.lineno, start_lineno=start, signature=sig,
            summary=_first_paragraph(doc), bases=bases, decorators=decorators,
            anchor=self._anchor(qualname), parent=parent,
        )
        if type(node) is ast.AsyncFunctionDef:
            definition.labels.append("async")
        self.defs.append((definition, node))
        self.s.definitions.append(definition)
        if type(node) is ast.ClassDef:
            self._scan_body(node.body, qualname + ".", qualname, "class")

    def _add_attribute(self, node: ast.Assign | ast.AnnAssign) -> None:
        targets = node.targets if type(node) is ast.Assign else [node.target]
        names = []
        for target in targets:
            if type(target) is ast.Name:
                names.append(target.id)
            elif type(target) in (ast.Tuple, ast.List):
                names.extend(e.id for e in target.elts if type(e) is ast.Name)
        if not names:
            return
        annotation = _text(node.annotation) if type(node) is ast.AnnAssign else ""
        value = self._value_text(node.value) if node.value is not None else ""
        known = {a.name for a in self.s.attributes}
        for name in names:
            if name in known or name == "__all__":
                continue
            self.s.attributes.append(ModuleAttribute(
                name=name, lineno=node.lineno, annotation=annotation, value=value,
                constant=name.isupper() or (name.lstrip("_").isupper()),
                anchor=self._anchor(name)))

    def _value_text(self, value: ast.AST) -> str:
        if self.lines is None:
            self.lines = self.text.split("\n")
        lines = self.lines
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

    def _add_import(self, node: ast.Import | ast.ImportFrom, scope: str) -> None:
        s = self.s
        if type(node) is ast.Import:
            for alias in node.names:
                s.imports.append(ImportRecord(alias.name, alias.name, "", alias.asname or "",
                                              node.lineno, scope))
            return
        written = "." * node.level + (node.module or "")
        module = node.module or ""
        if node.level:
            package = s.module.split(".") if s.is_package else s.module.split(".")[:-1]
            base = package[: len(package) - (node.level - 1)] if node.level - 1 else package
            module = ".".join(base + ([node.module] if node.module else []))
        for alias in node.names:
            s.imports.append(ImportRecord(written, module, alias.name, alias.asname or "",
                                          node.lineno, scope))

    # -- whole-tree walk ------------------------------------------------------------------------
    def _walk(self) -> list[tuple[str, int, dict[str, str]]]:
        idents: dict[str, list[int]] = {}
        calls = []
        findings = self.s.findings
        candidates = rules.CANDIDATE_NAMES
        Name, Attribute, Call, arg, keyword = ast.Name, ast.Attribute, ast.Call, ast.arg, ast.keyword
        fields_of = _FIELDS
        stack: list = [self.tree]
        pop, push, extend = stack.pop, stack.append, stack.extend
        while stack:
            node = pop()
            t = type(node)
            fields = fields_of.get(t)
            if fields is None:
                fields = _fields(t)
            for f in fields:
                v = getattr(node, f)
                if type(v) is list:
                    extend(v)
                elif v is not None:
                    push(v)
            if t is Name:
                name, line = node.id, node.lineno
            elif t is Attribute:
                name, line = node.attr, node.end_lineno
            elif t is Call:
                func = node.func
                ft = type(func)
                last = func.attr if ft is Attribute else func.id if ft is Name else None
                if last is None:
                    continue
                if last in candidates:
                    kws = {k.arg: (repr(k.value.value) if type(k.value) is ast.Constant
                                   else _dotted(k.value)) for k in node.keywords if k.arg}
                    calls.append((_dotted(func), node.lineno, kws))
                if last.startswith("register") and "hook" in last:
                    findings.append(Finding("hook-registration", node.lineno, _dotted(func)))
                elif last in ("no_grad", "inference_mode", "enable_grad"):
                    findings.append(Finding("grad-mode", node.lineno, _dotted(func)))
                continue
            elif t is arg:
                name, line = node.arg, node.lineno
            elif t in _FUNCS or t is ast.ClassDef:
                name, line = node.name, node.lineno
            elif t is keyword:
                if node.arg is None:
                    continue
                name, line = node.arg, node.lineno
            elif t is ast.Import or t is ast.ImportFrom:
                if id(node) not in self.module_imports:
                    self._add_import(node, "function")
                for alias in node.names:
                    n = alias.asname or alias.name.split(".")[0]
                    if n != "*":
                        _count(idents, n, node.lineno)
                continue
            elif t is ast.Yield or t is ast.YieldFrom:
                findings.append(Finding("generator", node.lineno, "yield"))
                continue
            elif t is ast.Global or t is ast.Nonlocal:
                kw = "global" if t is ast.Global else "nonlocal"
                for n in node.names:
                    _count(idents, n, node.lineno)
                findings.append(Finding("global-state", node.lineno,
                                        f"{kw} {', '.join(node.names)}"))
                continue
            elif t is ast.ExceptHandler:
                if not node.name:
                    continue
                name, line = node.name, node.lineno
            else:
                continue
            entry = idents.get(name)
            if entry is None:
                idents[name] = [line, 1]
            else:
                entry[1] += 1
                if line < entry[0]:
                    entry[0] = line
        self.s.identifiers = {k: (v[0], v[1]) for k, v in sorted(idents.items())}
        self.s.imports.sort(key=lambda i: (i.lineno, i.module, i.name))
        return calls

    def _findings(self, calls: list[tuple[str, int, dict[str, str]]]) -> None:
        aliases: dict[str, str] = {}
        for imp in self.s.imports:
            if imp.name:
                aliases[imp.bound_name] = f"{imp.module}.{imp.name}" if imp.module else imp.name
            elif imp.alias:
                aliases[imp.alias] = imp.module
            else:
                head = imp.module.split(".")[0]
                aliases[head] = head
        for text, line, kws in calls:
            result = rules.classify_call(text, kws, aliases)
            if result:
                self.s.findings.append(Finding(result[0], line, text, result[1]))

    # -- griffe object model ----------------------------------------------------------------
    def _enrich_with_griffe(self) -> None:
        """Take docstrings, signatures, labels and ``__all__`` from griffe's static model."""
        module = _griffe_module(self.s, self.tree, self.text)
        if module is None:
            return
        if module.docstring is not None:
            self.s.docstring = module.docstring.value
        try:
            exports = module.exports
        except Exception:  # noqa: BLE001 - griffe may fail on dynamic __all__
            exports = None
        if exports is not None:
            names = [e for e in exports if isinstance(e, str)]
            self.s.exports = sorted(set(names)) if len(names) == len(exports) else None
        for definition, _node in self.defs:
            obj = module
            for part in definition.qualname.split("."):
                members = getattr(obj, "members", None)
                obj = members.get(part) if members else None
                if obj is None or obj.is_alias:
                    obj = None
                    break
            if obj is None or obj.lineno != definition.start_lineno:
                continue  # redefinition or setter: griffe keeps only one object per name
            labels = set(definition.labels) | set(obj.labels)
            definition.labels = sorted(labels)
            if obj.docstring is not None:
                definition.summary = _first_paragraph(obj.docstring.value)
            if obj.is_function:
                try:
                    definition.signature = obj.signature()
                except Exception:  # noqa: BLE001 - keep the ast fallback below
                    pass
            elif obj.is_class:
                definition.attributes = _class_attributes(obj)
        for definition, node in self.defs:
            if definition.kind != "class" and not definition.signature:
                definition.signature = _ast_signature(node, definition.kind)


_SKIP_FIELDS = frozenset(
    {"ctx", "id", "attr", "arg", "name", "names", "op", "ops", "kind", "conversion", "level",
     "module", "is_async", "simple", "tag", "kwd_attrs", "rest", "type_comment", "type_ignores",
     "asname"}
)
_FIELDS: dict[type, tuple[str, ...]] = {type(None): (), ast.Constant: ()}


def _fields(t: type) -> tuple[str, ...]:
    """Fields of an AST node type that may hold child nodes (cached)."""
    fields = tuple(f for f in getattr(t, "_fields", ()) if f not in _SKIP_FIELDS)
    _FIELDS[t] = fields
    return fields


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


def _count(idents: dict[str, list[int]], name: str, line: int) -> None:
    entry = idents.get(name)
    if entry is None:
        idents[name] = [line, 1]
    else:
        entry[1] += 1
        entry[0] = min(entry[0], line)


def _first_paragraph(doc: str) -> str:
    return " ".join(doc.strip().split("\n\n", 1)[0].split())


def _ast_signature(node: ast.FunctionDef | ast.AsyncFunctionDef, kind: str) -> str:
    """Signature from the syntax tree, dropping ``self``/``cls`` like griffe does."""
    args = node.args
    if kind in ("method", "property", "classmethod"):
        args = ast.arguments(
            posonlyargs=args.posonlyargs[1:] if args.posonlyargs else [],
            args=args.args if args.posonlyargs else args.args[1:],
            vararg=args.vararg, kwonlyargs=args.kwonlyargs, kw_defaults=args.kw_defaults,
            kwarg=args.kwarg,
            defaults=args.defaults[-(len(args.posonlyargs) + len(args.args) - 1):]
            if args.defaults and (len(args.posonlyargs) + len(args.args) - 1) > 0 else [],
        )
    try:
        text = f"{node.name}({ast.unparse(args)})"
        if node.returns is not None:
            text += f" -> {ast.unparse(node.returns)}"
    except Exception:  # noqa: BLE001
        text = f"{node.name}(...)"
    return text


class _TreeVisitor(griffe.Visitor):
    """griffe's static visitor, fed with an already parsed tree instead of parsing again."""

    def __init__(self, *args: object, tree: ast.Module, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self._tree = tree

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


def _griffe_module(summary: FileSummary, tree: ast.Module, text: str) -> griffe.Module | None:
    global _EXTENSIONS
    if _EXTENSIONS is None:
        _EXTENSIONS = griffe.load_extensions()
    name = summary.module.rpartition(".")[2] or "module"
    try:
        return _TreeVisitor(name, Path(summary.relpath), text, _EXTENSIONS, tree=tree).get_module()
    except Exception:  # noqa: BLE001 - griffe failing on odd code must not lose the page
        return None

