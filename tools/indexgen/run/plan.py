"""The build plan: one build or check as named steps over the sources of a configuration.

:class:`Plan` runs, in order:

1. :meth:`~Plan.discover` the sources and hash them (a build with nothing to compute ends
   there: :mod:`indexgen.run.settled`);
2. :meth:`~Plan.summarize`: reuse cached compact summaries (manifest) for unchanged sources,
   extract the others in worker processes that keep the full summaries (:mod:`indexgen.run.team`);
3. :meth:`~Plan.relate`: the global pass (:class:`~indexgen.analyze.project.Project`), each
   file's context sealed where it is made (its render's input if needed, its hash);
4. :meth:`~Plan.choose_renders`: files whose source, context or pages changed;
5. :meth:`~Plan.render_files`, each where its full summary is kept, comparing with what is
   on disk (:mod:`indexgen.run.pageio`), while the calling process renders the folder pages;
6. :meth:`~Plan.write_manifest`;
7. :meth:`~Plan.report` and :meth:`~Plan.remove_orphans`: generated pages whose source is gone.
"""

from __future__ import annotations

import json
import os

from indexgen.analyze.context import FileContext
from indexgen.analyze.project import Project
from indexgen.extract.discover import (
    SourceFile,
    discover,
    root_label,
    root_name_of,
    shown_path,
    walk_python_files,
)
from indexgen.extract.model import FileSummary
from indexgen.extract.runtime import collector_paused
from indexgen.layout import MANIFEST_NAME, Layout
from indexgen.paths import fs_relpath
from indexgen.render.folders import folder_pages
from indexgen.run import fanout, pageio
from indexgen.run import manifest as mf
from indexgen.run.config import Config, validate
from indexgen.run.folder_job import FolderJob
from indexgen.run.jobs import RenderInput, RenderSetup
from indexgen.run.manifest import CODE_VERSION
from indexgen.run.pageio import Report
from indexgen.run.settled import settled_pages, stat_cache_report
from indexgen.run.statcache import StatCache, stat_of
from indexgen.run.team import Progress, Setup, Team


