"""Where one call leads: the callees a call may run, and why a call is not resolved.

:func:`resolve_call` resolves one call a file records (:class:`~indexgen.extract.model.Call`)
with :class:`~indexgen.analyze.resolve.Resolver` and :class:`~indexgen.analyze.types.Types`:
``self.m()``/``cls.m()`` in a method look ``m`` up in the class and its project bases,
``super().m()`` (``super(C, x).m()``) in the bases (of ``C``) only, anything else through
the file's namespace (definitions, imports, re-exports, aliases) or by the type of its
receiver.  Each callee is an edge (:class:`~indexgen.analyze.context.CallEdge`) of a kind:
``project`` (a definition of the build; for a definition a condition picks at import time,
every one it may pick: :func:`alternatives`), ``override`` (a method a documented subclass
defines, which a call on an instance may run instead: class hierarchy analysis, none when
the receiver's class is known exactly; a subclass's ``__init__`` where a class value the
code leaves open is called: :mod:`indexgen.analyze.virtual`), ``closure`` (a function
nested in a definition), ``external`` (a name from outside the build), ``builtin`` (left
off the pages), ``read`` (a property read on the way, or named as a value handed on),
``callback`` (a function handed to be called later) or ``unresolved`` (with its reason, one
of the constants below) -- never guessed, never none.  Before a call is resolved,
:func:`narrowed` writes the name an ``isinstance`` test narrows at its line into its text
(the receiver's, or the one ``type()`` is given: :func:`text_heads`).
"""

from __future__ import annotations

from indexgen.analyze.builtin_names import says_nothing
from indexgen.analyze.context import CallEdge, make_edge
from indexgen.analyze.local_imports import local_imports, local_targets
from indexgen.analyze.picked_imports import picked_imports
from indexgen.analyze.resolve import Resolver, Target
from indexgen.analyze.siblings import after_in_subclasses
from indexgen.analyze.types import Types
from indexgen.analyze.values import closure_qualname
from indexgen.analyze.virtual import (
    after_bases,
    assigns,
    class_of,
    constructors,
    function_apply,
    overrides,
)
from indexgen.extract.calls import receiver_name
from indexgen.extract.model import Call, ImportRecord

#: Edges whose target runs: a call, a property read, a callback (when it is called back).
RUNS = frozenset({"project", "override", "closure", "read", "callback"})


def resolve_call(resolver: Resolver, key: str, call: Call, cls: str | None = None,
                 types: Types | None = None, names: dict | None = None) -> list[CallEdge]:
    """Where one call of file ``key`` leads: the callees (several when the receiver's type
    is a union), then the properties read on the way (kind ``read``); never none (a
    builtin's call: kind ``builtin``; one not resolved: one ``unresolved`` edge, its reason);
    and, for a method called on an instance, the overrides of that method in the
    documented subclasses of the instance's class (kind ``override``), each right after
    the callee it overrides (:func:`~indexgen.analyze.virtual.after_bases`).
    ``cls``: the class whose method makes the call ('' for none), when the caller knows it
    already; ``types``: evaluate receivers the namespace alone cannot settle; ``names``: the
    caller's local names (:meth:`Types.local_names`), when the caller knows them already."""
    if names is None:
        names = types.local_names(key, call.caller) if types is not None else {}
    if cls is None:
        cls = class_of(resolver, key, call.caller)
    found = _resolve(resolver, key, call, cls, types, names)
    text = call.text
    if types is not None and (text.isidentifier() or found and found[0][2] != "unresolved"):
        found = alternatives(resolver, key, text, found)
    if types is None or text[0] in "&^(":
        return found
    found = found + constructors(resolver, types, key, call, found)
    if "." not in text and text not in names:  # a local name may hold a bound method
        return found
    if text.endswith(".apply"):
        found = found + function_apply(resolver, types, key, call, cls)
    bases: dict | None = {} if len(found) > 1 else None  # several callees: whose is whose
    extra = overrides(resolver, types, key, call, cls, found, bases)
    if not extra:
        return found
    # a method only subclasses or a protocol's conforming classes define: no unresolved
    return after_bases([e for e in found if e[2] != "unresolved"], extra, bases or {})


