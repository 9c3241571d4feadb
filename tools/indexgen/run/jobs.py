"""The build's per-file work: extract one file; render and emit the two pages of one file.

:class:`~indexgen.run.team.Team` runs these in its worker processes (or in the calling process);
each works on one file and shares nothing with the others but the :class:`RenderSetup`.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import NamedTuple

from indexgen.analyze.context import FileContext
from indexgen.extract.discover import SourceFile
from indexgen.extract.enrich import Later, finish
from indexgen.extract.model import STATUS_OK, STATUS_SYNTAX_ERROR, STATUS_TIMEOUT, FileSummary
from indexgen.extract.pipeline import read_and_extract
from indexgen.extract.source import decode_source
from indexgen.layout import Layout
from indexgen.render.docs import render_docs, sections_ahead, source_listing
from indexgen.render.entries import heads_ahead
from indexgen.render.keywords import identifier_index, keywords_head, render_keywords
from indexgen.render.page import Page, docs_ahead
from indexgen.run import manifest as mf
from indexgen.run import pageio

#: How one import of a file is shown: (category, target file key, anchor), as the global pass
#: decided (:meth:`indexgen.analyze.project.Project.category` and ``import_link``).
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
    """

    imports: list[ImportLink]
    ctx: FileContext

    def pack(self) -> bytes:
        """The input as it travels to the worker that renders the file: pickled once, by
        the process that made the context (:func:`indexgen.analyze.assemble.contexts`),
        and read by :func:`render`."""
        return pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL)


def extract(src: SourceFile, max_bytes: int, time_budget: float, later: Later | None = None
            ) -> tuple[FileSummary, bytes | None]:
    """The full summary of one source file and the bytes it was made from (see
    :func:`indexgen.extract.pipeline.read_and_extract`; ``later``: where to leave its
    signatures and parsed docstrings for :func:`prepare`)."""
    return read_and_extract(src.path, src.root, src.relpath, src.module, max_bytes,
                            time_budget, later)


def prepare(summary: FileSummary, setup: RenderSetup, data: bytes | None,
            later: Later | None = None) -> Page:
    """Make the context-free parts of a file's render (a worker does it while it waits for the
    global pass).

    Args:
        summary: The file's full summary.
        setup: What every render shares.
        data: The bytes the summary was made from (:func:`extract`), for the source listing.
        later: What its extraction left for later (:func:`extract`), made first.

    Returns:
        The file's :class:`~indexgen.render.page.Page`, with an empty context and the parts
        made ahead: the source listing, the identifier index, the docstrings, the entries'
        heads, the keyword page up to its imports and the analysis page's context-free
        sections.  :func:`render` gives it the file's context and renders the rest.
    """
    if later:
        finish(summary, later)
    page = Page(summary, FileContext(), setup.layout, setup.tests_label)  # no context yet
    if data is not None and summary.status in (STATUS_OK, STATUS_SYNTAX_ERROR, STATUS_TIMEOUT):
        page.listing = source_listing(decode_source(data)[0])
    page.identifier_lines = identifier_index(summary, page.docs_name)
    page.docs_ahead = docs_ahead(page)
    page.heads_ahead = heads_ahead(page)
    page.keywords_head = keywords_head(page)
    page.sections_ahead = sections_ahead(page)
    return page


def render(summary: FileSummary, packed: bytes, setup: RenderSetup, data: bytes | None,
           prepared: Page | None = None, later: Later | None = None,
           summary_text: str | None = None) -> tuple[str, list[tuple[str, str, str]]]:
    """Render and emit both pages of one file.

    Args:
        summary: The file's full summary (its imports are given their links here).
        packed: Its imports and context from the global pass (:meth:`RenderInput.pack`).
        setup: What every render shares.
        data: The bytes the summary was made from, for :func:`prepare` (unused when
            ``prepared`` is given).
        prepared: Its :func:`prepare` page when made ahead (made here otherwise).
        later: What its extraction left for :func:`prepare` (when not prepared ahead).
        summary_text: Its compact summary as the manifest writes it, when the process
            that made it kept it (made again from ``summary`` otherwise).

    Returns:
        The context's hash for the manifest (:func:`indexgen.run.manifest.context_hash`:
        made here, in parallel, for the files a build extracted, whose pages it renders
        whatever their context), and ``(page, sha, status)`` for each page.
    """
    page = prepared if prepared is not None else prepare(summary, setup, data, later)
    job: RenderInput = pickle.loads(packed)
    if summary_text is None:
        summary_text = mf.summary_json(mf.encode_compact(summary))
    ctx_hash = mf.context_hash(job.ctx, summary_text)
    for imp, (category, target, anchor) in zip(summary.imports, job.imports):
        imp.category, imp.target, imp.anchor = category, target, anchor
    page.set_context(job.ctx)
    layout, tests_label = setup.layout, setup.tests_label
    results = []
    for path, text in (
        (layout.kw_page(summary.key),
         render_keywords(summary, job.ctx, layout, tests_label, page)),
        (layout.docs_page(summary.key),
         render_docs(summary, job.ctx, layout, tests_label, None, page)),
    ):
        data = text.encode()
        results.append((path, pageio.sha(data), pageio.emit(setup.out, path, data,
                                                             setup.write)))
    return ctx_hash, results