class Plan:
    """One build or check, as named steps sharing their results through attributes.

    Args:
        config: What to document and where.
        write: Whether pages are written (build) or only compared (check).
        progress: Progress callback, or None.
    """

    def __init__(self, config: Config, write: bool, progress: Progress | None) -> None:
        self.config, self.write, self.progress, self.out = config, write, progress, config.out
        self.jobs = config.jobs or os.cpu_count() or 1
        self.statuses: dict[str, str] = {}

    def run(self) -> Report:
        """Run every step and return the report, or the report of a build with nothing to
        compute (:mod:`indexgen.run.settled`)."""
        with collector_paused():
            return self._run()

    def _run(self) -> Report:
        self.discover()
        if self.cache.unchanged(self.stats, self.test_stats, self.out):
            return stat_cache_report(self.cache, len(self.sources), self.notes)
        self.hash_sources()
        settled = settled_pages(self.previous, self.cached, self.by_key.keys(), self.hashes,
                                self.tests, self.expected_pages, self.page_is, self.layout.display)
        if settled is not None:  # a fresh clone, say: nothing extracted, nothing rendered
            self.statuses, self.not_analyzed, self.empty = settled
            self.new_files, self.extracted, self.render_keys = self.cached, 0, []
            return self._finish(self.report())
        setup = Setup([*self.sources, *self.tests], self.config.max_bytes, self.config.time_budget,
                      RenderSetup(self.layout, self.tests_label, self.out, self.write))
        self.folders = FolderJob(self._emit_folders)
        with Team(self.jobs, setup, self.progress) as self.team:
            try:
                self.summarize()
                self.relate()
                self.choose_renders()
                self.render_files()
            finally:
                self.folders.cancel()  # a failure before the render took them
        self.write_manifest()
        return self._finish(self.report())

    def _finish(self, report: Report) -> Report:
        """Remove the orphans, save the stat cache after a build, return the report."""
        self.remove_orphans(report)
        if self.write and not report.conflicts:  # a conflict leaves the build unfinished
            self.cache.set_identity(CODE_VERSION, self.settings)
            self.cache.save({k: (self.stats[k], self.hashes[k]) for k in self.by_key},
                            self.test_stats, self.out,
                            {"not_analyzed": report.not_analyzed, "empty": report.empty,
                             "kept": report.kept})
        return report

    def discover(self) -> None:
        """Find the sources, the page layout, the settings and the previous manifest."""
        config = self.config
        self.notes = validate(config)
        self.sources: list[SourceFile] = []
        for root in config.roots:
            self.sources += discover(root, (self.out,), config.exclude, config.base)
        self.layout = Layout(tuple(root_name_of(r) for r in config.roots),
                             tuple(root_label(root, config.base) for root in config.roots))
        self.settings = {"roots": list(self.layout.roots), "labels": list(self.layout.labels),
                         "tests": sorted(fs_relpath(t, config.base) for t in config.tests),
                         "max_bytes": config.max_bytes, "time_budget": config.time_budget}
        self.by_key = {s.key: s for s in self.sources}
        self.stats = {s.key: stat_of(s.path) for s in self.sources}
        self.tests: list[SourceFile] = []
        for folder in config.tests:
            for rel in walk_python_files(folder, (self.out,), config.exclude,
                                         shown_path(folder, config.base)):
                display = fs_relpath(folder / rel, config.base)
                self.tests.append(SourceFile("tests", display, folder / rel, ""))
        self.test_stats = {t.relpath: stat_of(t.path) for t in self.tests}
        self.tests_label = ", ".join(self.settings["tests"])
        self.index = {s.key: i for i, s in enumerate(self.sources)}
        self.out_existed = self.out.is_dir()
        self.cache = StatCache(self.out, CODE_VERSION, self.settings)

    def hash_sources(self) -> None:
        """Read the manifest and hash the sources it has an entry for (by stat when
        unchanged): only those may be reused; the others' hash is the one their extraction
        makes (:meth:`summarize`), so that a cold build reads each source once."""
        self.previous = mf.read(self.out / MANIFEST_NAME)
        self.cached = mf.cached_files(self.previous, CODE_VERSION, self.settings)
        self.hashes: dict[str, str] = {}
        for s in self.sources:
            if s.key not in self.cached:
                continue
            sha = self.cache.source_sha(s.key, self.stats[s.key])
            if sha is None:
                try:
                    sha = pageio.sha(s.path.read_bytes())
                except OSError:
                    sha = ""
            self.hashes[s.key] = sha

    def summarize(self) -> None:
        """Compact summaries of every file: from the manifest if unchanged, else extracted."""
        self.compacts: dict[str, FileSummary] = {}
        self.fresh: set[str] = set()  # extracted in this build
        todo = []
        for s in self.sources:
            entry = self.cached.get(s.key)
            if entry and entry.get("sha256") == self.hashes[s.key] and self.hashes[s.key]:
                try:
                    self.compacts[s.key] = mf.decode_summary(entry["summary"])
                    continue
                except (KeyError, TypeError, ValueError):
                    pass
            todo.append(s)
        costs = [(self.stats[s.key] or (0, 0))[0] for s in todo]
        self.texts: dict[str, str] = {}  # summary texts (manifest JSON), made once each
        self.team.extract([self.index[s.key] for s in todo], costs, on_result=self._extracted)
        self.extracted = len(todo)

    def _extracted(self, _pos: int, text: str) -> None:
        """Take in the compact summary of a file just extracted, as its manifest text (decoded
        as it arrives, while the workers extract other files)."""
        small = mf.decode_summary(json.loads(text))
        self.fresh.add(small.key)
        self.compacts[small.key] = small
        self.hashes[small.key] = small.sha256
        self.texts[small.key] = text

    def relate(self) -> None:
        """The global pass: every file's context (imports, importers, tests, folders)."""
        n = len(self.sources)
        costs = [(self.test_stats[t.relpath] or (0, 0))[0] for t in self.tests]
        tests = {t.relpath: t for t in self.team.full_summaries(
            range(n, n + len(self.tests)), costs)}
        self.test_hashes = {rel: t.sha256 for rel, t in sorted(tests.items())}
        self.project = Project(list(self.compacts.values()), tests)
        shards = fanout.shard_count(self.jobs)
        # The folder pages in a process of their own meanwhile (in the render, the calling
        # process's thread making them shared the interpreter lock with the threads feeding
        # the workers): on more than two cores from the start, on two once the call edges
        # are found (the calling process then works alone, the other core would idle).
        fork = self.folders.fork if shards > 1 and fanout.can_fork() else None
        if fork is not None and shards > 2:
            fork()
        # the call edges on idle cores, in forked processes; each context sealed where made
        self.sealed = self.project.contexts(fan=self.team.fan_out, shards=shards,
                                            seal=self._seal, after_edges=fork)

    def _seal(self, key: str, ctx: FileContext) -> tuple[str | None, bytes | None]:
        """What the build keeps of a file's context, made where it was finished (perhaps a
        forked process): its hash (None for a file this build extracted, which renders
        whatever its context: the worker rendering it hashes it), and its packed render
        input (:meth:`RenderInput.pack`) unless its source, context and pages are as the
        last build left them (None)."""
        ctx_hash = None if key in self.fresh else mf.context_hash(ctx, self._summary_text(key))
        entry = self.cached.get(key) or {}
        pages = entry.get("pages") or {}
        if (ctx_hash is not None and entry.get("context") == ctx_hash
                and set(pages) == self.expected_pages(key)
                and all(self.page_is(p, h) for p, h in sorted(pages.items()))):
            return ctx_hash, None
        imports = [(self.project.category(i), *self.project.import_link(i))
                   for i in self.compacts[key].imports]
        return ctx_hash, RenderInput(imports, ctx).pack()

    def _summary_text(self, key: str) -> str:  # a compact summary as the manifest has it
        text = self.texts.get(key)
        if text is None:  # not extracted by this build: encoded once (seal, manifest entry)
            text = self.texts[key] = mf.summary_json(mf.encode_summary(self.compacts[key]))
        return text

    def expected_pages(self, key: str) -> set[str]:
        """The two pages of the source ``key``: its keyword page and its analysis page."""
        return {self.layout.kw_page(key), self.layout.docs_page(key)}

    def choose_renders(self) -> None:
        """Files to render: those sealed with a render input (:meth:`_seal`), and what
        their render needs; every file's manifest entry."""
        self.render_keys: list[str] = []
        self.work: list[tuple[int, bytes]] = []  # (source index, packed render input)
        self.new_files: dict[str, dict] = {}
        for key in sorted(self.by_key):
            ctx_hash, packed = self.sealed.pop(key)
            entry = self.cached.get(key) or {}
            self.new_files[key] = {"sha256": self.hashes[key], "context": ctx_hash,
                                   "summary": self._summary_text(key),
                                   "pages": dict(entry.get("pages") or {})}
            if packed is not None:
                self.render_keys.append(key)
                self.work.append((self.index[key], packed))
        # Files rendered from a cached summary are extracted again where they are rendered.
        self.extracted += sum(k not in self.fresh for k in self.render_keys)

    def page_is(self, page: str, digest: str) -> bool:
        """Whether a page holds the content with hash ``digest`` (by stat when it is as the
        last build left it)."""
        return (self.cache.page_unchanged(page, stat_of(self.out / page))
                or pageio.sha(pageio.read(self.out / page) or b"") == digest)

    def render_files(self) -> None:
        """Render both pages of every chosen file and emit them; the folder pages are
        rendered and emitted meanwhile."""
        costs = [self.compacts[key].size for key in self.render_keys]
        self.entry_lines: dict[str, bytes] = {}
        self.team.render(self.work, costs, meanwhile=self.render_folders,
                         on_result=self._rendered)

    def _rendered(self, pos: int, result: tuple) -> None:
        """Record the render of the file at ``pos`` of :attr:`render_keys`: its context's
        hash, its pages and their statuses, its manifest line (made now, while other files
        still render, so that :meth:`write_manifest` only joins lines)."""
        key = self.render_keys[pos]
        entry = self.new_files[key]
        entry["context"], pages = result
        for page, digest, status in pages:
            self.statuses[page] = status
            entry["pages"][page] = digest
        expected = self.expected_pages(key)
        entry["pages"] = {p: h for p, h in entry["pages"].items() if p in expected}
        self.entry_lines[key] = mf.entry_line(key, entry)

    def render_folders(self) -> None:
        """Render and emit the folder pages (or take those a process made during the global
        pass, :meth:`relate`), then let go of the summaries and the global pass (see
        :meth:`_release`)."""
        made = self.folders.result()
        self.folder_hashes = {page: digest for page, (digest, _status) in made.items()}
        self.statuses.update((page, status) for page, (_digest, status) in made.items())
        self._release()

    def _emit_folders(self) -> dict[str, tuple[str, str]]:
        """Render and emit the folder pages: page -> (hash of its text, emit status)."""
        made = {}
        for page, text in folder_pages(self.project.folders(), self.project.files,
                                       self.layout).items():
            data = text.encode()
            made[page] = (pageio.sha(data), pageio.emit(self.out, page, data, self.write))
        return made

    def _release(self) -> None:
        """Keep what the report needs of the compact summaries, then drop them and the
        project (freed while the workers render rather than after the last page)."""
        self.not_analyzed, self.empty = pageio.outcomes(
            ((key, s.status, s.error) for key, s in sorted(self.compacts.items())),
            self.layout.display)
        self.compacts = self.project = None

    def write_manifest(self) -> None:
        """Emit the manifest."""
        manifest = {"tool": "indexgen", "version": CODE_VERSION, "settings": self.settings,
                    "tests": self.test_hashes, "files": self.new_files,
                    "folders": dict(sorted(self.folder_hashes.items()))}
        data = mf.dumps(manifest, self.entry_lines)
        old = pageio.read(self.out / MANIFEST_NAME)
        if old == data or not self.write and mf.only_tests_differ(old, manifest,
                                                                  self.entry_lines, self.previous):
            self.statuses[MANIFEST_NAME] = pageio.UNCHANGED
        else:
            if self.write:
                pageio.write_atomic(self.out / MANIFEST_NAME, data)
            self.statuses[MANIFEST_NAME] = pageio.MISSING if old is None else pageio.STALE

    def report(self) -> Report:
        """The report of every page emitted so far."""
        report = Report(files=len(self.sources), extracted=self.extracted,
                        rendered=len(self.render_keys), notes=list(self.notes),
                        not_analyzed=list(self.not_analyzed), empty=self.empty)
        report.record(self.statuses, self.write)
        return report

    def remove_orphans(self, report: Report) -> None:
        """Generated pages nothing produces any more: build removes them, check lists them
        (:func:`indexgen.run.pageio.remove_orphans`).  An output folder this build created
        holds only its own pages: it is not searched."""
        if self.out_existed:
            expected = set(self.statuses) | {p for f in self.new_files.values()
                                             for p in f["pages"]}
            pageio.remove_orphans(self.out, expected, mf.written_pages(self.previous),
                                  self.write, report)
