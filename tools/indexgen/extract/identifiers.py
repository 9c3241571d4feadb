"""Stage 1c: one pass over the whole syntax tree for identifiers, calls and pattern findings.

:func:`walk` visits every node once (an explicit stack, child fields cached per node type) and
collects the identifier index (names, attributes, parameters, definitions, imports, keywords,
exception names -- never words from strings or comments), the calls whose last name may matter
to :mod:`indexgen.extract.rules`, the pattern findings (hook registration, grad-mode calls, generators,
``global``/``nonlocal``) and the imports inside function bodies.  :func:`classify_calls` then
turns the calls into findings with the file's import aliases.

:func:`attribute` then gives each call and finding its definition.  A line belongs to the
innermost definition whose ``def``/``class`` line range holds it (calls in nested functions and
lambdas belong to the enclosing definition; decorators, which run in the enclosing scope, lie
before the ``def`` line and so belong there too).  A call is *local* when its first name is
bound inside its function -- a parameter, an assignment, a loop or ``with`` target, a nested
``def`` -- and not declared ``global``: what it calls is a value known only at run time.
``self`` and ``cls`` in methods are not local: the global pass resolves them in the class.
"""

from __future__ import annotations

import ast
from typing import NamedTuple

from indexgen.extract import rules
from indexgen.extract.model import Call, FileSummary, Finding
from indexgen.extract.structure import FUNCS, Structure
from indexgen.extract.syntax import dotted

#: A call worth classifying: (dotted callee as written, line, keyword name -> value text).
Candidate = tuple[str, int, dict[str, str]]


class Walked(NamedTuple):
    """What :func:`walk` returns besides what it writes into the summary.

    Attributes:
        candidates: Calls whose last name may matter to :mod:`indexgen.extract.rules`.
        calls: Every call to a name or attribute chain: (text as written, line).
        bindings: Names bound by assignment, parameters, ``except ... as`` and nested
            ``def``/``class`` (the scope analysis of :mod:`indexgen.extract.identifiers`): (name, line).
        declared_global: Names of ``global``/``nonlocal`` statements: (name, line).
    """

    candidates: list[Candidate]
    calls: list[tuple[str, int]]
    bindings: list[tuple[str, int]]
    declared_global: list[tuple[str, int]]

_SKIP_FIELDS = frozenset(
    {"ctx", "id", "attr", "arg", "name", "names", "op", "ops", "kind", "conversion", "level",
     "module", "is_async", "simple", "tag", "kwd_attrs", "rest", "type_comment", "type_ignores",
     "asname"}
)
_FIELDS: dict[type, tuple[str, ...]] = {type(None): (), ast.Constant: ()}
# Node types the walk records something for, besides names (most nodes are none of these).
_INTERESTING = frozenset(
    {ast.Call, ast.arg, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
     ast.keyword, ast.Import, ast.ImportFrom, ast.Yield, ast.YieldFrom, ast.Global,
     ast.Nonlocal, ast.ExceptHandler}
)


def _fields(t: type) -> tuple[str, ...]:
    """Fields of an AST node type that may hold child nodes (cached)."""
    fields = tuple(f for f in getattr(t, "_fields", ()) if f not in _SKIP_FIELDS)
    _FIELDS[t] = fields
    return fields


def _count(idents: dict[str, list[int]], name: str, line: int) -> None:
    entry = idents.get(name)
    if entry is None:
        idents[name] = [line, 1]
    else:
        entry[1] += 1
        entry[0] = min(entry[0], line)


def _call_text(func: ast.AST) -> str:
    """The callee as written; ``super().name`` keeps ``super()`` so it can be resolved."""
    if (type(func) is ast.Attribute and type(func.value) is ast.Call
            and type(func.value.func) is ast.Name and func.value.func.id == "super"):
        return "super()." + func.attr
    return dotted(func)


