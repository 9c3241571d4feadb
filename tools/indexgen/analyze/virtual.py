"""What a call may run instead of the callee it names: the methods and constructors of the
documented subclasses (class hierarchy analysis), and an autograd ``Function``'s ``forward``.

:func:`~indexgen.analyze.dispatch.resolve_call` adds these edges to a call's callees:
:func:`overrides` (``x.m()`` may run ``m`` of any documented subclass of the classes ``x``
may be an instance of; none where the receiver's class is known exactly, none past
``super()``), :func:`constructors` (calling a class value the code leaves open, ``cls(...)``,
runs the ``__init__`` of a subclass) and :func:`function_apply` (``C.apply(...)`` runs
``C.forward``).
"""

from __future__ import annotations

from indexgen.analyze.context import CallEdge, make_edge
from indexgen.analyze.flows import handed_at
from indexgen.analyze.resolve import Resolver
from indexgen.analyze.types import Types
from indexgen.analyze.values import closure_qualname, ordered
from indexgen.extract.arguments import without_arguments
from indexgen.extract.model import Call


def assigns(names: dict[str, list[str]], head: str) -> bool:
    """Whether a function's own names (``names``) assign ``head`` (``self``, ``cls``)
    something (``cls = Out if flag else Alloc``, a loop, ``with``), where it is not (only)
    the instance or class of its method.  An annotation of the method's first parameter
    (``self: Self``), what callers hand a static ``__new__``'s ``cls``, or what is appended
    to ``self`` do not count."""
    return any(x[0] == "=" for x in names.get(head, ()))


def constructors(resolver: Resolver, types: Types, key: str, call: Call,
                 found: list[CallEdge]) -> list[CallEdge]:
    """``override`` edges of a call of a class value the code leaves open (``cls(...)``,
    ``type(x)(...)``, ``x.__class__(...)``, ``error(line)`` with ``error: type[Error]`` or a
    union holding it): the ``__init__`` of each documented subclass, which the value may
    be.  A class a function returns by name is that class: ``make()(...)`` lists none;
    so is a name bound only to classes by their own names (``cls = Out if f else Alloc``)."""
    text = call.text
    if not (text == "cls" or text.startswith("type(") or text.endswith(".__class__") or any(
            s[0] == ":" and ("type[" in s or "Type[" in s)
            for s in types.local_names(key, call.caller).get(text, ()))):
        return []
    if text.isidentifier() and _exact(resolver, types, key, call.caller, text):
        return []  # cls = Out if flag else Alloc: those classes themselves
    known = {(e[3], e[5]) for e in found if e[2] == "project"}
    out: list[CallEdge] = []
    for v in ordered(types.evaluate(key, call.caller, call.text)):
        for target in types.overrides(v[1], v[2], "__init__") if v[0] == "c" else ():
            if target not in known:
                known.add(target)
                out.append(make_edge((call.line, call.text, "override", target[0],
                                      resolver.anchor(*target), target[1])))
    return out


def function_apply(resolver: Resolver, types: Types, key: str, call: Call, cls: str
                   ) -> list[CallEdge]:
    """``C.apply(...)`` of a subclass ``C`` of ``torch.autograd.Function`` runs
    ``C.forward`` with a context first and the call's arguments after it (torch 2.13's
    ``Function.apply``): edges to the ``forward`` of ``C`` and, as overrides, of its
    documented subclasses (:mod:`indexgen.analyze.flows` hands ``forward``'s parameters
    the arguments, one place on)."""
    receiver = call.text[:-len(".apply")]
    if (receiver == "cls" or receiver == "self") and not assigns(
            types.local_names(key, call.caller), receiver):
        classes = [(key, cls)] if cls else []
    else:
        classes = [(v[1], v[2]) for v in ordered(types.evaluate(key, call.caller, receiver))
                   if v[0] == "c"]
    out = []
    for k, c in classes:
        if not any(not base_key and base.rpartition(".")[2] == "Function"
                   for base_key, base in types.mro(k, c)):
            continue
        target = resolver.method(k, c, "forward")
        if target is not None and target.kind == "project":
            out.append(make_edge((call.line, call.text, "project", target.key,
                              resolver.anchor(target.key, target.qualname), target.qualname)))
        out += [make_edge((call.line, call.text, "override", tk, resolver.anchor(tk, tq), tq))
                for tk, tq in types.overrides(k, c, "forward")]
    return out


