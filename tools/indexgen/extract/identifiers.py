"""Stage 1c: one pass over the whole syntax tree for identifiers, calls and pattern findings.

:func:`walk` visits every node once and collects the identifier index (names, attributes,
parameters, definitions, imports, keywords, exception names -- never words from strings or
comments), the calls whose last name may matter to :mod:`indexgen.extract.rules`, the pattern
findings (hook registration, grad-mode calls, generators, ``global``) and the
imports inside function bodies.  :func:`indexgen.extract.rules.classify_calls` then turns the
calls into findings with the file's import aliases.

The walk is the costliest step of extraction after :func:`ast.parse` (millions of nodes in
torch), so it is written for speed: an explicit stack; a node's child fields read by one
:func:`operator.attrgetter` call per node type; the most common nodes (names, attributes,
constants, calls, assignments, parameters, subscripts, tuples) taken in branches of their own,
before the generic reading of fields; a call's keyword names counted where the call is found
instead of their nodes being pushed and visited.  The order in which nodes that record
something are visited is kept (binding nodes are read in that order later).  That is why this
module is longer than the house's ~300 lines: the walk is one function with its common cases
written out, and splitting it into helpers would add a call per node.

The calls' texts, the functions they are handed and the definition each belongs to are
:mod:`indexgen.extract.calls`'s.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from operator import attrgetter
from typing import Any, NamedTuple

from indexgen.extract import rules
from indexgen.extract.calls import call_line, call_text, imported_names
from indexgen.extract.handing import LOCAL_ONLY, counted, decorated, handed
from indexgen.extract.instance_tests import COMPREHENSIONS
from indexgen.extract.model import Finding
from indexgen.extract.rules import Candidate
from indexgen.extract.shadows import SELF_NAMES
from indexgen.extract.sources import HANDS_ELEMENTS, lambda_pairs, lambda_tests
from indexgen.extract.structure import FUNCS, Structure
from indexgen.extract.syntax import dotted, path, strings, tested_name

#: Nodes that bind names to values whose type the global pass may infer.
BINDERS = (ast.Assign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.comprehension, ast.NamedExpr,
           ast.withitem, ast.Return, ast.If, ast.Assert, ast.While, ast.Match, *COMPREHENSIONS)
#: A string that may name code to run: ``pkg.mod:func``, ``pkg.mod:``, a (dotted) name.
LITERAL = re.compile(r"[A-Za-z_][\w.]*(?::(?:[A-Za-z_][\w.]*)?)?\Z")
#: Methods that put their (last) argument into the container they are called on.
APPENDS = frozenset({"append", "appendleft", "add", "insert", "setdefault"})
#: The last names of the calls the walk looks at more closely (and ``register*hook*``).
_SPECIAL = frozenset({"add_argument", "isinstance", "import_module", "__import__", "no_grad",
                      "inference_mode", "enable_grad", *APPENDS, *rules.CANDIDATE_NAMES,
                      *HANDS_ELEMENTS})
_IMPORTS = ("import_module", "__import__")


class Walked(NamedTuple):
    """What :func:`walk` returns besides what it writes into the summary.

    Attributes:
        candidates: Calls whose last name may matter to :mod:`indexgen.extract.rules`.
        calls: Every call to a name or attribute chain: (text as written, line).
        bindings: Names bound by assignment, parameters, ``except ... as`` and nested
            ``def``/``class`` (the scope analysis of :mod:`indexgen.extract.identifiers`): (name, line).
        declared_global: Names of ``global`` statements: (name, line).  Not those of
            ``nonlocal`` ones: such a name is bound in an enclosing function, whose calls
            (those of its nested functions too) and names are one definition's.
        binders: The nodes that bind names to values (assignments, loops, comprehensions,
            ``with ... as``), for :mod:`indexgen.extract.bindings`.
        path_tests: Lines of the ``isinstance`` calls that test an attribute
            (``isinstance(self.data, A)``), the only places where
            :mod:`indexgen.extract.attribute_narrowing` may find a narrowing (most files
            have none, and it then reads no statement).
        assigns_self: Whether the file assigns a name ``self`` or ``cls`` anywhere: without
            one :func:`~indexgen.extract.shadows.rebound` finds nothing (82 of torch's
            2,284 files have one).
    """

    candidates: list[Candidate]
    calls: list[tuple[str, int]]
    bindings: list[tuple[str, int]]
    declared_global: list[tuple[str, int]]
    binders: list[ast.AST]
    path_tests: list[int]
    assigns_self: bool


_SKIP_FIELDS = frozenset(
    {"ctx", "id", "attr", "arg", "name", "names", "op", "ops", "kind", "conversion", "level",
     "module", "is_async", "simple", "tag", "kwd_attrs", "rest", "type_comment", "type_ignores",
     "asname"}
)
#: Node type -> (a reader of its fields that may hold child nodes, whether it reads more than
#: one): one :func:`operator.attrgetter` call gives them all, in field order.
_FIELDS: dict[type, tuple[Callable[[ast.AST], Any] | None, bool]] = {type(None): (None, False)}
# Node types the walk records something for, besides names (most nodes are none of these).
_INTERESTING = frozenset(
    {ast.Call, ast.arg, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
     ast.keyword, ast.Import, ast.ImportFrom, ast.Yield, ast.YieldFrom, ast.Global,
     ast.Nonlocal, ast.ExceptHandler, ast.Lambda, *BINDERS}
)
_BINDER_TYPES = frozenset(BINDERS)


def _fields(t: type) -> tuple[Callable[[ast.AST], Any] | None, bool]:
    """The reader of the fields of an AST node type that may hold child nodes (cached)."""
    fields = tuple(f for f in getattr(t, "_fields", ()) if f not in _SKIP_FIELDS)
    return _FIELDS.setdefault(t, (attrgetter(*fields) if fields else None, len(fields) > 1))


def _count(idents: dict[str, list[int]], name: str, line: int) -> None:
    entry = idents.get(name)
    if entry is None:
        idents[name] = [line, 1]
    else:
        entry[1] += 1
        entry[0] = min(entry[0], line)


def _special(structure: Structure, node: ast.Call, last: str, calls: list[Candidate],
             literals: list[tuple[str, int]] | None, line: int) -> None:
    """Record what a call whose last name (what an import's other name stands for) is one
    of :data:`_SPECIAL` or ``register*hook*`` gives: a candidate for the rules, a name a
    test imports, a pattern finding; all at the call's ``line`` (:func:`call_line`)."""
    s, func, args = structure.s, node.func, node.args
    if last in rules.CANDIDATE_NAMES:
        kws = {k.arg: (repr(k.value.value) if type(k.value) is ast.Constant
                       else dotted(k.value)) for k in node.keywords if k.arg}
        if last in _IMPORTS and args and len(strings(args[0], structure.constants)) == 1:
            kws[rules.FIXED_MODULE] = ""
        calls.append((dotted(func), line, kws))
    if literals is not None and last in _IMPORTS and args:
        literals += [("import:" + m, line) for m in strings(args[0], structure.constants)]
    if last.startswith("register") and "hook" in last:
        s.findings.append(Finding("hook-registration", line, dotted(func)))
    elif last in ("no_grad", "inference_mode", "enable_grad"):
        s.findings.append(Finding("grad-mode", line, dotted(func)))


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
    binders: list[ast.AST] = []
    bare: list[ast.Call] = []  # calls of a plain name that is not a special one
    path_tests: list[int] = []  # lines of isinstance(self.data, A)
    assigns_self = False  # cls = ...
    own_tests: set[int] = set()  # isinstance calls on a lambda's own parameter (no binder)
    nested: list[tuple[int, int]] = []  # lines of functions and classes nested in a function
    options: list[tuple[int, int, int, str]] = []  # add_argument's: where, which, option
    literals = s.literals if not s.module else None  # a test file: what it names to run
    own_defs = {id(node): d.qualname for d, node in structure.defs}
    methods = {d.qualname.rpartition(".")[2] for d, _node in structure.defs}
    imported = imported_names(s.imports)  # the module's own, all scanned: call_line's
    Store = ast.Store
    findings = s.findings
    special = _SPECIAL
    Name, Attribute, CallNode, arg, keyword = (ast.Name, ast.Attribute, ast.Call, ast.arg,
                                               ast.keyword)
    Constant, Subscript, Tuple = ast.Constant, ast.Subscript, ast.Tuple
    fields_of = _FIELDS
    stack: list = [tree]
    pop, push, extend = stack.pop, stack.append, stack.extend
    interesting = _INTERESTING
    binder_types = _BINDER_TYPES
    while stack:
        node = pop()
        t = type(node)
        if t is Name:  # a third of all nodes: a leaf, counted below at once
            name, line = node.id, node.lineno
            if type(node.ctx) is Store:
                bindings.append((name, line))
                if name in SELF_NAMES:
                    assigns_self = True
        elif t is Attribute:  # the next most common: one child, counted below at once
            value = node.value
            if type(value) is Name:  # self.x: the name (read, never bound) counted here,
                entry = idents.get(value.id)  # without a visit of its own
                if entry is None:
                    idents[value.id] = [value.lineno, 1]
                else:
                    entry[1] += 1
                    if value.lineno < entry[0]:
                        entry[0] = value.lineno
            else:
                push(value)
            name, line = node.attr, node.end_lineno
            if literals is not None and type(value) is Name and type(node.ctx) is not Store:
                all_calls.append((f"^{value.id}.{name}", node.lineno))  # a test reads it
        elif t is Constant:
            if literals is not None and type(node.value) is str and LITERAL.match(node.value):
                literals.append((node.value, node.lineno))
            continue
        elif t is CallNode:  # the most common node with work of its own: taken at once
            func = node.func
            args = node.args
            keywords = node.keywords
            ft = type(func)
            line = node.lineno
            if func.end_lineno != line:  # a callee over lines: the line Python reports
                line = call_line(node, imported)
            push(func)
            extend(args)
            for k in keywords:  # keyword nodes are not pushed: their names counted here
                push(k.value)
                if k.arg is not None:
                    _count(idents, k.arg, k.lineno)
            if ft is Name:
                last = text = func.id
            elif ft is Attribute:
                last = func.attr
                value = func.value
                # call_text's common case, ``a.f(...)``, without its calls
                text = f"{value.id}.{last}" if type(value) is Name else call_text(func)
            else:  # table[key](...), make()(...), type(self)(...): what the value is
                found = path(func)
                if found:
                    all_calls.append((found, line))
                    kept = len(all_calls)
                    if args or keywords:
                        handed(node, found, None, all_calls, methods, line)
                    if len(all_calls) == kept:  # none a name: how many, for the arity
                        counted(node, found, all_calls, line)
                else:  # (lambda: x)(), (a or b)(): a call all the same, counted as such
                    all_calls.append(("(...)", line))
                continue
            all_calls.append((text, line))
            kept = len(all_calls)
            if args or keywords:
                handed(node, text, last, all_calls, methods, line)
            if ft is Name and len(all_calls) == kept:  # f(): its count, if f is local
                counted(node, text, all_calls, line, LOCAL_ONLY)
            if last not in special and not last.startswith("register"):
                if ft is Name:
                    bare.append(node)  # sh(...) may be an import's other name: seen below
                continue  # most calls: nothing more to see
            if last == "add_argument":  # visited last to first: sorted below
                options += [(node.lineno, node.col_offset, i, a.value) for i, a in enumerate(args)
                            if type(a) is ast.Constant and type(a.value) is str]
            _special(structure, node, last, calls, literals, line)
            if last == "isinstance" and ft is Name and args and type(args[0]) is Attribute:
                path_tests.append(line)
            if ((last == "isinstance" and tested_name(node) and id(node) not in own_tests)
                    or (last in APPENDS and ft is Attribute)
                    or (last in HANDS_ELEMENTS and lambda_pairs(node))):
                binders.append(node)  # the name may be of that type; xs holds x; f(x in xs)
            continue
        elif t is ast.Assign:  # the most common statement: taken at once
            extend(node.targets)
            push(node.value)
            binders.append(node)
            continue
        elif t is arg:  # a parameter: bound, counted below
            if node.annotation is not None:
                push(node.annotation)
            name, line = node.arg, node.lineno
            bindings.append((name, line))
        elif t is Subscript:
            push(node.value)
            push(node.slice)
            continue
        elif t is Tuple:
            extend(node.elts)
            continue
        else:
            fields = fields_of.get(t)
            if fields is None:
                fields = _fields(t)
            read, many = fields
            if many:
                for v in read(node):
                    if type(v) is list:
                        extend(v)
                    elif v is not None:
                        push(v)
            elif read is not None:
                v = read(node)
                if type(v) is list:
                    extend(v)
                elif v is not None:
                    push(v)
            if t not in interesting:
                continue
            if t in binder_types:  # the next most common (assignments, returns, loops...)
                binders.append(node)
                continue
            elif t in FUNCS or t is ast.ClassDef:
                name, line = node.name, node.lineno
                if node.decorator_list:
                    decorated(node, own_defs.get(id(node), name), all_calls)
                if id(node) not in own_defs:
                    nested.append((line, node.end_lineno))
                    bindings.append((name, line))
                    if t is not ast.ClassDef:
                        binders.append(node)  # its returns are not the enclosing function's
            elif t is ast.Lambda:  # its isinstance tests of its own parameters; its own
                own_tests |= lambda_tests(node)  # parameters (indexgen.extract.lambdas)
                binders.append(node)
                continue
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
                if t is ast.Yield and node.value is not None:
                    binders.append(node)  # what the generator gives
                continue
            elif t is ast.Global or t is ast.Nonlocal:
                for n in node.names:
                    _count(idents, n, node.lineno)
                if t is ast.Global:  # a nonlocal name is an enclosing function's: local
                    declared += [(n, node.lineno) for n in node.names]
                    findings.append(Finding("global-state", node.lineno,
                                            "global " + ", ".join(node.names)))
                continue
            else:  # an except handler, the last type of _INTERESTING
                if not node.name:
                    continue
                name, line = node.name, node.lineno
                bindings.append((name, line))
                binders.append(node)  # except E as name: name is an E
        entry = idents.get(name)
        if entry is None:
            idents[name] = [line, 1]
        else:
            entry[1] += 1
            if line < entry[0]:
                entry[0] = line
    # from subprocess import run as sh: sh(...) is run's call (function imports known now)
    renamed = {i.alias: i.name for i in s.imports if i.alias and i.name
               and (i.name in special or i.name.startswith("register"))}
    for node in bare if renamed else ():
        if node.func.id in renamed:
            _special(structure, node, renamed[node.func.id], calls, literals,
                     call_line(node, imported))
    if nested:  # a yield in a nested function makes it a generator, not its enclosing one
        s.findings[:] = [f for f in s.findings if f.category != "generator"
                         or not any(a <= f.lineno <= b for a, b in nested)]
    s.cli_options = [option for *_where, option in sorted(options)]
    s.identifiers = {k: (v[0], v[1]) for k, v in sorted(idents.items())}
    s.imports.sort(key=lambda i: (i.lineno, i.module, i.name))
    return Walked(calls, all_calls, bindings, declared, binders, path_tests, assigns_self)

