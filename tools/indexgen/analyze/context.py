"""What the global pass produces: plain records of how files relate to each other.

:class:`FileContext` holds everything a file's pages say that the file itself does not
(importers, tests, call edges in both directions, links for cross-references, what its calls
do through other project functions); :class:`FolderInfo` describes a folder.  Like
:mod:`indexgen.extract.model`, these are picklable dataclasses and named tuples without behaviour.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import NamedTuple


class CallEdge(NamedTuple):
    """Where one call leads.

    Attributes:
        line: Line of the call.
        text: The called expression as written.
        kind: ``project`` (a definition of this build), ``external`` (a name imported from
            outside it), ``unresolved`` (not knowable statically), ``read`` (a property of
            this build read on the way to the callee), ``callback`` (a project function
            handed to the call, to be called later), ``override`` (a subclass's method the
            call may run instead) or ``closure`` (a function nested in a definition, which
            its page shows: the label is ``outer.<locals>.inner``).
        key: For ``project``, ``read`` and ``callback``, the file key of the callee, else ''.
        anchor: For those, the callee's anchor, else ''.
        label: For those, the callee's qualname; for ``external``, its full dotted name; for
            ``unresolved``, why.
    """

    line: int
    text: str
    kind: str
    key: str = ""
    anchor: str = ""
    label: str = ""


class CallerRef(NamedTuple):
    """One call site that reaches a definition.

    Attributes:
        key: File key of the caller.
        caller: Qualname of the calling definition ('' for module level).
        anchor: The calling definition's anchor ('' for module level).
        line: Line of the call in the caller's file.
        nested: The name of the function nested in the callee that the call runs (a
            closure the callee made: the edge's kind is ``closure``), '' when the call runs
            the callee itself.
    """

    key: str
    caller: str
    anchor: str
    line: int
    nested: str = ""


class IndirectFinding(NamedTuple):
    """A call that performs an operation of interest through a project function.

    Attributes:
        category: Finding category (see :mod:`indexgen.extract.rules`).
        line: Line of the call in this file.
        text: The called expression as written.
        caller: Qualname of the calling definition ('' for module level).
        key: File key of the project function called.
        anchor: Its anchor.
        label: Its qualname.
    """

    category: str
    line: int
    text: str
    caller: str
    key: str
    anchor: str
    label: str


@dataclass
class TestReference:
    """A test file that imports from a documented module (through re-exports too).

    Attributes:
        path: Test file path relative to the project directory (POSIX).
        lines: Lines of the import statements.
        names: Names of the module that the test file uses, sorted.
    """

    path: str
    lines: list[int]
    names: list[str]


@dataclass
class FileContext:
    """What the global pass knows about a file that the file itself does not say.

    Attributes:
        imported_by: Keys of project files that import from this module (through re-exports
            too), sorted.
        imported_names: Importing file key -> names it imports from this module.
        targets: Module name -> key of the project file, for every project import.
        tests: Test files that import this module.
        base_links: Base class expression -> (file key, anchor) when the base is a project class.
        lines: File key -> one-line summary, for every file named in this context.
        calls: Caller anchor ('' for module level) -> where its calls lead, in line order
            (calls on local variables are not here: the file's own summary lists them).
        unresolved: Caller anchor -> why -> the lines of its calls not resolved statically,
            sorted, one per call (calls on local variables, again, are the page's own).
        called_by: Anchor of a definition of this file -> the call sites that reach it from
            anywhere in the build, sorted: the inverse of the ``project`` edges of ``calls``.
        read_by: Anchor of a property of this file -> where it is read, sorted: the inverse
            of the ``read`` edges.
        passed_by: Anchor of a function of this file -> where it is handed to a call as a
            callback (a hook, ``partial``), sorted: the inverse of the ``callback`` edges.
        links: Cross-reference target or annotation name of this file -> (file key, anchor)
            of its definition ('' anchor for a module).
        star: Name -> module, for the names its ``from m import *`` statements bring from
            the build's modules (:func:`indexgen.analyze.exports.star_names`).
        indirect: Calls of this file whose callee performs an operation of interest.
        test_calls: Test file -> qualnames of this file's definitions its calls reach
            (directly or through other project functions), for tests that do not import
            this module themselves.
        dynamic_tests: Test files that import modules dynamically (``importlib``,
            ``__import__``), which static analysis cannot follow.
        conditions: ``"file key#anchor"`` of a callee in ``calls`` that is one of several
            definitions a condition picks at import time -> that condition ('' for the
            one made unconditionally), see :mod:`indexgen.extract.alternatives`.
        unfounded: ``(line, call as written)`` of the file's findings made by name alone
            that are calls of the project's own definitions
            (:func:`indexgen.analyze.walks.projects_own`): left off its pages, sorted.
    """

    imported_by: list[str] = field(default_factory=list)
    imported_names: dict[str, list[str]] = field(default_factory=dict)
    targets: dict[str, str] = field(default_factory=dict)
    tests: list[TestReference] = field(default_factory=list)
    base_links: dict[str, tuple[str, str]] = field(default_factory=dict)
    lines: dict[str, str] = field(default_factory=dict)
    calls: dict[str, list[CallEdge]] = field(default_factory=dict)
    unresolved: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    called_by: dict[str, list[CallerRef]] = field(default_factory=dict)
    read_by: dict[str, list[CallerRef]] = field(default_factory=dict)
    passed_by: dict[str, list[CallerRef]] = field(default_factory=dict)
    links: dict[str, tuple[str, str]] = field(default_factory=dict)
    star: dict[str, str] = field(default_factory=dict)
    indirect: list[IndirectFinding] = field(default_factory=list)
    test_calls: dict[str, list[str]] = field(default_factory=dict)
    dynamic_tests: list[str] = field(default_factory=list)
    conditions: dict[str, str] = field(default_factory=dict)
    unfounded: list[tuple[int, str]] = field(default_factory=list)

    def __reduce__(self) -> tuple:
        """Pickle the call edges as plain tuples: a build sends every context to a worker,
        and pickling half a million named tuples one Python call each was a third of a
        second of the calling process (see :func:`_unpickle_context`)."""
        state = dict(vars(self))
        state["calls"] = {k: list(map(tuple, v)) for k, v in self.calls.items()}
        state["called_by"] = {k: list(map(tuple, v)) for k, v in self.called_by.items()}
        state["read_by"] = {k: list(map(tuple, v)) for k, v in self.read_by.items()}
        state["passed_by"] = {k: list(map(tuple, v)) for k, v in self.passed_by.items()}
        state["indirect"] = list(map(tuple, self.indirect))
        return _unpickle_context, (state,)


_as_edge = partial(tuple.__new__, CallEdge)
#: ``make_edge((line, text, kind, key, anchor, label))``: a CallEdge without its Python-level
#: ``__new__`` frame (as resolve's ``_target``), for the records made by the hundred thousand.
make_edge = _as_edge
_as_caller = partial(tuple.__new__, CallerRef)
_as_indirect = partial(tuple.__new__, IndirectFinding)


def _unpickle_context(state: dict) -> FileContext:
    """A :class:`FileContext` from what its ``__reduce__`` pickled, named tuples made again."""
    state["calls"] = {k: list(map(_as_edge, v)) for k, v in state["calls"].items()}
    state["called_by"] = {k: list(map(_as_caller, v)) for k, v in state["called_by"].items()}
    state["read_by"] = {k: list(map(_as_caller, v)) for k, v in state["read_by"].items()}
    state["passed_by"] = {k: list(map(_as_caller, v)) for k, v in state["passed_by"].items()}
    state["indirect"] = list(map(_as_indirect, state["indirect"]))
    ctx = FileContext.__new__(FileContext)
    ctx.__dict__.update(state)
    return ctx


@dataclass
class FolderInfo:
    """A folder of a source root, as shown on its ``index.md`` and ``doc.md``.

    Attributes:
        root: Source root name.
        relpath: POSIX path of the folder relative to the root ('' for the root itself).
        files: Keys of the source files directly in the folder, sorted.
        subfolders: Relative paths of the direct subfolders that hold sources, sorted.
        package: Key of the folder's ``__init__.py``, empty if none.
        edges: (importer key, imported key, line) import edges among the folder's files.
    """

    root: str
    relpath: str
    files: list[str] = field(default_factory=list)
    subfolders: list[str] = field(default_factory=list)
    package: str = ""
    edges: list[tuple[str, str, int]] = field(default_factory=list)
