"""Benchmark indexgen on the installed torch package against a bare ``ast.parse``.

Measured side by side in one run:

1. baseline: read and ``ast.parse`` every ``.py`` file of torch, on one core, in a fresh
   Python process that does nothing else (:func:`baseline`);
2. cold build: ``indexgen.build`` into an empty temporary folder (``--jobs``, default all
   cores);
3. rebuild with nothing changed: the same build again.

Targets: cold build <= 1.5x baseline; no-change rebuild <= 0.1x baseline (and it writes
nothing).  With ``--repeat N`` the three measurements alternate N times and the best of each
counts (of the large-module timings too), which keeps a burst of load from another process from
deciding the result.  CPU
seconds (this process plus its workers) are printed too: they show the work done, independent
of contention.  ``--large`` adds generated modules of 0.1, 0.4 and 2 MB and times the
extraction of each on one core (analysis must grow linearly with size).  ``--json PATH``
writes the numbers.  Prints the times and ratios and exits 1 if a target is missed.  Run by
hand (``python benchmarks/bench_indexgen.py --repeat 3``); it is not part of the unit tests.

``--against DIR`` compares instead: ``--repeat`` rounds of a floor and two cold builds, this
checkout's and that of the ``indexgen`` package in DIR (``git archive <commit> tools/indexgen
| tar -x -C /tmp/old`` gives ``/tmp/old/tools``), in alternating order, each build in a fresh
process; it prints every run with the load average and the medians.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from indexgen import Config
from indexgen.extract.discover import walk_python_files
from indexgen.extract.pipeline import extract_source
from indexgen.run import build

COLD_TARGET = 1.5
WARM_TARGET = 0.1


def torch_root() -> Path:
    """Folder of the installed torch package, found without importing it."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("torch is not installed")
    return Path(list(spec.submodule_search_locations)[0])


# The floor, run by a fresh interpreter (``python -I -c``) that imports nothing else: the
# paths come on stdin, the wall and CPU seconds of the loop go to stdout.
_FLOOR = """\
import ast, sys, time
paths = sys.stdin.read().split("\\n")
cpu, start = time.process_time(), time.perf_counter()
for path in paths:
    try:
        with open(path, "rb") as fh:
            ast.parse(fh.read())
    except (SyntaxError, ValueError):
        pass
print(time.perf_counter() - start, time.process_time() - cpu)
"""


def baseline(root: Path) -> tuple[float, float, int]:
    """Wall and CPU seconds to read and parse every file once on one core, and the number of
    files.

    Measured in a fresh process, the way a skeptic would: timed inside the process that has
    just run builds, the same loop was about a fifth slower (8.28 s there against 6.7-7.1 s
    fresh on one machine minutes apart), since the larger heap of that process slows the
    allocations of the syntax trees and the collector's passes over them.
    """
    files = [str(root / rel) for rel in walk_python_files(root)]
    done = subprocess.run([sys.executable, "-I", "-c", _FLOOR], input="\n".join(files),
                          capture_output=True, text=True, check=True)
    wall, cpu = (float(x) for x in done.stdout.split())
    return wall, cpu, len(files)


