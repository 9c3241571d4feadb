"""Stage 1e: what the names of a function and the attributes of a class are bound to.

The global pass resolves a call on a value -- ``self.group.pre_forward()``,
``p.clear_unsharded_grad()`` in ``for p in self.fsdp_params``, ``compute.wait_event()`` after
``compute = ctx.current()`` -- by inferring the value's type
(:mod:`indexgen.analyze.types`).  This module records what that inference starts from, as
*sources*: ``:`` and an annotation as written (``:list[FSDPParam]``), or ``=`` and the path
of a value (:func:`~indexgen.extract.syntax.path`): ``=Stream()``, ``=ctx.current()``,
``=next(iter(self.fsdp_params))`` for a loop variable, ``=pair()[1]`` for the second name
of ``a, b = pair()``, ``=lock.__enter__()`` for ``with lock as held``.

- A function's annotated parameters and its assigned names go to
  :attr:`~indexgen.extract.model.Definition.names`, but only those the function's calls on
  local values need (their receivers, and what those are bound to), so that summaries stay
  small; its return annotation to :attr:`~indexgen.extract.model.Definition.returns` (a
  nested function's, which a kept name holds, to the names as ``->inner``).
- Assignments to an attribute of a method's first parameter (``self.x = ...``; ``ctx.x`` in
  an autograd Function's static ``forward``) and the annotated or assigned names of a class
  body go to the class's :attr:`~indexgen.extract.model.Definition.members`, with the
  method whose names the source is read in.

Names bound in nested functions and comprehensions count for the enclosing definition, as
their calls do (:mod:`indexgen.extract.identifiers`).
"""

from __future__ import annotations

import ast

from indexgen.extract.alternatives import alternatives, mark_alternatives
from indexgen.extract.argument_narrowing import narrow_arguments
from indexgen.extract.attribute_narrowing import FOLLOWED, followed_until, narrow_paths
from indexgen.extract.builtin_tests import type_names
from indexgen.extract.calls import accepts, owners
from indexgen.extract.class_binds import bind_at_top, constant_members, takes_instance
from indexgen.extract.identifiers import APPENDS
from indexgen.extract.lambdas import parameters as lambda_parameters
from indexgen.extract.model import Definition, FileSummary
from indexgen.extract.narrowing import (
    NARROW_ONLY,
    NARROWERS,
    NARROWING_VALUES,
    VALUED,
    Narrowing,
    at_line,
    held,
    narrow,
    narrowings,
    spans,
)
from indexgen.extract.needed import imported_names, keep_needed
from indexgen.extract.puts_into import appended
from indexgen.extract.rebinding import split_rebound
from indexgen.extract.scopes import needed_from, nested_scopes, rewrite
from indexgen.extract.shadows import own_rebinding
from indexgen.extract.sources import (
    lambda_pairs,
    nested_function,
    pairs,
    plain_names,
    values,
)
from indexgen.extract.structure import FUNCS, Structure
from indexgen.extract.stubs import PARAMETERS, overloaded, parameters
from indexgen.extract.syntax import annotation, path