def alternatives(resolver: Resolver, key: str, text: str, found: list[CallEdge]
                 ) -> list[CallEdge]:
    """``found`` with each project callee that a condition picks at import time replaced by
    every definition its name may be bound to (:mod:`indexgen.extract.alternatives`); for a
    call of a bare name, also the definitions of that name its own module makes under a
    condition (``try: from ._c import f`` / ``except ImportError: def f``, or ``f = _f``),
    and the functions its imports under conditions bind it to (:mod:`~indexgen.analyze.
    picked_imports`)."""
    out = []
    for edge in found:
        choices = resolver.module(edge[3]).choices.get(edge[5]) if edge[3] else None
        if choices is None or edge[2] not in RUNS:
            out.append(edge)
            continue
        named = resolver.module(edge[3]).qualname_of  # name = f: f's
        out += [make_edge((edge[0], edge[1], edge[2], edge[3], anchor, named[anchor]))
                for anchor, _condition in choices]
    where, name = (key, text) if "." not in text else ("", "")
    own = resolver.module(key).choices.get(text) if where else None
    imp = resolver.module(key).binding.get(text) if where and not own else None
    if type(imp) is ImportRecord and imp.name and imp.module in resolver.by_module:
        where, name, own = _imported_choices(resolver, imp)  # helper's trait
    if own and not any(e[3] == where and e[5] == name for e in out):
        line = found[0][0]
        named = resolver.module(where).qualname_of
        out = [e for e in out if e[2] != "unresolved"]
        out += [make_edge((line, text, "project", where, anchor, named[anchor]))
                for anchor, _c in own]
    picks = resolver.files[key].import_choices  # most modules: none, and no call more
    return picked_imports(resolver, key, text, out) if picks else out


def _imported_choices(resolver: Resolver, imp: ImportRecord) -> tuple[str, str, list]:
    """``(file key, name, choices)`` of the name the import ``imp`` binds, where a module of
    the build it comes from (through re-exports) binds it under a condition: ``try: from
    fastlib import trait`` / ``except ImportError: def trait`` in ``helper``, then ``from
    .helper import trait`` elsewhere (the import alone reaches ``fastlib.trait``, outside)."""
    for _hop in range(4):
        key = resolver.by_module.get(imp.module)
        if key is None:
            break
        choices = resolver.module(key).choices.get(imp.name)
        if choices:
            return key, imp.name, choices
        imp = resolver.module(key).binding.get(imp.name)
        if type(imp) is not ImportRecord or not imp.name:
            break
    return "", "", []


def _resolve(resolver: Resolver, key: str, call: Call, cls: str, types: Types | None,
             names: dict) -> list[CallEdge]:
    """:func:`resolve_call` without the overrides."""
    text = call.text
    # a full summary's call on a local value whose type is known
    typed = call.local and types is not None and receiver_name(text) in names
    if text[0] == "&":  # a function handed to a call, to be called later
        return _callbacks(resolver, key, call, cls, types) if typed or not call.local else []
    if text[0] == "^":  # an attribute a test file reads: a property runs
        if types is None or (call.local and not typed):
            return []
        read: set[tuple[str, str]] = set()
        types.evaluate(key, call.caller, text[1:], read)
        return [CallEdge(call.line, text[1:], "read", k, resolver.anchor(k, q), q)
                for k, q in sorted(read)]
    if call.local and not typed:
        return [CallEdge(call.line, text, "unresolved", label=UNKNOWN_VALUE)]
    if text.startswith("("):
        return [CallEdge(call.line, text, "unresolved", label=COMPUTED)]
    parts = text.split(".")
    target = None
    if "(" not in text and "[" not in text:
        head = parts[0]
        if head in ("self", "cls") and cls and not assigns(names, head):
            # the class's method, unless the lookup rules otherwise (then below, through it)
            target = resolver.method(key, cls, parts[1]) if len(parts) == 2 and not (
                types is not None and types.instance_own(key, cls, parts[1])) else None
        elif types is None or head not in names:
            own = local_imports(resolver, key, call.caller).get(head)
            if not own:
                target = resolver.name_in(key, text)
            else:  # a name the function imports itself: not what the module binds
                found = [e for t in local_targets(resolver, own, parts[1:])
                         for e in _named(resolver, types, key, call, t)]
                if found:  # else its value's type, below (types read the import too)
                    return found
    elif parts[0] == "super()" and len(parts) == 2:
        target = resolver.inherited(key, cls, parts[1]) if cls else None
        after = after_in_subclasses(types, key, cls, parts[1]) if cls and types else []
        if after:  # a mixin's super(): the class after it in a subclass's method order
            return [*(_named(resolver, types, key, call, target) if target else ()), *(
                CallEdge(call.line, text, "project", k, resolver.anchor(k, q), q)
                for k, q in after)]
    if target is not None:
        return _named(resolver, types, key, call, target)
    if types is None:
        why = UNKNOWN_VALUE if len(parts) > 1 else RUN_TIME_NAME
        return [CallEdge(call.line, text, "unresolved", label=why)]
    read: set[tuple[str, str]] = set()
    values = types.evaluate(key, call.caller, text, read)
    found = _edges(resolver, types, key, call, values, None)
    if read:
        found += [CallEdge(call.line, text, "read", k, resolver.anchor(k, q), q)
                  for k, q in sorted(read)]
    return found


