"""Plain data passed between the stages of indexgen.

Extraction (:mod:`indexgen.extract.pipeline`) turns one source file into a :class:`FileSummary`; the
global pass (:mod:`indexgen.analyze.project`) turns all summaries into the records of
:mod:`indexgen.analyze.context`; the renderers only read these objects.  Everything here is a
picklable dataclass without behaviour, so workers can ship them between processes and tests can
build them by hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import NamedTuple

from indexgen.extract.docstrings import DocSection, first_paragraph

#: Status values of :attr:`FileSummary.status`.
STATUS_OK = "ok"
STATUS_EMPTY = "empty"
STATUS_TOO_LARGE = "too-large"
STATUS_UNDECODABLE = "not-decodable"
STATUS_SYNTAX_ERROR = "syntax-error"
STATUS_UNREADABLE = "unreadable"
STATUS_TIMEOUT = "timed-out"
#: Statuses of files whose analysis failed (an empty file is not a failure: it has nothing
#: to analyze).
FAILED_STATUSES = (STATUS_TOO_LARGE, STATUS_UNDECODABLE, STATUS_SYNTAX_ERROR, STATUS_UNREADABLE,
                   STATUS_TIMEOUT)


@dataclass
class Definition:
    """A class, function or method defined in a file.

    Attributes:
        kind: ``class``, ``function``, ``method``, ``property``, ``classmethod`` or
            ``staticmethod``.
        qualname: Dotted name inside the module, e.g. ``Outer.Inner.method``.
        lineno: Line of the ``def``/``class`` keyword (not of the first decorator).
        end_lineno: Last line of the definition.
        start_lineno: First line including decorators.
        signature: Rendered signature (``name(a: int) -> None``) or, for classes, the bases.
        summary: First paragraph of the docstring, whitespace collapsed; empty if none.
        bases: Base class expressions as written (classes only).
        decorators: Decorator expressions as written, without ``@``.
        labels: Sorted labels from decorators and ``async`` (``property``, ``dataclass``,
            ``abstractmethod``, ``cached``, ``async`` ...).
        anchor: Unique HTML id of this definition in the analysis page (``sym-<qualname>``).
        parent: Qualname of the enclosing class, empty at module level.
        attributes: For classes, (``name: annotation``, line) of the class and instance
            attributes (``x: int = 0`` in the body, ``self.x = ...`` in
            ``__init__``), in line order.
        doc: The whole docstring, parsed (see :mod:`indexgen.extract.docstrings`).
        overload: Whether this is a ``typing.overload`` stub (typing only, never called).
        effects: Finding categories of the calls in its body (``collective``, ``file``...),
            sorted; the global pass follows calls to add what the callees do.
        type_refs: Dotted names used in its parameter and return annotations.
        returns: Its return annotation as written ('' if none), for the global pass to know
            what calling it gives.
        names: For functions, the names bound in the body that calls on them need (their
            receivers, and what those are bound to): name -> *sources*, each ``:`` and an
            annotation or ``=`` and a path (:func:`indexgen.extract.syntax.path`) of the
            value, see :mod:`indexgen.extract.bindings`.
        members: For classes, the attributes their instances get: name -> (anchor of the
            method that assigns it, '' for the class body; source).
    """

    kind: str
    qualname: str
    lineno: int
    end_lineno: int
    start_lineno: int
    signature: str = ""
    summary: str = ""
    bases: list[str] = field(default_factory=list)
    decorators: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    anchor: str = ""
    parent: str = ""
    attributes: list[tuple[str, int]] = field(default_factory=list)
    doc: list[DocSection] = field(default_factory=list)
    overload: bool = False
    effects: list[str] = field(default_factory=list)
    type_refs: list[str] = field(default_factory=list)
    returns: str = ""
    names: dict[str, list[str]] = field(default_factory=dict)
    members: dict[str, list[tuple[str, str]]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The last component of :attr:`qualname`."""
        return self.qualname.rpartition(".")[2]


