"""The mkdocs plugin: ``plugins: [indexgen]`` builds the pages while the site builds.

For projects that do not commit the pages.  On every build (``mkdocs build``, and every
rebuild of ``mkdocs serve``) the plugin runs an incremental :func:`indexgen.run.build` into a
folder of its own outside ``docs_dir`` (``cache_dir``, default ``.cache/indexgen`` beside
``mkdocs.yml``), then adds every page there to the site under ``dest`` (default
``reference/``).  The manifest and the stat cache stay in that folder between builds, so a
rebuild re-reads and rewrites only what changed; ``mkdocs serve`` also watches the source
roots and test folders, so saving a source rebuilds the site with that file's pages new.
Projects that commit their pages keep ``indexgen build`` / ``indexgen check`` instead.

Options (under ``- indexgen:``; all optional)::

    roots: [src]            # source roots; default: [tool.indexgen] roots of pyproject.toml
    tests: [tests]          # test folders; default: [tool.indexgen] tests, else tests/ if any
    exclude: [_vendor]      # more files and folders to leave out (patterns, as in pyproject)
    max_bytes: 2000000      # skip analysis of larger files (as max-bytes in pyproject)
    time_budget: 20         # seconds one file's analysis may take (0: no limit)
    dest: reference         # where the pages appear in the site ("" for its top)
    cache_dir: .cache/indexgen
    jobs: 0                 # worker processes (0: one per CPU)

Relative paths are relative to the folder of ``mkdocs.yml``.  Without ``roots`` the settings
come from the nearest ``pyproject.toml`` above it (its ``out`` is not used), and the
plugin's options given replace or (``exclude``) add to them; with ``roots`` the pyproject is
not read, and what the options leave out takes indexgen's defaults.  ``max_bytes`` and
``time_budget`` follow the rule of ``max-bytes`` and ``time-budget``
(:func:`indexgen.run.config.check_limits`: a whole number of bytes, 1 or more; seconds, 0 or
more; ``true`` is not a number).  A configuration or build error stops the site build with
indexgen's message; files that could not be analyzed do not (their pages say why, and the
log lists them: at INFO level in ``mkdocs build``, so that ``--strict`` does not fail on
another project's sources, and as a WARNING in ``mkdocs serve`` without ``strict``, where
the file that no longer parses is likely the one just saved; a strict serve would abort the
rebuild on it).  Needs mkdocs 1.6 or later: ``pip install './tools[mkdocs]'`` from a clone
of this repository (the distribution is not on the package index; see the user guide's
*Install*).
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Any

from mkdocs.config import config_options as opt
from mkdocs.config.base import Config as MkdocsOptions
from mkdocs.config.base import ValidationError
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, get_plugin_logger
from mkdocs.structure.files import File, Files

from indexgen.errors import IndexgenError
from indexgen.paths import is_inside
from indexgen.run import build
from indexgen.run.config import Config, check_jobs, check_limits, load_config
from indexgen.run.statcache import CACHE_DIR

log = get_plugin_logger(__name__)


class IndexgenOptions(MkdocsOptions):
    """The plugin's options in ``mkdocs.yml`` (see the module docstring)."""

    roots = opt.ListOfItems(opt.Type(str), default=[])
    tests = opt.Optional(opt.ListOfItems(opt.Type(str)))
    exclude = opt.ListOfItems(opt.Type(str), default=[])
    # checked by check_limits in on_config (mkdocs' Type(int) would take true for 1)
    max_bytes = opt.Optional(opt.BaseConfigOption())
    time_budget = opt.Optional(opt.BaseConfigOption())
    dest = opt.Type(str, default="reference")
    cache_dir = opt.Type(str, default=".cache/indexgen")
    jobs = opt.Optional(opt.BaseConfigOption())  # checked by check_jobs, as the two above