def overrides(resolver: Resolver, types: Types, key: str, call: Call, cls: str,
              found: list[CallEdge], bases: dict | None = None) -> list[CallEdge]:
    """``override`` edges of a call ``x.m(...)``: the methods ``m`` that the documented
    subclasses of the classes ``x`` may be an instance of define themselves (``self`` in a
    method: the method's class), other than the callees already found; of a call of a name
    bound to such a method (``report = e.show``, then ``report()``), those of ``e.show``.
    ``bases``: filled with ``(key, qualname)`` of each override -> that of the method it
    overrides (``m`` of the receiver's class: ``("", dotted)`` outside the build), for
    :func:`after_bases`."""
    receiver, _, attr = call.text.rpartition(".")
    if not receiver and call.text.isidentifier():  # report = e.show; report(): e.show's
        out = []
        for where, anchor, bound in method_reads(types, key, call.caller, call.text):
            mine = cls if where == key and anchor == call.caller else class_of(
                resolver, where, anchor)
            out += overrides(resolver, types, where, call._replace(caller=anchor, text=bound),
                             mine, found + out, bases)
        return out
    if not types.may_be_overridden(attr):
        return []
    if (receiver == "self" or receiver == "cls") and cls and not assigns(
            types.local_names(key, call.caller), receiver):
        classes = [(key, cls)]  # the method's own (not one it assigns, nor a function's)
    elif _is_super(receiver) or not attr.isidentifier():
        return []  # super().m() runs the method after the class, not an override
    elif _exact(resolver, types, key, call.caller, receiver):
        return []
    else:  # an instance, or a class not named as such (type[C], type(x), cls_attr)
        values = ordered(types.evaluate(key, call.caller, receiver))
        named = _names_a_class(resolver, types, key, call.caller, receiver)
        classes = [(v[1], v[2]) if v[0] != "xi" else ("", v[1]) for v in values
                   if v[0] == "i" or v[0] == "c" and not named or v[0] == "xi"]
    out: list[CallEdge] = []
    if not classes:
        return out
    known = {(e[3], e[5]) for e in found if e[2] == "project"}
    not_a = types.not_instances(key, call.caller, receiver)  # isinstance's else: no A's
    for k, c in classes:
        mine = len(out)
        for target in types.overrides(k, c, attr) + (types.implementers(k, c, attr) if k
                                                     else []):
            if target not in known and not types.is_ruled_out(
                    not_a, target[0], target[1].rpartition(".")[0]):
                known.add(target)
                out.append(make_edge((call.line, call.text, "override", target[0],
                                  resolver.anchor(*target), target[1])))
        for sk, sc in types.rebinders(k, c, attr) if k else ():
            if not types.is_ruled_out(not_a, sk, sc):
                out += _rebound(resolver, types, call, types.member(("i", sk, sc), attr),
                                known)
        if bases is not None and len(out) > mine:
            base = resolver.method(k, c, attr) if k else None
            named = (base.key, base.qualname) if base is not None else ("", f"{c}.{attr}")
            for e in out[mine:]:
                bases[e[3], e[5]] = named
    return out


def after_bases(found: list[CallEdge], extra: list[CallEdge], bases: dict
                ) -> list[CallEdge]:
    """``found`` and the override edges ``extra``, each override right after the callee
    it overrides (``bases``: :func:`overrides`') where that is one of ``found``, the others
    after all of them: the page puts each group of overrides after its own method
    (``Table.render, or an override in: ...; Leaf.render, or an override in: ...``)."""
    if len(found) < 2:
        return found + extra
    after: dict[tuple[str, str], list[CallEdge]] = {}
    for e in extra:
        after.setdefault(bases.get((e[3], e[5]), ("", "")), []).append(e)
    out = []
    for e in found:
        out.append(e)
        out += after.pop((e[3], e[5]), ())
    for rest in after.values():
        out += rest
    return out