@dataclass
class ModuleAttribute:
    """A module-level assignment (constants are the UPPER_CASE ones).

    Attributes:
        name: Assigned name.
        lineno: Line of the assignment.
        annotation: Annotation as written, empty if none.
        value: Shortened value expression, empty if unknown.
        constant: Whether the name is UPPER_CASE.
        anchor: Unique HTML id in the analysis page (``sym-<name>``).
        alias_of: The dotted name assigned when the value is a plain name or attribute chain
            (``run = _impl.run``), else empty: calls through the alias resolve to its target.
        source: What its type is inferred from: ``:`` and the annotation, else ``=`` and the
            path of the value (``=Recorder()``); '' when neither says anything.
    """

    name: str
    lineno: int
    annotation: str = ""
    value: str = ""
    constant: bool = False
    anchor: str = ""
    alias_of: str = ""
    source: str = ""


@dataclass
class ImportRecord:
    """One imported name (or module) as found in the code.

    Attributes:
        written: The module as written (``os.path``, ``._common``, ``.``).
        module: The absolute module the statement reads from (relative imports resolved).
        name: The imported name for ``from`` imports, empty for ``import x``.
        alias: The ``as`` name, empty if none.
        lineno: Line of the imported name (in ``from x import (a,\n b)`` each name has its
            own).
        scope: ``module``, ``type-checking`` (under ``if TYPE_CHECKING``) or ``function``
            (a lazy import inside a function body).
        category: ``stdlib``, ``third-party`` or ``project``; set by the global pass.
        target: Key of the project file whose module or definition this import binds,
            following re-exports; set by the global pass.
        anchor: Anchor of that definition ('' for a module); set by the global pass.
        statement: First line of the import statement (where a reader looks it up).
    """

    written: str
    module: str
    name: str
    alias: str
    lineno: int
    scope: str = "module"
    category: str = ""
    target: str = ""
    anchor: str = ""
    statement: int = 0

    @property
    def bound_name(self) -> str:
        """The name this import binds in the importing module."""
        if self.alias:
            return self.alias
        if self.name:
            return self.name
        return self.written.split(".")[0]


class Call(NamedTuple):
    """One call in the code.

    Attributes:
        caller: Anchor of the innermost definition whose body holds the call ('' at module
            level; calls in nested functions belong to the enclosing definition).
        text: The called expression as written (``C.run_all_gather``, ``self._unshard``,
            ``super().reset``); a receiver that is not a name shows as ``(...)``.
        line: Line of the call.
        local: Whether the first name is bound inside the caller (a parameter or local
            variable other than ``self``/``cls``), so the callee cannot be known statically.
    """

    caller: str
    text: str
    line: int
    local: bool = False


@dataclass
class Finding:
    """A line worth pointing out: a collective, a stream operation, an ``eval``...

    Attributes:
        category: What kind of thing was found (see :mod:`indexgen.extract.rules`).
        lineno: Line of the finding.
        text: The expression as written (e.g. ``dist.all_reduce``).
        note: Extra precision (e.g. ``without weights_only``), may be empty.
    """

    category: str
    lineno: int
    text: str
    note: str = ""