def cpu_seconds() -> float:
    """User + system CPU time of this process and its finished children."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def timed(func):
    """(wall seconds, CPU seconds, result) of ``func()``."""
    cpu, start = cpu_seconds(), time.perf_counter()
    result = func()
    return time.perf_counter() - start, cpu_seconds() - cpu, result


def file_creation_us(folder: Path, n: int = 400) -> float:
    """Microseconds to create one empty file in a new subfolder of ``folder`` (median of
    ``n``; the files are kept until the benchmark's folder is removed).

    A cold build creates over 5,000 page files, and on ext4 creating one costs about 6 us
    normally but 200 us or more for minutes after many files were deleted nearby (the
    allocator steps over recently deleted inodes): a previous benchmark's cleanup, a test
    suite's temporary folders.  Printed with the results, so that a slow run can be told
    apart from a slow build.
    """
    probe = folder / "probe"
    probe.mkdir()
    times = []
    for i in range(n):
        start = time.perf_counter()
        os.close(os.open(probe / f"f{i}", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        times.append(time.perf_counter() - start)
    return sorted(times)[n // 2] * 1e6


def generated_module(n_bytes: int) -> bytes:
    """A module of documented constants, small functions and classes of about ``n_bytes``."""
    parts, size, i = ['"""Generated module."""\nimport os\n'], 0, 0
    while size < n_bytes:
        chunk = (f"CONST_{i} = {i}\nvalue_{i}: int = CONST_{i} * 2\n"
                 f'"""Docstring of value_{i}."""\n'
                 f"def func_{i}(a, b={i}):\n    '''Doc {i}.'''\n    return os.path.join(a, b)\n\n"
                 f"class Klass{i}:\n    attr_{i} = {i}\n    def m(self):\n        return func_{i}(1)\n\n")
        parts.append(chunk)
        size += len(chunk)
        i += 1
    return "".join(parts).encode()


def large_files(repeat: int = 1) -> list[tuple[int, float]]:
    """(bytes, seconds) of extracting generated modules of growing size on one core, the best
    of ``repeat`` runs each."""
    rows = []
    for n in (100_000, 400_000, 2_000_000):
        data = generated_module(n)
        best = float("inf")
        for _ in range(max(1, repeat)):
            start = time.perf_counter()
            extract_source(data, "big", "big.py", "big", 10**8)
            best = min(best, time.perf_counter() - start)
        rows.append((len(data), best))
    return rows


# One cold build in a fresh interpreter, with the indexgen found first on sys.path (an older
# commit's ``tools`` folder given on PYTHONPATH, or this checkout's): wall and CPU seconds
# (the process and its workers) on stdout.
_COLD = """\
import resource, sys, time
from pathlib import Path
from indexgen import Config
from indexgen.run import build

def cpu():
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime

root, out, jobs = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
config = Config(roots=[root], out=out, jobs=jobs, base=root.parent)
c, t = cpu(), time.perf_counter()
build(config)
print(time.perf_counter() - t, cpu() - c)
"""


def fresh_cold_build(root: Path, out: Path, jobs: int, tools: Path | None) -> tuple[float, float]:
    """Wall and CPU seconds of one cold build of ``root`` into ``out`` in a fresh process;
    ``tools``: the folder holding the ``indexgen`` package to use (None: the installed one)."""
    env = dict(os.environ)
    if tools is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(tools), env.get("PYTHONPATH", "")]).strip(
            os.pathsep)
    done = subprocess.run([sys.executable, "-c", _COLD, str(root), str(out), str(jobs)],
                          capture_output=True, text=True, check=True, env=env)
    wall, cpu = (float(x) for x in done.stdout.split()[-2:])
    return wall, cpu


def against(root: Path, tools: Path, rounds: int, jobs: int, folder: Path) -> dict:
    """Cold builds alternated with those of the indexgen in ``tools`` (both in fresh
    processes, the floor measured before each pair): every run, and the medians."""
    runs: dict[str, list[tuple[float, float]]] = {"this": [], "against": [], "floor": []}
    for i in range(rounds):
        runs["floor"].append(baseline(root)[:2])
        order = [("this", Path(__file__).resolve().parents[1] / "tools"), ("against", tools)]
        for name, where in order if i % 2 == 0 else reversed(order):
            load = os.getloadavg()[0]
            wall, cpu = fresh_cold_build(root, folder / f"{name}{i}", jobs, where)
            runs[name].append((wall, cpu))
            print(f"  round {i + 1} {name:8s}: {wall:6.2f}s  cpu {cpu:6.2f}s  (load {load:.1f})")

    def median(values: list[float]) -> float:
        values = sorted(values)
        mid = len(values) // 2
        return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2

    summary = {name: {"wall_s": median([w for w, _ in r]), "cpu_s": median([c for _, c in r])}
               for name, r in runs.items()}
    for name in ("this", "against"):
        print(f"median {name:8s}: {summary[name]['wall_s']:6.2f}s  cpu "
              f"{summary[name]['cpu_s']:6.2f}s  ratio "
              f"{summary[name]['wall_s'] / summary['floor']['wall_s']:.2f}x of the median floor "
              f"{summary['floor']['wall_s']:.2f}s")
    return {"tools": str(tools), "rounds": runs, "medians": summary}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=None, help="package to document (torch)")
    parser.add_argument("--jobs", type=int, default=0, help="worker processes (default: CPUs)")
    parser.add_argument("--repeat", type=int, default=1, help="rounds; the best of each counts")
    parser.add_argument("--large", action="store_true", help="also time large generated files")
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    parser.add_argument("--against", type=Path, default=None,
                        help="a folder holding another indexgen package (an older commit's "
                             "tools/): alternate cold builds with it, each in a fresh process")
    args = parser.parse_args(argv)
    root = args.root or torch_root()
    if args.against is not None:
        with tempfile.TemporaryDirectory(prefix="indexgen-bench-") as tmp:
            found = against(root, args.against, max(1, args.repeat),
                            args.jobs or os.cpu_count() or 1, Path(tmp))
        if args.json:
            args.json.write_text(json.dumps(found, indent=2) + "\n")
        return 0

    best = {"base": (float("inf"), 0.0), "cold": (float("inf"), 0.0),
            "warm": (float("inf"), 0.0)}
    n_files = pages = written = 0
    # Every round builds into a folder of its own, all removed at the end: removing a round's
    # 5,000 pages right before the next cold build made that build pay for it (ext4 skips
    # inodes deleted in the last minute or more when it allocates new ones, and that search
    # made creating a page file about 30x slower: see docs/guides/indexgen.md, Speed).
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="indexgen-bench-") as tmp:
        create_us = file_creation_us(Path(tmp))
        for i in range(max(1, args.repeat)):
            wall, cpu, n_files = baseline(root)
            best["base"] = min(best["base"], (wall, cpu))
            config = Config(roots=[root], out=Path(tmp) / f"out{i}", jobs=args.jobs,
                            base=root.parent)
            wall, cpu, report = timed(lambda: build(config))  # noqa: B023 - called at once
            best["cold"] = min(best["cold"], (wall, cpu))
            pages = len(report.written)
            wall, cpu, report = timed(lambda: build(config))  # noqa: B023 - called at once
            best["warm"] = min(best["warm"], (wall, cpu))
            written = max(written, len(report.written))
    base, cold, warm = best["base"][0], best["cold"][0], best["warm"][0]
    jobs = args.jobs or os.cpu_count()
    load_after = os.getloadavg()[0]
    print(f"machine: {os.cpu_count()} CPUs, {jobs} worker processes, load average "
          f"{load_before:.1f} before, {load_after:.1f} after")
    print(f"creating one file in {tempfile.gettempdir()}: {create_us:.0f} us (median of 400; "
          "about 6 us on a quiet ext4, see file_creation_us)")
    print(f"ast.parse, 1 fresh process : {base:7.2f}s  cpu {best['base'][1]:7.2f}s  "
          f"({n_files} files)")
    print(f"indexgen cold build        : {cold:7.2f}s  cpu {best['cold'][1]:7.2f}s  "
          f"({pages} pages) ratio {cold / base:.2f}x, target <= {COLD_TARGET:.2f}x")
    print(f"indexgen rebuild, no change: {warm:7.2f}s  cpu {best['warm'][1]:7.2f}s  "
          f"({written} pages written) ratio {warm / base:.2f}x, target <= {WARM_TARGET:.2f}x")
    results = {"files": n_files, "jobs": jobs, "load_average": [load_before, load_after],
               "baseline_s": base, "baseline_cpu_s": best["base"][1], "cold_s": cold,
               "warm_s": warm,
               "cold_cpu_s": best["cold"][1], "warm_cpu_s": best["warm"][1],
               "cold_ratio": cold / base, "warm_ratio": warm / base,
               "file_creation_us": create_us}
    if args.large:
        rows = large_files(args.repeat)
        for size, seconds in rows:
            print(f"extract one {size / 1e6:4.1f} MB file      : {seconds:7.2f}s")
        results["large"] = [{"bytes": size, "seconds": seconds} for size, seconds in rows]
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    ok = cold <= COLD_TARGET * base and warm <= WARM_TARGET * base and not written
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
