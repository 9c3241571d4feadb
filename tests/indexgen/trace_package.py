"""The trace measurement of ``test_trace_recall.py`` on a package nobody here wrote.

Runs the package's own test suite in this process with the profiler of
``trace_workload.record`` (calls from one function of the package to another), builds the
pages of the package's sources with indexgen in a separate process, and prints the recall of
the observed calls on the pages' "Calls" and "Called by" lists (``trace_recall.figures``)::

    python tests/indexgen/trace_package.py SRC/packaging TESTS [--json OUT] [-- PYTEST ARGS]

``SRC/packaging`` is the package folder of an unpacked source distribution (it is put first
on ``sys.path``, before pytest imports anything), ``TESTS`` its test folder.
``test_trace_recall.py`` runs it on the packages of ``trace_packages.py``; run by hand, it
measures any other (``packaging`` for docs/guides/indexgen.md).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line's arguments (``argv``: ``sys.argv[1:]`` when None)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("package", type=Path, help="the package folder (its sources)")
    parser.add_argument("tests", type=Path, help="its test folder")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    parser.add_argument("--pages", type=Path, default=None,
                        help="build the pages here and keep them (with --json: the observed "
                             "calls too, for precision_sample.py)")
    parser.add_argument("--max-examples", type=int, default=0,
                        help="examples per hypothesis property (0: the suite's own)")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    # what follows "--" is pytest's, wherever the options stand: argparse alone gives the
    # positionals' "*" nothing once the options separate them from it, and fails
    argv = sys.argv[1:] if argv is None else list(argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:cut])
    args.pytest_args += argv[cut + 1:]
    return args


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    package = args.package.resolve()
    sys.path.insert(0, str(package.parent))  # the package under test, before pytest's own
    sys.path.insert(1, str(HERE))
    import pytest
    from trace_recall import figures, page_edges, truth
    from trace_workload import record

    if args.max_examples:  # a quicker run of a suite of properties, same code paths
        from hypothesis import settings
        settings.register_profile("trace", max_examples=args.max_examples, deadline=None,
                                  derandomize=True)  # the same calls every run
        settings.load_profile("trace")
    status: list[int] = []
    observed = record(lambda: status.append(pytest.main(
        [str(args.tests), "-q", "-p", "no:cacheprovider", *args.pytest_args])), str(package))
    with tempfile.TemporaryDirectory() as tmp:
        out = args.pages.resolve() if args.pages else Path(tmp) / "out"
        subprocess.run([sys.executable, "-m", "indexgen", "build", str(package), "--out",
                        str(out), "-q"], check=True, cwd=tmp)
        calls, callers = page_edges(package, out)
    true, left_out = truth(package, observed)
    found = figures(true, calls, callers)
    found.update(left_out=left_out, tests_status=status[0] if status else None,
                 missing=[list(e) for e in sorted(true - calls)],
                 missing_called_by=[list(e) for e in sorted(true - callers)])
    if args.pages:
        found["observed_edges"] = [list(e) for e in sorted(true)]
    print(json.dumps(found, indent=2))
    if args.json:
        args.json.write_text(json.dumps(found, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