@dataclass
class FileSummary:
    """Everything extracted from one source file.

    Attributes:
        root: Name of the source root the file belongs to (its folder name).
        relpath: POSIX path relative to the root, e.g. ``pkg/sub/name.py``.
        module: Dotted module name (``pkg.sub.name``; ``pkg.sub`` for ``__init__.py``).
        is_package: Whether the file is an ``__init__.py``.
        sha256: Hex digest of the raw bytes.
        size: Size in bytes.
        status: One of the ``STATUS_*`` constants.
        error: Human readable reason when status is not ``ok``.
        encoding: Source encoding used to decode the file.
        n_lines: Number of lines.
        docstring: Module docstring (cleaned), empty if none.
        definitions: Classes, functions and methods in source order.
        attributes: Module-level assignments in source order.
        imports: Every import, in source order.
        exports: Names listed in ``__all__``, or None if there is no static ``__all__``.
        type_checking: Module-level names bound only under ``if TYPE_CHECKING:``, sorted
            (:func:`indexgen.extract.alternatives.checking_only`): importing them fails at
            run time.
        all_computed: Whether the module sets ``__all__`` to a value not read statically
            (``exports`` is then None): what a ``*`` import of it brings is not known.
        served: Names the module-level ``__getattr__`` answers for, sorted
            (:func:`indexgen.extract.served.served_names`).
        checking_spans: (first, last) lines of the module-level ``if TYPE_CHECKING:``
            bodies, in no set order: what never runs.
        identifiers: Identifier -> (first line, number of uses), from the syntax tree.
        findings: Performance-, safety- and pattern-related findings, in line order.
        doc: The module docstring, parsed.
        by_name: The findings of calls a rule knows by their name alone (pathlib's
            ``write_text`` on any object, :attr:`~indexgen.extract.rules.CallRule.by_name`),
            for the global pass to keep those the call graph does not resolve to project
            definitions only: (anchor of the definition making the call, '' at module level;
            line; the call as written; category).  ``effects`` leave them out.
        calls: Every call to a name or attribute chain, in line order.
        references: Names the docstrings cross-reference (``:class:`X```) and annotations
            use, for the global pass to link, sorted.
        main_line: Line of a top-level ``if __name__ == "__main__":``, 0 if none.
        cli_options: Option strings of the ``add_argument`` calls, in order (the command line
            of a ``__main__`` module).
        literals: Test files only: (string, line) of the strings that may name code to run --
            ``"pkg.module:function"`` targets of a test harness, their ``"pkg.module:"``
            prefixes, bare names -- and ``"import:pkg.module"`` for each module an
            ``importlib.import_module`` call may import (a literal, or the strings of a
            module-level constant).
        module_puts: Name of a module-level table -> what the module's top level puts
            into it (``~{v}``, ``~[v]``: :mod:`indexgen.extract.module_puts`).
        import_choices: Name -> (line, condition) of each import a condition picks for it.
    """

    root: str
    relpath: str
    module: str
    is_package: bool
    sha256: str
    size: int
    status: str = STATUS_OK
    error: str = ""
    encoding: str = "utf-8"
    n_lines: int = 0
    docstring: str = ""
    definitions: list[Definition] = field(default_factory=list)
    attributes: list[ModuleAttribute] = field(default_factory=list)
    imports: list[ImportRecord] = field(default_factory=list)
    exports: list[str] | None = None
    type_checking: list[str] = field(default_factory=list)
    served: list[str] = field(default_factory=list)
    all_computed: bool = False
    checking_spans: list[tuple[int, int]] = field(default_factory=list)
    identifiers: dict[str, tuple[int, int]] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    doc: list[DocSection] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    references: list[str] = field(default_factory=list)
    main_line: int = 0
    cli_options: list[str] = field(default_factory=list)
    literals: list[tuple[str, int]] = field(default_factory=list)
    by_name: list[tuple[str, int, str, str]] = field(default_factory=list)
    module_puts: dict[str, list[str]] = field(default_factory=dict)
    import_choices: dict[str, list[tuple[int, str]]] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """Root-qualified path, unique across roots (``src/pkg/name.py``)."""
        return f"{self.root}/{self.relpath}"

    @property
    def summary_line(self) -> str:
        """First paragraph of the module docstring, or why the file was not analyzed."""
        if self.status != STATUS_OK:
            return f"not analyzed: {self.error}"
        return first_paragraph(self.docstring)

    def __reduce__(self) -> tuple:
        """Pickle the calls as plain tuples: workers send full summaries to the calling
        process, and a named tuple costs a call to pickle and to unpickle it again."""
        state = dict(vars(self))
        state["calls"] = list(map(tuple, self.calls))
        return _unpickle_summary, (state,)


_as_call = partial(tuple.__new__, Call)


def _unpickle_summary(state: dict) -> FileSummary:
    """A :class:`FileSummary` from what its ``__reduce__`` pickled, calls made again."""
    state["calls"] = list(map(_as_call, state["calls"]))
    summary = FileSummary.__new__(FileSummary)
    summary.__dict__.update(state)
    return summary


def definition_anchors(definitions: list[Definition]) -> dict[str, str]:
    """Qualname -> the anchor a reference to it lands on.

    That is the first definition of the name that is not a ``typing.overload`` stub (the
    implementation, or the getter of a property), else the first stub.
    """
    anchors: dict[str, str] = {}
    stub_only: set[str] = set()
    for d in definitions:
        if d.qualname not in anchors or (d.qualname in stub_only and not d.overload):
            anchors[d.qualname] = d.anchor
            if d.overload:
                stub_only.add(d.qualname)
            else:
                stub_only.discard(d.qualname)
    return anchors