def bind(summary: FileSummary, structure: Structure, binders: list[ast.AST],
         receivers: dict[int, set[str]], rebound: list[tuple[str, int]] = (),
         path_tests: list[int] | None = None, declared: list[tuple[str, int]] = ()) -> None:
    """Fill ``returns``, ``names`` and ``members`` of the definitions of ``summary``.

    Args:
        summary: The summary, its calls attributed to their definitions already.
        structure: The scanned structure: every definition with its syntax node.
        binders: The binding nodes the identifier walk found (``Walked.binders``).
        receivers: The receivers of each definition's calls on local values, by index of
            the definition (what :func:`~indexgen.extract.calls.attribute` returns); the
            sets are extended here.
        rebound: ``(name, line)`` of the ``self``/``cls`` the definitions assign themselves
            (:func:`~indexgen.extract.shadows.rebound`).
        path_tests: Lines of the ``isinstance`` tests of an attribute (``Walked.path_tests``;
            None: look at every statement), for
            :func:`~indexgen.extract.attribute_narrowing.narrow_paths`.
        declared: ``(name, line)`` of the ``global`` statements (``Walked.declared_global``).
    """
    defs = summary.definitions
    index = {d.anchor: i for i, d in enumerate(defs)}
    first_param: dict[int, str] = {}
    found: dict[int, dict[str, list[str]]] = {}  # definition -> name -> sources
    # definition -> name -> binding nodes (an annotated parameter: with how it is passed)
    lazy: dict[int, dict[str, list]] = {}
    classes = {d.qualname: d for d in defs if d.kind == "class"}
    shapes: dict[int, list[str]] = {}  # plain function -> what it accepts by position
    shapes_nested: dict[int, dict[str, list[str]]] = {}  # the same of its closures, by name
    returns_nested: dict[int, dict[str, str]] = {}  # their return annotations
    metaclasses: dict[int, str] = {}  # class -> its metaclass= keyword
    methods: dict[int, list[str]] = {}  # method -> what it accepts by position, self too
    stubbed = overloaded(defs)  # typing.overload: the stubs' and implementation's parameters
    signatures: dict[int, list[str]] = {}
    for d, node in structure.defs:
        if d.kind == "class":
            meta = [k.value for k in node.keywords if k.arg == "metaclass"]
            if meta:  # a class is an instance of its metaclass (isinstance(C, Meta))
                metaclasses[index[d.anchor]] = annotation(meta[0])
            continue
        i = index[d.anchor]
        if d.kind == "function" or d.kind == "staticmethod":
            shapes[i] = accepts(node)
        else:  # a method: how many arguments it takes, for protocol conformance (")")
            methods[i] = accepts(node)[:1]
        if node.returns is not None:
            d.returns = annotation(node.returns)
        args = node.args
        params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        if d.parent and params and takes_instance(d.kind, classes.get(d.parent), classes):
            first = first_param[i] = params[0].arg
            if first not in ("self", "cls"):  # the global pass knows those two already
                found.setdefault(i, {})[first] = ["@"]
        if d.qualname in stubbed:
            signatures[i] = parameters(node, i in first_param)
        # each parameter's entries: its annotation (written out if it is needed), then what
        # its callers hand it (see _keep_needed), but the instance's (the global pass knows it)
        scope = lazy[i] = {}
        positional = len(args.posonlyargs) + len(args.args)
        # a default is what the parameter is where a caller leaves it out: read with what
        # the callers hand (<0:renderer_cls=RendererHTML)
        defaults = [None] * (positional - len(args.defaults)) + [*args.defaults, *args.kw_defaults]
        for k, a in enumerate(params):
            entries = [(a, "")] if a.annotation is not None else []
            if k or i not in first_param:
                given = path(defaults[k], False) if defaults[k] is not None else None
                default = f"={given}" if given and given != "None" else ""
                entries.append(f"<{k if k < positional else 'k'}:{a.arg}{default}")
            if entries:
                scope[a.arg] = entries
        a, b = args.vararg, args.kwarg
        if a is not None:
            scope[a.arg] = [(a, "*")] * (a.annotation is not None) + [f"<*{positional}:{a.arg}"]
        if b is not None and b.annotation is not None:
            scope[b.arg] = [(b, "**")]
    # aliases of callable types (Op = Callable[[int], bool]): a function returning an Op
    # returns a function, which its return statements name
    callables = {a.name for a in summary.attributes if a.value.startswith(_CALLABLE_TYPES)}
    owner = owners(summary)
    top = len(owner) - 1
    # the functions nested in each function (no definitions): their returns are not its own
    nested: dict[int, list[ast.AST]] = {}
    tests: dict[int, list[ast.Call]] = {}  # isinstance(x, T) by line: a comprehension's x
    for n in binders:                      # may be a T (narrowing._comprehension)
        t = type(n)
        if t in FUNCS:
            if 0 <= n.lineno <= top and owner[n.lineno] >= 0:
                nested.setdefault(owner[n.lineno], []).append(n)
        elif t is ast.Call and type(n.func) is ast.Name and n.func.id == "isinstance":
            tests.setdefault(n.lineno, []).append(n)
    consts, modules = structure.constants, imported_names(summary)
    fields: dict[int, dict[str, int]] = {}  # class -> name of its body -> first line
    narrowed: dict[int, list[Narrowing]] = {}  # function -> where isinstance tests narrow
    block_ends: dict[int, dict[int, int]] = {}  # function -> statement -> its block's end
    def_nodes = {index[d.anchor]: node for d, node in structure.defs}
    # what the targets other than plain names are bound to, bound after the walk: a value
    # read where a test narrows it is the narrowed name (self.x = item: =item@12)
    pending: list[tuple[ast.AST | None, str, Definition, int, int]] = []
    for node in binders:
        t = type(node)
        if t is ast.Assign and type(node.value) not in NARROWING_VALUES and len(
                node.targets) == 1 and type(node.targets[0]) is ast.Name:
            i = owner[node.lineno] if 0 <= node.lineno <= top else -1
            if i >= 0 and defs[i].kind != "class":  # x = v in a function, the commonest
                lazy.setdefault(i, {}).setdefault(node.targets[0].id, []).append(node)
                continue  # binder: what the general steps below do with it, at once
        if t in NARROWERS or t in VALUED and type(node.value) in NARROWING_VALUES:  # narrows
            i = owner[node.lineno] if 0 <= node.lineno <= top else -1
            if i >= 0 and defs[i].kind != "class":
                end = defs[i].end_lineno
                if t in FOLLOWED:  # what follows an if that leaves: up to its block's end
                    end = followed_until(block_ends, i, def_nodes[i].body, node, end)
                found_here = narrowings(node, end, tests)
                if found_here:
                    narrowed.setdefault(i, []).extend(found_here)
            if t in NARROW_ONLY:
                continue
        if t is ast.Lambda:  # a lambda: its parameters are names here (a class's too)
            i = owner[node.lineno] if 0 <= node.lineno <= top else -1
            for name, source in lambda_parameters(node, defs[i].kind != "class" and bool(
                    defs[i].parent), defs[i].qualname if defs[i].kind == "class" else ""
                    ) if i >= 0 else ():
                found.setdefault(i, {}).setdefault(name, []).append(source)
            continue
        if t in FUNCS:  # a nested function: its parameters are names here
            i = owner[node.lineno] if 0 <= node.lineno <= top else -1
            if i >= 0 and defs[i].kind != "class":
                nested_function(node, found.setdefault(i, {}), lazy.setdefault(i, {}),
                                bool(defs[i].parent))
                shapes_nested.setdefault(i, {})[node.name] = accepts(node)
                if node.returns is not None:
                    returns_nested.setdefault(i, {})[node.name] = annotation(node.returns)
            continue
        line = (node.target.lineno if t is ast.comprehension else
                node.context_expr.lineno if t is ast.withitem else node.lineno)
        i = owner[line] if 0 <= line <= top else -1
        if i < 0:  # Element.literal_class = Literal at the top: a class attribute
            bind_at_top(node, classes, consts)
            continue
        d = defs[i]
        if t is ast.Return or t is ast.Yield:
            if (d.returns in VAGUE or "[" in d.returns or d.returns in callables) \
                    and d.kind != "class" \
                    and node.value is not None and not any(
                    d.lineno < n.lineno <= line <= n.end_lineno for n in nested.get(i, ())):
                given = values(node.value, consts)
                if t is ast.Yield:  # a generator: an iterator of what it yields
                    given = [f"=[{v[1:]}]" for v in given]
                pending += [(None, v, d, i, line) for v in given]
            continue
        if t is ast.Call and type(node.func) is ast.Attribute and node.func.attr in APPENDS \
                or t is ast.Assign and type(node.targets[0]) is ast.Subscript:
            pending += [(target, source, d, i, line)
                        for target, source in appended(node, d, i, first_param, modules)]
            continue
        handed = lambda_pairs(node) if t is ast.Call else None  # map(lambda x: ..., xs)
        if handed:
            if d.kind != "class":  # the lambda's parameters are names of its function
                for param, source in handed:
                    found.setdefault(i, {}).setdefault(param.arg, []).append(source)
            continue
        if d.kind == "class":  # RED = 1: a constant member (an enum's), no local names
            names = constant_members(node, d)
        elif t is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
            names = [node.targets[0].id]  # the most common binder, without _plain_names
        else:
            names = plain_names(node)
        if names is not None:  # binds local names only: read later, if a call needs them
            scope = lazy.setdefault(i, {})
            for name in names:
                scope.setdefault(name, []).append(node)
            continue
        for target, source in pairs(node, consts):
            pending.append((target, source, d, i, line))
            if d.kind == "class" and type(target) is ast.Name:
                first = fields.setdefault(i, {})
                first[target.id] = min(first.get(target.id, line), line)
    cutting, records = nested_scopes({i: n for i, n in nested.items() if defs[i].kind != "class"},
                                     lazy, found, pending, consts, narrowed)  # their own names
    spanned = {i: spans(found_here, cutting.get(i) or lazy.get(i, {}))
               for i, found_here in narrowed.items()}
    types = type_names(summary)  # how the module writes builtin types (Container: its own?)
    where = {i: held(s, types) for i, s in spanned.items() if s}
    for i, own in records.items():
        if own and i in spanned:
            rewrite(spanned[i], own, where.get(i))
    for target, source, d, i, line in pending:
        if i in where:
            source = at_line(source, line, where[i])
        if target is None:
            found.setdefault(i, {}).setdefault("return", []).append(source)
        else:
            _bind_one(target, source, d, i, first_param, classes, found)
    for i, first in fields.items():  # once bound: a class body's names in source order, a
        members = defs[i].members    # dataclass's fields are handed by place
        defs[i].members = {n: members[n] for n in sorted(members, key=lambda n: (
            first.get(n, 1 << 30), n))}
    keep_needed(summary, found, lazy, consts, receivers, where, declared,
                {i: needed_from(own) for i, own in records.items() if own})
    own_rebinding(defs, first_param, {(owner[line] if 0 <= line <= top else -1, name)
                                      for name, line in rebound})
    for i, found_here in spanned.items():
        if defs[i].names:
            narrow(defs[i].names, found_here)
    narrow_arguments(summary.calls, index, where)  # item(:data@12): the narrowed argument
    split_rebound(summary, lazy, consts)  # fn = wrap(fn): wrap is handed fn's other values
    for i, shape in shapes.items():  # read by the global pass as "("
        defs[i].names["("] = shape
    for i, shape in methods.items():  # and of a method as ")"
        defs[i].names[")"] = shape
    for i, entries in signatures.items():  # read by the global pass as "/"
        defs[i].names[PARAMETERS] = entries
    for i, meta in metaclasses.items():  # read by the global pass as "metaclass="
        defs[i].names = {**(defs[i].names or {}), "metaclass=": [meta]}
    for i, inner in shapes_nested.items():  # and of a closure "inner" as "(inner"
        for name, shape in inner.items():
            defs[i].names["(" + name] = shape
    for i, inner in returns_nested.items():  # its return annotation as "->inner", if the
        for name, text in inner.items():     # closure is a value the pass reads
            if "λ" + name in defs[i].names.get(name, ()):
                defs[i].names["->" + name] = [text]
    mark_alternatives(alternatives(structure.bound), defs, index, summary)  # and their conditions
    narrow_paths(summary, binders, owner, structure.defs,  # isinstance(self.data, A):
                 path_tests, block_ends)                   # self.data@12.run


