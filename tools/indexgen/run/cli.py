"""The ``indexgen`` command: a thin argparse layer over :func:`indexgen.build` and
:func:`indexgen.check`.

Exit status: 0 success (for ``check``: pages up to date), 1 ``check`` found stale, missing or
orphaned pages or a file that indexgen did not generate where a page goes, 2 usage or
configuration error, unsafe path, file system error, or (``build``) a file that indexgen did
not generate where a page goes.  Files that could not be analyzed (too large, not
decodable, not parsable, over the time budget) do not change the status: their pages say why,
and the summary line counts them and lists each one.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from tqdm import tqdm

from indexgen.errors import IndexgenError
from indexgen.render.page import count
from indexgen.run import build, check
from indexgen.run.config import (
    DEFAULT_MAX_BYTES,
    DEFAULT_TIME_BUDGET,
    KEYS,
    Config,
    check_jobs,
    check_limits,
    load_config,
)
from indexgen.run.manifest import __version__
from indexgen.run.pageio import Report

EXIT_OK = 0
EXIT_DRIFT = 1
EXIT_ERROR = 2

_EPILOG = f"""\
With no SRC_ROOT, settings come from [tool.indexgen] in the nearest pyproject.toml
({', '.join(KEYS)});
with several roots each root's pages go under OUT/<root>/.

The summary line counts the files analyzed, empty and not analyzed (too large, not
decodable, does not parse, timed out) and lists each file not analyzed; their pages say
why. Marker pages nothing produces that indexgen did not write as they are (an annotated
copy) are kept and listed.

exit status:
  0  success, including builds where some files could not be analyzed; for check, the
     pages are up to date
  1  check only: some pages are stale, missing or orphaned, or a file that indexgen did
     not generate is where a page goes (each listed on stdout)
  2  usage or configuration error, a file system error, an unsafe path (symlink loop or
     escape); for build, a file that indexgen did not generate is where a page goes
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="indexgen",
        description="Generate keyword index and analysis pages for Python sources, statically "
                    "(the code is never imported).",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"indexgen {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, help_text in (
        ("build", "write the pages (incremental: unchanged pages are not rewritten)"),
        ("check", "write nothing; exit 1 listing stale, missing and orphaned pages"),
    ):
        cmd = sub.add_parser(name, help=help_text, description=help_text, epilog=_EPILOG,
                             formatter_class=argparse.RawDescriptionHelpFormatter)
        cmd.add_argument("src_root", metavar="SRC_ROOT", nargs="*", type=Path,
                         help="source root(s) to document (default: [tool.indexgen] roots)")
        cmd.add_argument("--out", type=Path, help="output directory (required with SRC_ROOT)")
        cmd.add_argument("--tests", type=Path, action="append", default=None, metavar="DIR",
                         help="folder of test files to cross-reference (repeatable; default: "
                              "tests/ when it exists)")
        cmd.add_argument("--exclude", action="append", default=[], metavar="PATTERN",
                         help="leave out the files and folders the pattern fits (repeatable; "
                              "adds to [tool.indexgen] exclude): tests, '*_pb2.py', "
                              "src/pkg/_vendor")
        cmd.add_argument("--max-bytes", type=int, default=None,
                         help="skip analysis of larger files (1 or more; default "
                              f"{DEFAULT_MAX_BYTES:,})")
        cmd.add_argument("--time-budget", type=float, default=None, metavar="SECONDS",
                         help="give up analyzing a file after this long; its pages say so "
                              f"(default {DEFAULT_TIME_BUDGET:g}, 0: no limit)")
        cmd.add_argument("-j", "--jobs", type=int, default=None,
                         help="worker processes (0 or more; default 0: one per CPU)")
        cmd.add_argument("-q", "--quiet", action="store_true",
                         help="print nothing but errors (and, for check, the drift list)")
    return parser


