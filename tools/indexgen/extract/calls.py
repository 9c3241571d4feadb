"""Stage 1c (continued): the calls of a file -- what each is made on, what it is handed, and
which definition makes it.

:func:`call_text` writes a call's callee as a *path* (:func:`~indexgen.extract.syntax.path`:
``self.groups[_].reset``, ``make().run``), so that the global pass can follow what its
receiver is; what a call hands its callee is :mod:`indexgen.extract.handing`'s.
:func:`call_line` says which line a call is at -- the one Python reports -- for every record
of it (its call, what it hands, its findings).

:func:`attribute` gives each call and finding its definition.  A line belongs to the
innermost definition whose ``def``/``class`` line range holds it (calls in nested functions
and lambdas belong to the enclosing definition; decorators, which run in the enclosing scope,
lie before the ``def`` line and so belong there too).  A call is *local* when its first name
is bound inside its function -- a parameter, an assignment, a loop or ``with`` target, a
nested ``def`` -- and not declared ``global``: what it calls is known only from the types the
function states (:mod:`indexgen.extract.bindings`).  ``self`` and ``cls`` in methods are not
local: the global pass resolves them in the class, unless the method assigns them itself
(``cls = Out if flag else Alloc``).
"""

from __future__ import annotations

import ast
import re
from operator import itemgetter

from indexgen.extract import rules
from indexgen.extract.handing import LOCAL_ONLY
from indexgen.extract.lambdas import class_locals
from indexgen.extract.model import Call, FileSummary
from indexgen.extract.shadows import MARK, renamed
from indexgen.extract.syntax import annotation, dotted, path


def call_text(func: ast.AST) -> str:
    """The callee as a path (:func:`indexgen.extract.syntax.path`: ``super().name``,
    ``self.groups[_].reset``, ``make().run``), so that the global pass can follow what its
    receiver is; as written with ``(...)`` for a receiver that is no path."""
    text = dotted(func)
    if "(...)" in text:
        return path(func) or _on_literal(func) or text
    return text


#: Literal receivers and the builtin type they make (``", ".join``: ``str.join``); not
#: :data:`indexgen.extract.syntax.LITERALS`, the literals read as what they hold.
_LITERAL_TYPES = {ast.JoinedStr: "str", ast.List: "list", ast.ListComp: "list", ast.Dict: "dict",
             ast.DictComp: "dict", ast.Set: "set", ast.SetComp: "set", ast.Tuple: "tuple"}


def _on_literal(func: ast.AST) -> str:
    """``str.join`` for a method called on a literal (``", ".join``, ``f"{x}".split``,
    ``[a, b].index``): a builtin's method, which the pages leave out; '' otherwise."""
    if type(func) is not ast.Attribute:
        return ""
    value = func.value
    if type(value) is ast.Constant:
        kind = type(value.value).__name__ if type(value.value) in (str, bytes) else ""
    else:
        kind = _LITERAL_TYPES.get(type(value), "")
    return f"{kind}.{func.attr}" if kind else ""


_EFFECTS = frozenset(rules.PERFORMANCE_CATEGORIES + rules.SECURITY_CATEGORIES)
#: CPython's ``_PY_STACK_USE_GUIDELINE``: a call of this many stack items or more is no
#: method call to its compiler.
_STACK_GUIDE = 30


def imported_names(imports: list) -> frozenset[str]:
    """The names the module's own ``import`` statements bind (not those of a function or a
    class body): the names :func:`call_line` asks about, from the structure's import
    records (:class:`~indexgen.extract.model.ImportRecord`)."""
    return frozenset(i.alias or (i.name if i.name else i.module.partition(".")[0])
                     for i in imports if i.scope in ("module", "type-checking")
                     and i.name != "*")