def _rebound(resolver: Resolver, types: Types, call: Call, values, known: set) -> list[CallEdge]:
    """The edges to what a subclass binds ``m`` to in its body (a project function, or the
    closure a factory makes), other than those in ``known`` (extended)."""
    out = []
    for v in ordered(values):
        if v[0] != "f" and v[0] != "n":
            continue
        target = (v[1], v[2] if v[0] == "f" else closure_qualname(v[2], v[3]))
        if target not in known:
            known.add(target)
            out.append(make_edge((call.line, call.text, "override" if v[0] == "f" else
                                  "closure", v[1], resolver.anchor(v[1], v[2]), target[1])))
    return out


def _names_a_class(resolver: Resolver, types: Types, key: str, anchor: str,
                   receiver: str) -> bool:
    """Whether the receiver is a class's own name (``Base.m()``, ``mod.Base.m()``): that
    class's method runs, where a class value (``parser: type[Parser]``, ``type(self)``)
    may be any subclass."""
    if "(" in receiver or "[" in receiver:
        return False
    if receiver.partition(".")[0] in types.local_names(key, anchor):
        return False
    target = resolver.name_in(key, receiver)
    return target is not None and target.kind == "project" and bool(target.qualname) and \
        resolver.module(target.key).kinds.get(target.qualname) == "class"


def _is_super(receiver: str) -> bool:
    """Whether a receiver is ``super()`` or ``super(C, x)`` itself (not a value it gives)."""
    return receiver.startswith("super(") and receiver.find(")") == len(receiver) - 1


def _exact(resolver: Resolver, types: Types, key: str, anchor: str, receiver: str) -> bool:
    """Whether the receiver is made by calling a class by its own name right there
    (``Order().save()``), or is a name of the caller bound only to such calls (``order =
    Order()``) or to classes by their own names (``cls = Out if flag else Alloc``): then
    its class is known exactly, and no override can run instead.  A class held in a name
    (``cls = registry[name]; cls()``, ``type[Base]``) may be a subclass."""
    sources = types.local_names(key, anchor).get(receiver) if receiver.isidentifier() \
        else ["=" + receiver]
    if not sources:
        return False
    for source in sources:  # Order() or, a class itself, Order; Order(:x): what it is
        if "(:" in source:  # handed aside
            source = without_arguments(source)
        named = source[1:-2] if source.endswith("()") else source[1:]
        if source[0] != "=" or "(" in named or not _names_a_class(resolver, types, key,
                                                                  anchor, named):
            return False
    return True


_READS = 16  # the reads of methods one called name is traced to, at most


def method_reads(types: Types, key: str, anchor: str, name: str, depth: int = 0
                 ) -> list[tuple[str, str, str]]:
    """Where the local name ``name`` of ``anchor`` may hold a method read as a value on
    something: ``(file key, anchor, path)`` of each read ``x.m``, written so in ``anchor``
    (``report = e.show``; ``f = getattr(self, "step")``), handed to the parameter ``name``
    by a call site (``self.helper(self.step)``; :mod:`indexgen.analyze.flows`), or
    returned by the function that gives the name its value (``f = self.finalize()``, which
    returns ``self._default_finalize``).  Calling the name may run the overrides of ``m``
    that a direct ``x.m()`` there may run (:func:`overrides`)."""
    found: list[tuple[str, str, str]] = []
    for source in types.local_names(key, anchor).get(name, ()):
        kind, body = source[0], source[1:]
        if kind == "=" and ("." in body or body[:8] == "getattr("):  # (most hold none)
            read = _read_method(body)
            if read is not None:
                found.append((key, anchor, read))
            elif depth > 1:
                continue
            elif body[:5] == "self." and (body[-1] == "]" or ".get(" in body):
                # h = self.handlers.get(tag): what the class's methods put there
                found += _put_reads(types, key, anchor, body[5:].partition(".get(")[0]
                                    .partition("[")[0])
            elif body[-1] == ")" and body.partition("(")[0].replace(".", "").isidentifier():
                found += _returned_reads(types, key, anchor, body.partition("(")[0])
        elif kind == "<" and depth < 2:
            found += _handed_reads(types, key, anchor, body, depth)
        if found and len(found) >= _READS:
            break
    return found[:_READS] if found else found


