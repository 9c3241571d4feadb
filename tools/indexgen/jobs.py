"""The build's worker jobs: extract one file, render and emit the pages of one file.

They are module-level functions so that process pools can run them (:mod:`indexgen.parallel`);
each works on one file and shares nothing with the others.
"""

from __future__ import annotations

import pickle

from indexgen import manifest as mf
from indexgen import pageio
from indexgen.analyze import compact
from indexgen.discover import SourceFile
from indexgen.errors import IndexgenError
from indexgen.extract import extract_file
from indexgen.model import STATUS_OK, STATUS_SYNTAX_ERROR, STATUS_TIMEOUT, FileSummary
from indexgen.render import render_docs
from indexgen.render_keywords import render_keywords
from indexgen.source import decode_source


def extract_job(args: tuple[SourceFile, int, float, bool]) -> tuple[FileSummary, object]:
    """``(compact summary, full summary)``; with ``pack``, the full summary comes pickled.

    A worker process returns the full summary as bytes: the parent only keeps it for the
    render worker that needs it, instead of rebuilding millions of objects it never reads.
    """
    src, max_bytes, time_budget, pack = args
    summary = extract_file(src.path, src.root, src.relpath, src.module, max_bytes, time_budget)
    return compact(summary), (pickle.dumps(summary, pickle.HIGHEST_PROTOCOL) if pack
                              else summary)


def render_job(args: tuple) -> tuple[str, list[tuple[str, str, str]]]:
    """Render and emit both pages of one file: its context hash (for the manifest) and
    ``(page, sha, status)`` for each page."""
    summary, imports, ctx, encoded, layout, tests_label, path, out, write = args
    ctx_hash = mf.context_hash(ctx, encoded)
    if isinstance(summary, bytes):
        summary = pickle.loads(summary)
    for imp, (category, target, anchor) in zip(summary.imports, imports):
        imp.category, imp.target, imp.anchor = category, target, anchor
    source = None
    if summary.status in (STATUS_OK, STATUS_SYNTAX_ERROR, STATUS_TIMEOUT):
        data = path.read_bytes()
        if pageio.sha(data) != summary.sha256:
            raise IndexgenError(f"{path} changed during the build; run it again")
        source, _ = decode_source(data)
    results = []
    for page, text in (
        (layout.kw_page(summary.key), render_keywords(summary, ctx, layout, tests_label)),
        (layout.docs_page(summary.key), render_docs(summary, ctx, layout, tests_label, source)),
    ):
        data = text.encode()
        results.append((page, pageio.sha(data), pageio.emit(out, page, data, write)))
    return ctx_hash, results