def call_line(node: ast.Call, imported: frozenset[str]) -> int:
    """The line a call is listed at: the one Python reports for it (tracebacks,
    ``frame.f_lineno``, the profiler's call events), which a reader looks up.

    That is the call's first line, except for what CPython 3.11+ compiles as a method call
    (``LOAD_METHOD``; ``update_start_location_to_match_attr``), which it reports at the line
    of the method's name (``.parse_string(``, the callee's last line): an attribute called
    on anything but a name a module-level ``import`` binds (``np.array(...)`` is no method
    call: that module-level symbol is all the compiler asks), with no ``*args`` or
    ``**kw`` and fewer than 30 stack items (arguments, keywords, and one more when there
    are keywords).  A decorator's application is at the decorator's first line
    (:func:`indexgen.extract.handing.decorated`).  Python 3.11, 3.12 and 3.13 report all
    of these alike (CPython's main branch compiles them so too); 3.10 differs: a method
    call with keywords at its first line, ``module.f(...)`` at ``f``'s line, and every
    decorator's application at the ``def`` line.

    The line is ``node.lineno`` wherever the callee ends on that line (most calls): the
    walk (:func:`indexgen.extract.identifiers.walk`) asks only for the others.
    ``imported``: :func:`imported_names`.
    """
    func = node.func
    if type(func) is not ast.Attribute:
        return node.lineno
    value, args, keywords = func.value, node.args, node.keywords
    if (type(value) is ast.Name and value.id in imported
            or len(args) + len(keywords) + (1 if keywords else 0) >= _STACK_GUIDE
            or any(type(a) is ast.Starred for a in args)
            or any(k.arg is None for k in keywords)):
        return node.lineno
    return func.end_lineno