def _returned_reads(types: Types, key: str, anchor: str, called: str
                    ) -> list[tuple[str, str, str]]:
    """:func:`method_reads` of what the functions ``called`` may be return
    (``f = self.finalize()``, returning ``self._default_finalize``)."""
    found = []
    for v in ordered(types.evaluate(key, anchor, called)):
        d = types.definition(v[1], qualname=v[2]) if v[0] == "f" else None
        for returned in d.names.get("return", ()) if d is not None else ():
            read = _read_method(returned[1:]) if returned[0] == "=" else None
            if read is not None:
                found.append((v[1], d.anchor, read))
    return found


def _handed_reads(types: Types, key: str, anchor: str, spec: str, depth: int
                  ) -> list[tuple[str, str, str]]:
    """:func:`method_reads` of a parameter (``spec``: ``position:name``): the reads its
    call sites hand it on a name (``self.step``; not ``self.fn_cls.forward``, where what
    an attribute holds anywhere would open every override to each parameter it reaches),
    or the names of theirs that hold one."""
    pos, _, name = spec.partition("=")[0].partition(":")
    d = types.definition(key, anchor)
    sites = types.sites_of(key, d.qualname) if d is not None else None
    if not sites or not pos.isdigit() or not name.isidentifier():
        return []
    found: list[tuple[str, str, str]] = []
    for ckey, canchor, items, shift in sites[:_READS]:
        text = handed_at(items, name, pos, shift)
        if text is None:
            continue
        read = _read_method(text)
        if read is not None and read.count(".") == 1:  # self.step, fn.forward: not
            found.append((ckey, canchor, read))  # self.fn_cls.forward (a field's union)
        elif text.isidentifier():
            found += method_reads(types, ckey, canchor, text, depth + 1)
    return found


def _put_reads(types: Types, key: str, anchor: str, attr: str) -> list[tuple[str, str, str]]:
    """:func:`method_reads` of what the methods of the caller's class (or of a base of the
    project) put into its attribute ``attr`` (``self.handlers[tag] = ext.parse``)."""
    d = types.definition(key, anchor)
    cls = d.parent if d is not None else ""
    if not cls or not attr.isidentifier():
        return []
    found = []
    for k, c in types.mro(key, cls):
        owner = types.definition(k, qualname=c) if k else None
        for where, source in owner.members.get(attr, ()) if owner is not None else ():
            read = _read_method(source[2:-1]) if source[:2] in ("~{", "~[") else None
            if read is not None and where:
                found.append((k, where, read))
    return found


def _read_method(path: str) -> str | None:
    """``x.m`` where ``path`` reads a method on something by its name: ``x.m`` itself or
    ``getattr(x, "m")`` (a default after it: not read here)."""
    if "." in path and path.replace(".", "").isidentifier():
        return path
    if path.startswith("getattr(") and path.endswith(")"):
        parts = path[8:-1].split(", ")
        if len(parts) >= 2 and parts[0].replace(".", "").isidentifier() and \
                parts[1][:1] in "\"'" and parts[1][1:-1].isidentifier():
            return f"{parts[0]}.{parts[1][1:-1]}"
    return None


def class_of(resolver: Resolver, key: str, anchor: str) -> str:
    """The class whose method ``anchor`` of file ``key`` is, or ''."""
    cls = resolver.module(key).qualname_of.get(anchor, "").rpartition(".")[0]
    return cls if cls and resolver.module(key).kinds.get(cls) == "class" else ""
