"""Benchmark indexgen on the installed torch package against a bare ``ast.parse``.

Measured side by side in one run:

1. baseline: read and ``ast.parse`` every ``.py`` file of torch, on one core;
2. cold build: ``indexgen.build`` into an empty temporary folder (all cores);
3. warm rebuild: the same build again, nothing changed.

Targets: cold build <= 2x baseline; warm rebuild <= 1/4 of baseline.  Prints the times and
ratios and exits 1 if a target is missed.  Run by hand (``python benchmarks/bench_indexgen.py``);
it is not part of the unit tests.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import sys
import tempfile
import time
from pathlib import Path

from indexgen import Config, build
from indexgen.discover import walk_python_files


def torch_root() -> Path:
    """Folder of the installed torch package, found without importing it."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("torch is not installed")
    return Path(list(spec.submodule_search_locations)[0])


def baseline(root: Path) -> tuple[float, int]:
    """Seconds to read and parse every file once on one core, and the number of files."""
    files = [root / rel for rel in walk_python_files(root)]
    start = time.perf_counter()
    for path in files:
        try:
            ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            pass
    return time.perf_counter() - start, len(files)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=None, help="package to document (torch)")
    parser.add_argument("--jobs", type=int, default=0, help="worker processes (default: CPUs)")
    args = parser.parse_args(argv)
    root = args.root or torch_root()

    base, n_files = baseline(root)
    print(f"baseline ast.parse, 1 core : {base:7.2f}s  ({n_files} files)")
    with tempfile.TemporaryDirectory(prefix="indexgen-bench-") as tmp:
        config = Config(roots=[root], out=Path(tmp) / "out", jobs=args.jobs, base=root.parent)
        start = time.perf_counter()
        report = build(config)
        cold = time.perf_counter() - start
        print(f"indexgen cold build        : {cold:7.2f}s  ({len(report.written)} pages, "
              f"ratio {cold / base:.2f}x baseline, target <= 2.00x)")
        start = time.perf_counter()
        report = build(config)
        warm = time.perf_counter() - start
        print(f"indexgen rebuild, no change: {warm:7.2f}s  ({len(report.written)} pages written, "
              f"ratio {warm / base:.2f}x baseline, target <= 0.25x)")
    ok = cold <= 2 * base and warm <= 0.25 * base and not report.written
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