def _named(resolver: Resolver, types: Types | None, key: str, call: Call,
           target: Target) -> list[CallEdge]:
    """The edges of a call whose callee the names of the file settle: ``target``."""
    if types is not None and target.kind == "project" and target.qualname:
        kind = resolver.module(target.key).kinds.get(target.qualname)
        if kind == "class":  # calling a class runs its __init__
            k, q = types.constructor(target.key, target.qualname)
            return [CallEdge(call.line, call.text, "project", k, resolver.anchor(k, q), q)]
        if kind is None:  # a module attribute: what its value is
            return _edges(resolver, types, key, call, types.of_target(target), target)
    return _edges(resolver, types, key, call, None, target)


def _callbacks(resolver: Resolver, key: str, call: Call, cls: str | None,
               types: Types | None) -> list[CallEdge]:
    """``callback`` edges to the project functions a reference (``&self._on_grad``, given to
    a ``register_*hook`` or ``partial`` call) may name; nothing else counts.  A property so
    named (``str(self.name)``, ``f(key=self.name)``) is read there, its value handed on: a
    ``read`` edge, as for the properties read on the way (``&self.group.on_grad``)."""
    if types is None:
        return []
    if cls is None:
        cls = class_of(resolver, key, call.caller)
    text = call.text[1:]
    read: set[tuple[str, str]] = set()
    bound = cls and text.startswith(("self.", "cls.")) and text.count(".") == 1 and \
        not assigns(types.local_names(key, call.caller), text.partition(".")[0])
    target = resolver.method(key, cls, text.partition(".")[2]) if bound else None
    if bound and target is None:
        return []
    if target and resolver.module(target.key).kinds.get(target.qualname) != "property":
        values = types.of_target(target)
    else:
        values = types.evaluate(key, call.caller, text, read)
    return [CallEdge(call.line, text, "callback", v[1], resolver.anchor(v[1], v[2]), v[2])
            for v in sorted(v for v in values if v[0] == "f")] + [
        CallEdge(call.line, text, "read", k, resolver.anchor(k, q), q) for k, q in sorted(read)]


#: Why a call is not resolved: the reasons pages count.
UNKNOWN_VALUE = "on a value of unknown type"
RUN_TIME_NAME = "to a name bound at run time"
COMPUTED = "on a computed value"
MODULE = "to a module"
#: Why a call of a value the code types only as a ``Callable`` (which function, the annotation
#: does not say; no caller in the tree hands one) is not resolved.
SIGNATURE_ONLY = "on a callable typed only by its signature"


