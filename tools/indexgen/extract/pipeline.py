"""Stage 1: turn one source file into a :class:`~indexgen.extract.model.FileSummary`.

The pipeline, one module per step:

1. :mod:`indexgen.extract.source` decodes the bytes and parses them once with
   :func:`ast.parse` (or records why it cannot: empty, too large, undecodable, syntax error);
2. :mod:`indexgen.extract.structure` records definitions (redefinitions included), module
   attributes and imports with their scope;
3. :mod:`indexgen.extract.identifiers` walks the whole tree once for identifiers, calls and
   pattern findings, classifies the calls with :mod:`indexgen.extract.rules`, gives each call
   its calling definition and tells calls on local values apart;
   :mod:`indexgen.extract.bindings` records what the names those calls need are bound to;
4. :mod:`indexgen.extract.enrich` adds signatures, decorator labels, ``__all__`` and class
   attributes from the same tree, and parses docstrings with griffe's parsers (a build's
   worker leaves the signatures and docstrings, which only pages read, for
   :func:`~indexgen.extract.enrich.finish` to make while it waits for the global pass).

The analysis runs within the file's time budget and with the cyclic collector paused
(:mod:`indexgen.extract.runtime`).

Nothing is imported or executed.
"""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

from indexgen.extract import runtime
from indexgen.extract.bindings import bind
from indexgen.extract.calls import attribute
from indexgen.extract.class_scope import class_scoped
from indexgen.extract.enrich import Later, enrich
from indexgen.extract.identifiers import walk
from indexgen.extract.model import STATUS_TIMEOUT, STATUS_UNREADABLE, FileSummary
from indexgen.extract.module_puts import module_puts
from indexgen.extract.rules import classify_calls
from indexgen.extract.runtime import collector_paused
from indexgen.extract.shadows import own_parameters, rebound, shadowed
from indexgen.extract.source import parse_source
from indexgen.extract.structure import FUNCS, Structure


def extract_file(
    path: Path, root: str, relpath: str, module: str, max_bytes: int, time_budget: float = 0
) -> FileSummary:
    """Read and extract one file; never raises for bad content.

    Args:
        path: File to read.
        root: Source root name.
        relpath: POSIX path relative to the root.
        module: Dotted module name (see :func:`indexgen.extract.source.module_name`).
        max_bytes: Files larger than this are not analyzed (status ``too-large``).
        time_budget: Seconds the analysis may take before it is abandoned (status
            ``timed-out``); 0 for no limit.  See :mod:`indexgen.extract.runtime` for where it applies.

    Returns:
        The summary; its ``status`` and ``error`` say why analysis stopped early, if it did.
    """
    return read_and_extract(path, root, relpath, module, max_bytes, time_budget)[0]


def read_and_extract(
    path: Path, root: str, relpath: str, module: str, max_bytes: int, time_budget: float = 0,
    later: Later | None = None,
) -> tuple[FileSummary, bytes | None]:
    """:func:`extract_file`, and the bytes it analyzed (None when the file cannot be read):
    a page shows its source listing from these bytes, never from a second read that could
    see a newer file than the one analyzed.  ``later``: see :func:`extract_source`."""
    is_package = relpath.endswith("__init__.py")
    try:
        data = path.read_bytes()
    except OSError as exc:
        return FileSummary(root, relpath, module, is_package, "", 0, STATUS_UNREADABLE,
                           f"cannot be read: {exc.strerror or exc}"), None
    return extract_source(data, root, relpath, module, max_bytes, time_budget, later), data


def extract_source(
    data: bytes, root: str, relpath: str, module: str, max_bytes: int, time_budget: float = 0,
    later: Later | None = None,
) -> FileSummary:
    """Extract a file from its bytes (see :func:`extract_file`).

    ``later``: a list to leave the signatures and parsed docstrings in, for
    :func:`indexgen.extract.enrich.finish` to make (None: made now); see
    :func:`indexgen.extract.enrich.enrich`.
    """
    digest = hashlib.sha256(data).hexdigest()
    summary = FileSummary(root, relpath, module, relpath.endswith("__init__.py"), digest,
                          len(data))
    try:
        # A syntax tree is acyclic and freed by reference counting; collector passes over it
        # would make the analysis of a large file grow faster than its size.
        with runtime.time_budget(time_budget), collector_paused():
            _analyze(summary, data, max_bytes, later)
    except runtime.OverBudget:
        if later is not None:
            later.clear()
        summary = FileSummary(root, relpath, module, summary.is_package, digest, len(data),
                              STATUS_TIMEOUT, f"took longer than {time_budget:g} s")
        summary.n_lines = data.count(b"\n") + (not data.endswith(b"\n"))
    return summary


def _analyze(summary: FileSummary, data: bytes, max_bytes: int, later: Later | None) -> None:
    parsed = parse_source(summary, data, max_bytes)
    if parsed is None:
        return
    tree, text = parsed
    summary.docstring = ast.get_docstring(tree) or ""
    structure = Structure(summary, text)
    structure.scan(tree)
    walked = walk(tree, structure)
    classify_calls(summary, walked.candidates)
    shadow = shadowed(own_parameters(structure.defs),
                      [n for n in walked.binders if type(n) in FUNCS], walked.bindings)
    # the self and cls a method assigns itself (none where the file assigns no such name)
    own = rebound(walked.binders) if walked.assigns_self else []
    receivers = attribute(summary, walked.calls, walked.bindings, walked.declared_global,
                          shadow, own, [n for n in walked.binders if type(n) is ast.Lambda])
    class_scoped(summary, tree)  # a class body's calls of the names it bound itself
    bind(summary, structure, walked.binders, receivers, own, walked.path_tests,
         walked.declared_global)
    enrich(summary, structure, tree, text, later)
    summary.module_puts = module_puts(tree)
    summary.findings.sort(key=lambda f: (f.lineno, f.category, f.text))

