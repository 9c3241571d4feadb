"""The build's per-file work: extract one file; render and emit the two pages of one file.

:class:`~indexgen.team.Team` runs these in its worker processes (or in the calling process);
each works on one file and shares nothing with the others but the :class:`RenderSetup`.
"""

from __future__ import annotations

import posixpath
from pathlib import Path
from typing import NamedTuple

from indexgen import manifest as mf
from indexgen import pageio
from indexgen.context import FileContext
from indexgen.discover import SourceFile
from indexgen.errors import IndexgenError
from indexgen.extract import extract_file
from indexgen.layout import Layout
from indexgen.model import STATUS_OK, STATUS_SYNTAX_ERROR, STATUS_TIMEOUT, FileSummary
from indexgen.page import Page
from indexgen.render import render_docs, source_listing
from indexgen.render_keywords import identifier_index, render_keywords
from indexgen.source import decode_source

#: How one import of a file is shown: (category, target file key, anchor), as the global pass
#: decided (:meth:`indexgen.analyze.Project.category` and ``import_link``).
ImportLink = tuple[str, str, str]


class RenderSetup(NamedTuple):
    """What every render of a build shares.

    Attributes:
        layout: Page paths of the build.
        tests_label: How the configured test folders are named on pages.
        out: Output directory.
        write: Whether pages are written (build) or only compared (check).
    """

    layout: Layout
    tests_label: str
    out: Path
    write: bool


class RenderInput(NamedTuple):
    """What the global pass gives the render of one file.

    Attributes:
        imports: How each import of the file is shown, in the summary's import order.
        ctx: The file's context.
        encoded: Its compact summary as the manifest stores it (part of the context hash);
            None to encode the compact summary of the full one being rendered.
    """

    imports: list[ImportLink]
    ctx: FileContext
    encoded: dict | None = None


def extract(src: SourceFile, max_bytes: int, time_budget: float) -> FileSummary:
    """The full summary of one source file (see :func:`indexgen.extract.extract_file`)."""
    return extract_file(src.path, src.root, src.relpath, src.module, max_bytes, time_budget)


class Prepared(NamedTuple):
    """The parts of a file's render that its context does not change (see :func:`prepare`).

    Attributes:
        listing: Lines of the source listing; None when the source is not embedded.
        identifier_lines: Lines of the identifier index of the keyword page.
        encoded: The compact summary as the manifest stores it.
        as_text: ``encoded`` as the manifest writes it (:func:`indexgen.manifest.summary_json`).
    """

    listing: list[str] | None
    identifier_lines: list[str]
    encoded: dict
    as_text: str


def prepare(summary: FileSummary, compact: FileSummary, setup: RenderSetup, path: Path
            ) -> Prepared:
    """Make the context-free parts of a file's render (a worker does it while it waits for the
    global pass).

    Args:
        summary: The file's full summary.
        compact: Its compact summary (:func:`indexgen.analyze.compact`).
        setup: What every render shares.
        path: The source file, read again for the source listing.

    Raises:
        IndexgenError: The source changed since it was extracted.
    """
    listing = None
    if summary.status in (STATUS_OK, STATUS_SYNTAX_ERROR, STATUS_TIMEOUT):
        data = path.read_bytes()
        if pageio.sha(data) != summary.sha256:
            raise IndexgenError(f"{path} changed during the build; run it again")
        listing = source_listing(decode_source(data)[0])
    docs = posixpath.basename(setup.layout.docs_page(summary.key))
    encoded = mf.encode_summary(compact)
    return Prepared(listing, identifier_index(summary, docs), encoded, mf.summary_json(encoded))


def render(summary: FileSummary, compact: FileSummary, job: RenderInput, setup: RenderSetup,
           path: Path, prepared: Prepared | None = None
           ) -> tuple[str, list[tuple[str, str, str]], str | None]:
    """Render and emit both pages of one file.

    Args:
        summary: The file's full summary (its imports are given their links here).
        compact: Its compact summary (:func:`indexgen.analyze.compact`), encoded for the
            context hash when ``job.encoded`` is None.
        job: Imports, context and encoded summary from the global pass.
        setup: What every render shares.
        path: The source file, read again for the source listing.
        prepared: Its :func:`prepare` parts when made ahead (made here otherwise).

    Returns:
        The context hash (for the manifest), ``(page, sha, status)`` for each page and, when
        ``job.encoded`` is None, the encoded compact summary as the manifest writes it
        (:func:`indexgen.manifest.summary_json`), else None.

    Raises:
        IndexgenError: The source changed since it was extracted.
    """
    if prepared is None:
        prepared = prepare(summary, compact, setup, path)
    if job.encoded is None:
        encoded, as_text = prepared.encoded, prepared.as_text
    else:
        encoded, as_text = job.encoded, None
    ctx_hash = mf.context_hash(job.ctx, encoded)
    for imp, (category, target, anchor) in zip(summary.imports, job.imports):
        imp.category, imp.target, imp.anchor = category, target, anchor
    layout, tests_label = setup.layout, setup.tests_label
    shared = Page(summary, job.ctx, layout, tests_label)
    shared.listing, shared.identifier_lines = prepared.listing, prepared.identifier_lines
    results = []
    for page, text in (
        (layout.kw_page(summary.key),
         render_keywords(summary, job.ctx, layout, tests_label, shared)),
        (layout.docs_page(summary.key),
         render_docs(summary, job.ctx, layout, tests_label, None, shared)),
    ):
        data = text.encode()
        results.append((page, pageio.sha(data), pageio.emit(setup.out, page, data,
                                                             setup.write)))
    return ctx_hash, results, as_text