def _config(args: argparse.Namespace) -> Config:
    max_bytes, time_budget = check_limits("command line", "command-line option",
                                          args.max_bytes, args.time_budget)
    jobs = check_jobs("command line", "command-line option", args.jobs)
    if args.src_root:
        if args.out is None:
            raise IndexgenError("--out is required when SRC_ROOT is given")
        tests = args.tests if args.tests is not None else [  # as [tool.indexgen] does
            Path("tests")] if Path("tests").is_dir() else []
        config = Config(roots=list(args.src_root), out=args.out, tests=list(tests),
                        base=Path.cwd())
    else:
        config = load_config(Path.cwd())
        if args.out is not None:
            config.out = args.out
        if args.tests is not None:
            config.tests = list(args.tests)
    config.exclude = [*config.exclude, *args.exclude]
    if max_bytes is not None:
        config.max_bytes = max_bytes
    if jobs is not None:
        config.jobs = jobs
    if time_budget is not None:
        config.time_budget = time_budget
    return config


class _Bars:
    """Progress on stderr, one tqdm bar per phase; silent unless enabled (a terminal).

    Builds of fewer than 50 files show no bar: they finish before one would be read.
    """

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.bar: tqdm | None = None
        self.phase = ""

    def __call__(self, phase: str, done: int, total: int) -> None:
        if not self.enabled or total < 50:
            return
        if self.bar is None or phase != self.phase or done == 0:
            self.close()
            self.bar = tqdm(total=total, desc=f"{phase:8}", unit="file", file=sys.stderr,
                            dynamic_ncols=True, mininterval=0.1)
            self.phase = phase
        self.bar.update(done - self.bar.n)
        if done == total:
            self.close()

    def close(self) -> None:
        """Finish the current bar, if any."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    bars = _Bars(enabled=not args.quiet and sys.stderr.isatty())
    try:
        config = _config(args)
        start = time.perf_counter()
        if args.command == "build":
            report = build(config, progress=bars)
        else:
            report = check(config, progress=bars)
    except (IndexgenError, OSError) as exc:
        bars.close()
        print(f"indexgen: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    elapsed = time.perf_counter() - start
    if args.command == "check":
        return _print_check(report, args.quiet, elapsed)
    if not args.quiet:
        print(f"indexgen: {_files_line(report)}; {report.extracted} parsed, "
              f"{report.rendered} rendered; {count(len(report.written), 'page')} written, "
              f"{len(report.removed)} removed in {elapsed:.1f}s")
        _print_details(report)
    return EXIT_OK


_STATUS_WORDS = {"too-large": "too large", "not-decodable": "not decodable",
                 "syntax-error": "does not parse", "unreadable": "unreadable",
                 "timed-out": "timed out"}


def _files_line(report: Report) -> str:
    """``52 files: 49 analyzed, 2 empty, 1 not analyzed (1 does not parse)``."""
    line = f"{count(report.files, 'file')}: {report.analyzed} analyzed"
    if report.empty:
        line += f", {report.empty} empty"
    line += f", {len(report.not_analyzed)} not analyzed"
    if report.not_analyzed:
        reasons: dict[str, int] = {}
        for _path, status, _why in report.not_analyzed:
            word = _STATUS_WORDS.get(status, status)
            reasons[word] = reasons.get(word, 0) + 1
        line += " (" + ", ".join(f"{n} {word}" for word, n in sorted(reasons.items())) + ")"
    return line


def _print_details(report: Report) -> None:
    for path, _status, why in report.not_analyzed:
        print(f"not analyzed: {path}: {why}")
    for page, why in report.kept:
        print(f"kept: {page} ({why})")
    for note in report.notes:
        print(f"note: {note}")


def _print_check(report: Report, quiet: bool, elapsed: float) -> int:
    for label, pages in (("stale", report.stale), ("missing", report.missing),
                         ("orphaned", report.orphaned), ("not generated by indexgen",
                                                          report.conflicts)):
        for page in pages:
            print(f"{label}: {page}")
    if not quiet:
        state = "pages up to date" if report.up_to_date else (
            "pages out of date: `indexgen build` with the same settings writes them"
            if not report.conflicts else "pages out of date")
        print(f"indexgen: {_files_line(report)}; {state} ({elapsed:.1f}s)")
        _print_details(report)
    return EXIT_OK if report.up_to_date else EXIT_DRIFT