def _edges(resolver: Resolver, types: Types | None, key: str, call: Call, values, target
           ) -> list[CallEdge]:
    """The edges of one call of file ``key`` whose callee may be ``values`` (or, without
    types, the resolved ``target``)."""
    line, text = call.line, call.text
    if values is None:  # no type evaluation: the target as it is
        if target.kind == "builtin":
            return [make_edge((line, text, "builtin", "", "", target.qualname))]
        if target.kind == "external":
            return [make_edge((line, text, "external", "", "", target.qualname))]
        if not target.qualname:
            return [make_edge((line, text, "unresolved", "", "", MODULE))]
        return [make_edge((line, text, "project", target.key,
                       resolver.anchor(target.key, target.qualname), target.qualname))]
    found = []
    builtin = False
    if len(values) > 1 and types is not None:  # several functions: those the call fits
        values = types.fitting(key, call, values)
    for value in (sorted(values, key=repr) if len(values) > 1 else values):
        kind = value[0]
        if kind == "f":
            found.append(make_edge((line, text, "project", value[1],
                                resolver.anchor(value[1], value[2]), value[2])))
        elif kind == "c":
            if types.is_protocol(value[1], value[2]):  # never made itself (PEP 544): one
                found += [make_edge((line, text, "project", k, resolver.anchor(k, q), q))
                          for k, q in types.overrides(value[1], value[2], "__init__")]
                continue  # of its subclasses
            k, q = types.constructor(value[1], value[2])
            found.append(make_edge((line, text, "project", k, resolver.anchor(k, q), q)))
        elif kind == "i":  # an instance called: its __call__ (none known: counted below)
            found += [e for e in _edges(resolver, types, key, call,
                                        types.member(value, "__call__"), None)
                      if e[2] != "unresolved"]
        elif kind == "n":  # a closure: code of the function it is nested in
            found.append(make_edge((line, text, "closure", value[1],
                                resolver.anchor(value[1], value[2]),
                                closure_qualname(value[2], value[3]))))
        elif kind == "x" or kind == "xa" or kind == "xi" and not says_nothing(value[1]):
            found.append(make_edge((line, text, "external", "", "", value[1])))
        elif kind == "b" and value[1] == "type" and text.rpartition(".")[2] != "type":
            continue  # c() with c: type: some class, not which (not resolved, below)
        elif kind == "b" or kind == "r":  # a builtin, or a method of a builtin container
            if not builtin:
                builtin = True
                found.append(make_edge((line, text, "builtin", "", "",
                                    value[1] if kind == "b" else value[2])))
    if not found:
        bare = "." not in text and "(" not in text and "[" not in text
        why = (MODULE if any(v[0] == "m" for v in values) else
               SIGNATURE_ONLY if values and all(v[0] == "k" for v in values) else
               RUN_TIME_NAME if bare and target is None and not _assigned(types, key, call)
               else UNKNOWN_VALUE)
        found.append(make_edge((line, text, "unresolved", "", "", why)))
    return found


def _assigned(types: Types | None, key: str, call: Call) -> bool:
    """Whether the name a call calls is a local its function assigns a value to (``func =
    table.get(name)``): a value stated, of a type not known, where a parameter no caller
    hands a function is a name bound at run time."""
    sources = types.local_names(key, call.caller).get(call.text) if types is not None else None
    return any(source[0] == "=" for source in sources or ())


def text_heads(text: str) -> tuple[str, str]:
    """The name a call's path starts with, and the plain name ``type(...)`` is given when
    the path starts with that (``type(value)(...)``: ``value``), else ''."""
    head = receiver_name(text)
    if head == "type" and text.startswith("type("):
        inner = text[5:].partition(")")[0]
        return head, inner if inner.isidentifier() else ""
    return head, ""


def narrowed(call: Call, head: str, spans: list[tuple[int, int, str]], at: int = 0) -> Call:
    """The call with the name ``head`` at position ``at`` of its text (its receiver's, or
    the one ``type()`` is given) replaced by the narrowed name (``x@12``) of the innermost
    ``isinstance`` branch that holds its line, if one does (``spans``: first line, last
    line, narrowed name; by first line)."""
    found = None
    for first, last, name in spans:
        if first <= call[2] <= last:
            found = name  # a later first line: an inner branch
    text = call[1]
    if found is None or not text.startswith(head, at):
        return call
    return tuple.__new__(Call, (call[0], text[:at] + found + text[at + len(head):], call[2],
                                call[3]))