class IndexgenPlugin(BasePlugin[IndexgenOptions]):
    """Builds indexgen's pages into ``cache_dir`` and adds them to the site under ``dest``."""

    settings: Config | None = None
    """The build's settings, made by :meth:`on_config`."""
    command: str = "build"
    """The mkdocs command that runs the plugin (``build``, ``serve``, ``gh-deploy``)."""

    def load_config(self, options: dict[str, Any], config_file_path: str | None = None
                    ) -> tuple[list, list]:
        """mkdocs' validation of the options, with an unknown option an error that names the
        nearest one: mkdocs only warns, and a build that is not strict would go on without
        it (a misspelt ``roots`` falls back to ``[tool.indexgen]``, silently)."""
        errors, warnings = super().load_config(options, config_file_path)
        names = [name for name, _option in IndexgenOptions._schema]
        for name in sorted(set(options) - set(names)):
            near = difflib.get_close_matches(name, names, n=1)
            errors.append((name, ValidationError(
                f"the indexgen plugin has no option {name!r}"
                + (f"; did you mean {near[0]!r}?" if near else "")
                + f" (its options: {', '.join(names)})")))
        unknown = set(options) - set(names)
        return errors, [(k, w) for k, w in warnings if k not in unknown]

    def on_startup(self, *, command: str, dirty: bool) -> None:
        """Note the command: ``serve`` lists the files not analyzed as warnings (unless
        strict)."""
        self.command = command

    def on_config(self, config: Any) -> None:
        """Resolve the settings against the folder of ``mkdocs.yml`` and check them."""
        base = Path(config.config_file_path or ".").resolve().parent
        out = base / self.config.cache_dir
        if is_inside(out, Path(config.docs_dir).resolve()):
            raise PluginError(
                f"indexgen: cache_dir {out} lies inside docs_dir {config.docs_dir}: mkdocs would "
                "take the pages twice and serve would rebuild on its own writes; choose a "
                "folder outside docs_dir (the default is .cache/indexgen)")
        where = f"{config.config_file_path or 'mkdocs.yml'}: the indexgen plugin's option"
        try:
            max_bytes, time_budget = check_limits("plugin", where, self.config.max_bytes,
                                                  self.config.time_budget)
            jobs = check_jobs("plugin", where, self.config.jobs)
        except IndexgenError as exc:
            raise PluginError(f"indexgen: {exc}") from exc
        try:
            if self.config.roots:
                tests = self.config.tests
                if tests is None:
                    tests = ["tests"] if (base / "tests").is_dir() else []
                settings = Config(roots=[base / r for r in self.config.roots], out=out,
                                  tests=[base / t for t in tests], base=base)
            else:
                settings = load_config(base, out=out)
                if self.config.tests is not None:
                    settings.tests = [base / t for t in self.config.tests]
        except IndexgenError as exc:
            raise PluginError(f"indexgen: {exc} (or give the plugin its roots: "
                              "plugins: [{indexgen: {roots: [src]}}])") from exc
        if max_bytes is not None:
            settings.max_bytes = max_bytes
        if time_budget is not None:
            settings.time_budget = time_budget
        settings.jobs = jobs or settings.jobs
        settings.exclude = [*settings.exclude, *self.config.exclude]
        self.settings = settings

    def on_files(self, files: Files, *, config: Any) -> Files:
        """Build the pages (incrementally) and add every page of ``cache_dir`` to the site."""
        settings = self.settings
        assert settings is not None  # on_config ran
        try:
            report = build(settings)
        except IndexgenError as exc:
            raise PluginError(f"indexgen: {exc}") from exc
        log.info("%d files, %d parsed, %d pages written, %d removed", report.files,
                 report.extracted, len(report.written), len(report.removed))
        say = log.warning if self.command == "serve" and not config.strict else log.info
        for path, _status, why in report.not_analyzed:
            say("not analyzed: %s: %s", path, why)
        _ignore_in_git(settings.out)
        prefix = self.config.dest.strip("/")
        for page in _pages(settings.out):
            uri = f"{prefix}/{page}" if prefix else page
            if files.get_file_from_path(uri) is not None:
                raise PluginError(
                    f"indexgen: {uri} is both a file of docs_dir and a generated page; remove "
                    "the file, or move the pages with the plugin's dest option")
            files.append(File.generated(config, uri, abs_src_path=str(settings.out / page)))
        return files

    def on_serve(self, server: Any, *, config: Any, builder: Any) -> Any:
        """Watch the source roots and test folders: saving a source rebuilds the site."""
        if self.settings is not None:
            for folder in (*self.settings.roots, *self.settings.tests):
                server.watch(str(folder))
        return server


def _pages(out: Path) -> list[str]:
    """The Markdown pages under ``out`` (POSIX paths relative to it), the stat cache left out."""
    found = []
    for folder, dirs, names in os.walk(out):
        dirs[:] = sorted(d for d in dirs if d != CACHE_DIR)
        rel = Path(folder).relative_to(out).as_posix()
        found += [n if rel == "." else f"{rel}/{n}" for n in sorted(names) if n.endswith(".md")]
    return found


def _ignore_in_git(out: Path) -> None:
    """Make the pages' folder ignore itself in git (they are built, never committed)."""
    ignore = out / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# made by indexgen's mkdocs plugin: these pages are built\n*\n")