def walk(tree: ast.Module, structure: Structure) -> Walked:
    """Fill identifiers, pattern findings, function-level imports and the command-line options.

    Args:
        tree: The parsed module.
        structure: The module's structure, already scanned (its summary is filled in).

    Returns:
        The calls and bindings, for classification and scope analysis.
    """
    s = structure.s
    idents: dict[str, list[int]] = {}
    calls: list[Candidate] = []
    all_calls: list[tuple[str, int]] = []
    bindings: list[tuple[str, int]] = []
    declared: list[tuple[str, int]] = []
    own_defs = {id(node) for _d, node in structure.defs}
    Store = ast.Store
    findings = s.findings
    candidates = rules.CANDIDATE_NAMES
    Name, Attribute, CallNode, arg, keyword = (ast.Name, ast.Attribute, ast.Call, ast.arg,
                                               ast.keyword)
    Constant = ast.Constant
    fields_of = _FIELDS
    stack: list = [tree]
    pop, push, extend = stack.pop, stack.append, stack.extend
    interesting = _INTERESTING
    while stack:
        node = pop()
        t = type(node)
        if t is Name:  # a third of all nodes: a leaf, counted below at once
            name, line = node.id, node.lineno
            if type(node.ctx) is Store:
                bindings.append((name, line))
        elif t is Attribute:  # the next most common: one child, counted below at once
            push(node.value)
            name, line = node.attr, node.end_lineno
        elif t is Constant:
            continue
        else:
            fields = fields_of.get(t)
            if fields is None:
                fields = _fields(t)
            for f in fields:
                v = getattr(node, f)
                if type(v) is list:
                    extend(v)
                elif v is not None:
                    push(v)
            if t not in interesting:
                continue
            if t is CallNode:
                func = node.func
                ft = type(func)
                last = func.attr if ft is Attribute else func.id if ft is Name else None
                if last is None:
                    continue
                all_calls.append((_call_text(func), node.lineno))
                if last == "add_argument":
                    s.cli_options.extend(a.value for a in node.args
                                         if type(a) is ast.Constant and type(a.value) is str)
                if last in candidates:
                    kws = {k.arg: (repr(k.value.value) if type(k.value) is ast.Constant
                                   else dotted(k.value)) for k in node.keywords if k.arg}
                    calls.append((dotted(func), node.lineno, kws))
                if last.startswith("register") and "hook" in last:
                    findings.append(Finding("hook-registration", node.lineno, dotted(func)))
                elif last in ("no_grad", "inference_mode", "enable_grad"):
                    findings.append(Finding("grad-mode", node.lineno, dotted(func)))
                continue
            elif t is arg:
                name, line = node.arg, node.lineno
                bindings.append((name, line))
            elif t in FUNCS or t is ast.ClassDef:
                name, line = node.name, node.lineno
                if id(node) not in own_defs:
                    bindings.append((name, line))
            elif t is keyword:
                if node.arg is None:
                    continue
                name, line = node.arg, node.lineno
            elif t is ast.Import or t is ast.ImportFrom:
                if id(node) not in structure.module_imports:
                    structure.add_import(node, "function")
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
                    declared.append((n, node.lineno))
                findings.append(Finding("global-state", node.lineno, f"{kw} {', '.join(node.names)}"))
                continue
            elif t is ast.ExceptHandler:
                if not node.name:
                    continue
                name, line = node.name, node.lineno
                bindings.append((name, line))
            else:
                continue
        entry = idents.get(name)
        if entry is None:
            idents[name] = [line, 1]
        else:
            entry[1] += 1
            if line < entry[0]:
                entry[0] = line
    s.identifiers = {k: (v[0], v[1]) for k, v in sorted(idents.items())}
    s.imports.sort(key=lambda i: (i.lineno, i.module, i.name))
    return Walked(calls, all_calls, bindings, declared)


def import_aliases(summary: FileSummary) -> dict[str, str]:
    """Bound name -> the absolute module or object it refers to, from the file's imports."""
    aliases: dict[str, str] = {}
    for imp in summary.imports:
        if imp.name:
            aliases[imp.bound_name] = f"{imp.module}.{imp.name}" if imp.module else imp.name
        elif imp.alias:
            aliases[imp.alias] = imp.module
        else:
            head = imp.module.split(".")[0]
            aliases[head] = head
    return aliases


def classify_calls(summary: FileSummary, calls: list[Candidate]) -> None:
    """Add a finding to ``summary`` for every call that :func:`rules.classify_call` matches."""
    aliases = import_aliases(summary)
    for text, line, kws in calls:
        result = rules.classify_call(text, kws, aliases)
        if result:
            summary.findings.append(Finding(result[0], line, text, result[1]))


_EFFECTS = frozenset(rules.PERFORMANCE_CATEGORIES + rules.SECURITY_CATEGORIES)


def _owners(summary: FileSummary) -> list[int]:
    """Index of the innermost definition holding each line (-1 at module level), by line."""
    owner = [-1] * (summary.n_lines + 2)
    defs = summary.definitions
    for i in sorted(range(len(defs)), key=lambda i: (defs[i].lineno, -defs[i].end_lineno)):
        d = defs[i]
        owner[d.lineno: d.end_lineno + 1] = [i] * (d.end_lineno + 1 - d.lineno)
    return owner


def attribute(summary: FileSummary, walked: Walked) -> None:
    """Fill ``summary.calls`` and every definition's ``effects`` from the walk's records."""
    defs = summary.definitions
    owner = _owners(summary)
    top = len(owner) - 1

    def owner_of(line: int) -> int:
        return owner[line] if 0 <= line <= top else -1

    local: dict[int, set[str]] = {}
    in_function = [d.kind != "class" for d in defs]
    for name, line in walked.bindings:  # the most numerous records: owner_of inlined
        i = owner[line] if 0 <= line <= top else -1
        if i >= 0 and in_function[i]:
            names = local.get(i)
            if names is None:
                local[i] = {name}
            else:
                names.add(name)
    for name, line in walked.declared_global:
        local.get(owner_of(line), set()).discard(name)
    calls = []
    for text, line in walked.calls:
        i = owner_of(line)
        if i < 0:
            calls.append(Call("", text, line, text.startswith("(...)")))
            continue
        d = defs[i]
        head = text.split(".", 1)[0]
        is_local = head == "(...)" or (head in local.get(i, ())
                                       and not (head in ("self", "cls") and d.parent))
        calls.append(Call(d.anchor, text, line, is_local))
    calls.sort(key=lambda c: (c.line, c.text))
    summary.calls = calls
    effects: dict[int, set[str]] = {}
    for finding in summary.findings:
        if finding.category in _EFFECTS:
            i = owner_of(finding.lineno)
            if i >= 0:
                effects.setdefault(i, set()).add(finding.category)
    for i, found in effects.items():
        defs[i].effects = sorted(found)
