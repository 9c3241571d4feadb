"""Stage 4, running a build: incremental writing and checking of the pages of source roots.

:func:`build` writes what is missing or out of date and removes pages of deleted sources;
:func:`check` computes the same plan and only reports it.  Both run the steps of
:class:`~indexgen.run.plan.Plan` (discover, summarize, relate, choose renders, render files and
folders, report, remove orphans).

Only files whose first line is :data:`~indexgen.render.markdown.MARKER` are ever replaced or
removed, and every write is atomic (temporary file + :func:`os.replace`).

The modules of the stage: :mod:`~indexgen.run.config` (settings),
:mod:`~indexgen.run.plan` (the steps), :mod:`~indexgen.run.team` with
:mod:`~indexgen.run.dispatch` and :mod:`~indexgen.run.worker` (worker processes that extract
and render, :mod:`~indexgen.run.jobs` being one file's work), :mod:`~indexgen.run.manifest`
and :mod:`~indexgen.run.statcache` (what the last build did), :mod:`~indexgen.run.pageio`
(pages on disk, the report), :mod:`~indexgen.run.fanout` (work of the global pass in
processes forked once its tables exist), :mod:`~indexgen.run.cli` (the command line) and
:mod:`~indexgen.run.mkdocs_plugin` (the pages built during a site build).
"""

from __future__ import annotations

from indexgen.errors import ConflictError
from indexgen.render.markdown import MARKER
from indexgen.run.config import Config
from indexgen.run.pageio import Report
from indexgen.run.plan import Plan
from indexgen.run.team import Progress

__all__ = ["Progress", "Report", "build", "check"]


def build(config: Config, progress: Progress | None = None) -> Report:
    """Write the pages of ``config`` incrementally.

    Raises:
        IndexgenError: Invalid configuration, unsafe paths, or (after writing everything else)
            :class:`~indexgen.errors.ConflictError` for pages that would overwrite files
            indexgen did not generate.
    """
    report = Plan(config, write=True, progress=progress).run()
    if report.conflicts:
        shown = ", ".join(str(config.out / page) for page in report.conflicts[:5]) + (
            f" and {len(report.conflicts) - 5} more" if len(report.conflicts) > 5 else "")
        raise ConflictError(
            f"refusing to overwrite {len(report.conflicts)} file(s) indexgen did not generate "
            f"(no '{MARKER}' first line): {shown}; move them out of {config.out}, or choose "
            "another output directory (--out, [tool.indexgen] out)")
    return report


def check(config: Config, progress: Progress | None = None) -> Report:
    """Compare the pages on disk with what :func:`build` would write; write nothing."""
    return Plan(config, write=False, progress=progress).run()