def _bind_one(target: ast.AST, source: str, d: Definition, i: int, first_param: dict,
              classes: dict[str, Definition], found: dict) -> None:
    """Record that ``target`` (a name, or an attribute of the instance) gets ``source``."""
    t = type(target)
    if t is ast.Name:
        if d.kind == "class":
            d.members.setdefault(target.id, []).append(("", source))
        else:
            found.setdefault(i, {}).setdefault(target.id, []).append(source)
    elif t is ast.Attribute and d.kind != "class":
        if type(target.value) is ast.Name and first_param.get(i) == target.value.id:
            cls = classes.get(d.parent)
            sources = cls.members.setdefault(target.attr, []) if cls is not None else None
            if sources is not None and (d.anchor, source) not in sources:
                sources.append((d.anchor, source))
            return
        text = path(target, False)  # another object's attribute: for the global pass to give
        if text is not None:
            found.setdefault(i, {}).setdefault("+" + text, []).append(source)


#: Return annotations that say nothing: what the return statements return is recorded (and
#: for a subscripted one, ``list[T]``, which may say nothing of its elements).
VAGUE = frozenset({"", "Any", "typing.Any", "object"})
_CALLABLE_TYPES = ("Callable[", "typing.Callable[", "t.Callable[", "collections.abc.Callable[")