def accepts(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """What a plain function accepts by position, for the global pass to tell the functions
    a call may reach by how it is called (:meth:`indexgen.analyze.flows.Flows.fitting`):
    ``"least-most"`` (``most`` -1 for ``*args``), then the annotation of its first
    parameter, if it has one."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    least = len(positional) - len(args.defaults)
    most = -1 if args.vararg is not None else len(positional)
    spec = [f"{least}-{most}"]
    if positional and positional[0].annotation is not None:
        spec.append(annotation(positional[0].annotation))
    return spec


def receiver_name(text: str) -> str:
    """The name a call's path starts with (``f`` of ``f().run``, ``a`` of ``a[_].b``, ``g``
    of the reference ``&g`` and of the read ``^g.x``)."""
    head = text.partition(".")[0]
    if head.isidentifier():  # most paths start with a plain name: that is the head
        return head
    head = text.lstrip("&^").split(".", 1)[0]
    if ("(" in head or "[" in head) and not head.startswith("("):
        head = head.split("(", 1)[0].split("[", 1)[0]
    return head


_LINE_TEXT = itemgetter(2, 1)  # a Call's (line, text)
_NAME = re.compile(r"[A-Za-z_]\w*")


def owners(summary: FileSummary) -> list[int]:
    """Index of the innermost definition holding each line (-1 at module level), by line."""
    owner = [-1] * (summary.n_lines + 2)
    defs = summary.definitions
    for i in sorted(range(len(defs)), key=lambda i: (defs[i].lineno, -defs[i].end_lineno)):
        d = defs[i]
        owner[d.lineno: d.end_lineno + 1] = [i] * (d.end_lineno + 1 - d.lineno)
    return owner


def attribute(summary: FileSummary, calls_found: list[tuple[str, int]],
              bindings: list[tuple[str, int]], declared: list[tuple[str, int]],
              shadow: dict[int, frozenset[str]] | None = None,
              rebound: list[tuple[str, int]] = (), lambdas: list[ast.Lambda] = ()
              ) -> dict[int, set[str]]:
    """Fill ``summary.calls`` and every definition's ``effects`` from the walk's records
    (:class:`~indexgen.extract.identifiers.Walked`: its calls, bindings and names declared
    ``global``), and give each of ``summary.by_name`` its definition's anchor (those
    findings are no effects until the global pass has resolved their calls).

    ``shadow``: line -> the ``self``/``cls`` a nested scope binds there as its own
    (:func:`indexgen.extract.shadows.shadowed`), written apart in the calls of that line.
    ``rebound``: ``(name, line)`` of the ``self``/``cls`` a statement assigns
    (:func:`indexgen.extract.shadows.rebound`): in that definition, a local like any other.
    ``lambdas``: the file's lambdas, whose parameters are local over their lines in a class
    body too (:func:`indexgen.extract.lambdas.class_locals`).

    Returns:
        The receivers of the calls on local values (not on an unnamed receiver), by index of
        their definition: the names :mod:`indexgen.extract.bindings` keeps, found here
        where each call's receiver is at hand.
    """
    defs = summary.definitions
    owner = owners(summary)
    top = len(owner) - 1

    def owner_of(line: int) -> int:
        return owner[line] if 0 <= line <= top else -1

    local: dict[int, set[str]] = {}
    in_function = [d.kind != "class" for d in defs]
    for name, line in bindings:  # the most numerous records: owner_of inlined
        i = owner[line] if 0 <= line <= top else -1
        if i >= 0 and in_function[i]:
            names = local.get(i)
            if names is None:
                local[i] = {name}
            else:
                names.add(name)
    for name, line in declared:
        local.get(owner_of(line), set()).discard(name)
    in_class = class_locals(lambdas, owner, {i for i, f in enumerate(in_function) if not f})
    own: dict[int, set[str]] = {}  # definition -> the self/cls it assigns
    for name, line in rebound:
        own.setdefault(owner_of(line), set()).add(name)
    calls = []
    needed: dict[int, set[str]] = {}
    new_call = tuple.__new__  # Call(...) without its Python-level __new__
    for text, line in calls_found:
        i = owner[line] if 0 <= line <= top else -1
        if i < 0:
            if not text.startswith("<" + LOCAL_ONLY):  # no local name at the top level
                calls.append(new_call(Call, ("", text, line, text.startswith("(...)"))))
            continue
        d = defs[i]
        names = local.get(i) if in_function[i] else in_class.get(line)
        if shadow and line in shadow and d.parent and in_function[i]:
            text = renamed(text, shadow[line])  # a nested scope's own self: not the method's
        if text[0] == "<":  # what a call hands its callee: a flow record, never local
            if text[1] == LOCAL_ONLY:  # f()'s count: kept where f is a local name
                if not names or text[2:].partition("\t")[0] not in names:
                    continue
                text = "<" + text[2:]
            calls.append(new_call(Call, (d.anchor, text, line, False)))
            if names:  # the local names it hands on: what they are is needed
                inner = names.intersection(_NAME.findall(text.partition("\t")[2]))
                if inner:
                    needed.setdefault(i, set()).update(inner)
            continue
        if not names:  # no local name in this definition: no call on a local value
            calls.append(new_call(Call, (d.anchor, text, line, False)))
            continue
        head = text.partition(".")[0]
        if not head.isidentifier():  # receiver_name's first case, without its call
            head = receiver_name(text)
        if head == "(...)":
            is_local = True
        elif (head in names or head[-1] == MARK) and not (
                head in ("self", "cls") and d.parent and head not in own.get(i, ())):
            is_local = True
            if text[0] != "(":
                needed.setdefault(i, set()).add(head)
        else:
            is_local = False
        if "(" in text and text[0] != "(":  # next(iter([a, x])).run: x
            inner = names.intersection(_NAME.findall(text))
            if inner:
                needed.setdefault(i, set()).update(inner)
        calls.append(new_call(Call, (d.anchor, text, line, is_local)))
    calls.sort(key=_LINE_TEXT)
    summary.calls = calls
    by_name = {(line, text) for _a, line, text, _c in summary.by_name}
    summary.by_name = [(defs[owner_of(line)].anchor if owner_of(line) >= 0 else "", line,
                        text, category) for _a, line, text, category in summary.by_name]
    effects: dict[int, set[str]] = {}
    for finding in summary.findings:
        if finding.category in _EFFECTS and (finding.lineno, finding.text) not in by_name:
            i = owner_of(finding.lineno)
            if i >= 0:
                effects.setdefault(i, set()).add(finding.category)
    for i, found in effects.items():
        defs[i].effects = sorted(found)
    return needed
