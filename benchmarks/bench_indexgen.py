"""Benchmark indexgen on the installed torch package against a bare ``ast.parse``.

Measured side by side in one run:

1. baseline: read and ``ast.parse`` every ``.py`` file of torch, on one core, in a fresh
   Python process that does nothing else (:func:`baseline`);
2. cold build: ``indexgen.build`` into an empty temporary folder (``--jobs``, default all
   cores), in a fresh process too (:func:`fresh_build`: a process that has run builds before
   has a larger heap, which slows the next build as it slowed the floor);
3. rebuild with nothing changed: the same build again, in another fresh process.

Targets (issue 31): cold build <= 2.0x baseline on 2 cores with the pages on disk, a build
that keeps scaling with cores (<= 0.5x on 16), no-change rebuild <= 0.1x baseline (and it
writes nothing).  With ``--repeat N`` the three measurements alternate N times and the best of
each counts (of the large-module timings too), which keeps a burst of load from another
process from deciding the result.  CPU seconds of the calling process and of its workers are
printed apart: they show the work done, steadier than the wall under contention.  ``--large``
adds generated modules of 0.1, 0.4 and 2 MB and times the extraction of each on one core
(analysis must grow linearly with size).  ``--json PATH`` writes the numbers.  Prints the
times and ratios and exits 1 if a target is missed.  Run by hand (``python
benchmarks/bench_indexgen.py --repeat 3``); it is not part of the unit tests.

Pages go to a temporary folder under ``--pages DIR``: by default ``benchmarks/results``, on
the checkout's disk, as a user's pages are (``--pages /dev/shm`` keeps them in memory, which
takes the cost of creating 5,251 files out of the build; see *The file system* in
``docs/design/indexgen-speed.md``); the results name the folder and its file system.

``--against DIR`` compares instead: ``--repeat`` rounds of a floor and two cold builds, this
checkout's and that of the ``indexgen`` package in DIR (``git archive <commit> tools/indexgen
| tar -x -C /tmp/old`` gives ``/tmp/old/tools``), in alternating order, each build in a fresh
process; it prints every run with the load average and the medians.

``--stages`` runs one cold build with its steps timed (:mod:`indexgen_steps`): the CPU seconds
of each step of the calling process (discover, summarize, the global pass and its parts,
folder pages, manifest) and of each kind of work in each worker (extract, prepare, render,
and their parts), next to the floor's, then the same by phase with the wall projected on free
cores; with ``--against DIR``, of that indexgen; with ``--profile DIR``, a cProfile file per
step as well.

``--sweep 1,2,4,8,16`` runs a cold build with each number of workers: wall, CPU seconds of
the calling process (of which the global pass) and of the workers, and the wall projected
on as many free cores from the CPU seconds of each phase (:func:`indexgen_steps.sweep`).  The
projection is what a machine with fewer cores than workers can say about scaling.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import indexgen_steps  # noqa: E402
from indexgen.extract.discover import walk_python_files
from indexgen.extract.pipeline import extract_source

COLD_TARGET = 2.0
WARM_TARGET = 0.1
RESULTS = Path(__file__).resolve().parent / "results"


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


# One build in a fresh interpreter, with the indexgen found first on sys.path (an older
# commit's ``tools`` folder given on PYTHONPATH, or this checkout's): wall seconds, CPU
# seconds of the process and of its workers, and the number of pages written on stdout.
_COLD = """\
import resource, sys, time
from pathlib import Path
from indexgen import Config
from indexgen.run import build

def cpu():
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime

root, out, jobs = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
config = Config(roots=[root], out=out, jobs=jobs, base=root.parent)
(me, kids), t = cpu(), time.perf_counter()
report = build(config)
wall = time.perf_counter() - t
me2, kids2 = cpu()
print(wall, me2 - me, kids2 - kids, len(report.written))
"""


def _env(tools: Path | None) -> dict[str, str]:
    """This process's environment, with ``tools`` (a folder holding an ``indexgen``
    package) first on ``PYTHONPATH`` when given."""
    env = dict(os.environ)
    if tools is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(tools), env.get("PYTHONPATH", "")]).strip(
            os.pathsep)
    return env


def fresh_build(root: Path, out: Path, jobs: int, tools: Path | None = None
                ) -> tuple[float, float, float, int]:
    """Wall seconds, CPU seconds of the calling process and of its workers, of one build of
    ``root`` into ``out`` in a fresh process (a cold build when ``out`` does not exist, else
    a rebuild), and the pages it wrote; ``tools``: the folder holding the ``indexgen``
    package to use (None: the installed one)."""
    env = _env(tools)
    done = subprocess.run([sys.executable, "-c", _COLD, str(root), str(out), str(jobs)],
                          capture_output=True, text=True, check=True, env=env)
    wall, main_cpu, workers_cpu, written = done.stdout.split()[-4:]
    return float(wall), float(main_cpu), float(workers_cpu), int(written)


def against(root: Path, tools: Path, rounds: int, jobs: int, folder: Path) -> dict:
    """Cold builds alternated with those of the indexgen in ``tools`` (both in fresh
    processes, the floor measured before each pair): every run, and the medians."""
    # Every run: (wall, CPU seconds, load average when it started).
    runs: dict[str, list[tuple[float, float, float]]] = {"this": [], "against": [], "floor": []}
    for i in range(rounds):
        load = os.getloadavg()[0]
        floor_wall, floor_cpu, _n = baseline(root)
        runs["floor"].append((floor_wall, floor_cpu, load))
        print(f"  round {i + 1} floor   : {floor_wall:6.2f}s  cpu {floor_cpu:6.2f}s  "
              f"(load {load:.1f})")
        order = [("this", Path(__file__).resolve().parents[1] / "tools"), ("against", tools)]
        for name, where in order if i % 2 == 0 else reversed(order):
            load = os.getloadavg()[0]
            wall, main_cpu, workers_cpu, _written = fresh_build(root, folder / f"{name}{i}",
                                                                jobs, where)
            cpu = main_cpu + workers_cpu
            runs[name].append((wall, cpu, load))
            print(f"  round {i + 1} {name:8s}: {wall:6.2f}s  cpu {cpu:6.2f}s  (load {load:.1f}) "
                  f"{wall / floor_wall:.2f}x of this round's floor")

    summary = {name: {"wall_s": statistics.median(r[0] for r in found),
                      "cpu_s": statistics.median(r[1] for r in found)}
               for name, found in runs.items()}
    for name in ("this", "against"):
        print(f"median {name:8s}: {summary[name]['wall_s']:6.2f}s  cpu "
              f"{summary[name]['cpu_s']:6.2f}s  ratio "
              f"{summary[name]['wall_s'] / summary['floor']['wall_s']:.2f}x of the median floor "
              f"{summary['floor']['wall_s']:.2f}s")
    return {"tools": str(tools), "rounds": runs, "medians": summary}


def stages(root: Path, jobs: int, folder: Path, tools: Path | None = None,
           profile: Path | None = None) -> dict:
    """One cold build in a fresh process with its steps timed
    (:func:`indexgen_steps.timed_build`): what the calling process and the workers spend
    their CPU seconds on, by step and by phase, next to the floor's CPU seconds."""
    floor_wall, floor_cpu, _n = baseline(root)
    found = indexgen_steps.timed_build(root, jobs, folder / "out", _env(tools), profile)
    found["floor_wall_s"], found["floor_cpu_s"] = floor_wall, floor_cpu
    print(f"cold build: {found['wall_s']:.2f}s wall, {found['main_cpu_s']:.2f} CPU s in the "
          f"calling process, {found['workers_cpu_s']:.2f} in {len(found['workers'])} workers; "
          f"floor {floor_wall:.2f}s ({floor_cpu:.2f} CPU s); load {found['load'][0]:.1f} -> "
          f"{found['load'][1]:.1f}; pages in {_filesystem(folder)}")
    indexgen_steps.print_steps(found, floor_cpu)
    indexgen_steps.print_phases(found, floor_cpu)
    return found


def _filesystem(folder: Path) -> str:
    """``folder`` and the type of the file system it lies on (``ext4``, ``tmpfs``...)."""
    best, kind = "", "unknown"
    try:
        with open("/proc/mounts") as fh:
            for line in fh:
                fields = line.split()
                if len(fields) > 2 and str(folder.resolve()).startswith(fields[1]) \
                        and len(fields[1]) >= len(best):
                    best, kind = fields[1], fields[2]
    except OSError:
        pass
    return f"{folder} ({kind})"


def _jobs_list(text: str) -> list[int]:
    try:
        found = [int(x) for x in text.split(",")]
    except ValueError:
        found = []
    if not found or min(found) < 1:
        raise argparse.ArgumentTypeError(f"--sweep takes worker counts such as 1,2,4,8,16, "
                                         f"not {text!r}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=None, help="package to document (torch)")
    parser.add_argument("--jobs", type=int, default=0, help="worker processes (default: CPUs)")
    parser.add_argument("--repeat", type=int, default=1, help="rounds; the best of each counts")
    parser.add_argument("--large", action="store_true", help="also time large generated files")
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    parser.add_argument("--pages", type=Path, default=RESULTS, metavar="DIR",
                        help="folder the pages are written under, in a temporary subfolder "
                             "(default: benchmarks/results, on the checkout's disk, as a "
                             "user's pages are; /dev/shm keeps them in memory)")
    parser.add_argument("--against", type=Path, default=None,
                        help="a folder holding another indexgen package (an older commit's "
                             "tools/): alternate cold builds with it, each in a fresh process")
    parser.add_argument("--stages", action="store_true",
                        help="one cold build with the CPU seconds of each step of the calling "
                             "process and of the workers (with --against: of that indexgen)")
    parser.add_argument("--profile", type=Path, default=None,
                        help="with --stages: write a cProfile file per step into this folder")
    parser.add_argument("--sweep", type=_jobs_list, default=None, metavar="N,N,...",
                        help="cold builds with each number of worker processes: wall, CPU "
                             "seconds of the calling process and of the workers, and the "
                             "wall projected on as many free cores")
    args = parser.parse_args(argv)
    root = args.root or torch_root()
    jobs = args.jobs or os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="indexgen-bench-", suffix=".tmp",
                                     dir=args.pages) as tmp:
        folder = Path(tmp)
        if args.stages:
            found = stages(root, jobs, folder, args.against, args.profile)
        elif args.sweep:
            floor_wall, floor_cpu, _n = baseline(root)
            print(f"pages in {_filesystem(folder)}")
            found = {"floor_wall_s": floor_wall, "floor_cpu_s": floor_cpu,
                     "pages_folder": _filesystem(folder),
                     "runs": indexgen_steps.sweep(root, args.sweep, folder, _env(args.against),
                                                  (floor_wall, floor_cpu))}
        elif args.against is not None:
            found = against(root, args.against, max(1, args.repeat), jobs, folder)
        else:
            found = compare(root, jobs, folder, args.repeat, args.large)
    if args.json:
        args.json.write_text(json.dumps(found, indent=2) + "\n")
    return 0 if found.get("pass", True) else 1


def compare(root: Path, jobs: int, folder: Path, repeat: int, large: bool) -> dict:
    """The floor, a cold build and a rebuild with nothing changed, ``repeat`` times
    alternated (the best of each counts): printed, and returned with ``pass`` telling
    whether the targets are met."""
    best = {"base": (float("inf"), 0.0), "cold": (float("inf"), 0.0, 0.0),
            "warm": (float("inf"), 0.0, 0.0)}
    n_files = pages = written = 0
    # Every round builds into a folder of its own, all removed at the end: removing a round's
    # 5,000 pages right before the next cold build made that build pay for it (ext4 skips
    # inodes deleted in the last minute or more when it allocates new ones, and that search
    # made creating a page file about 30x slower: see docs/design/indexgen-speed.md).
    load_before = os.getloadavg()[0]
    create_us = file_creation_us(folder)
    for i in range(max(1, repeat)):
        wall, cpu, n_files = baseline(root)
        best["base"] = min(best["base"], (wall, cpu))
        # Each build in a fresh process, as the floor: a process that has run builds
        # before has a larger heap, which slows the next one.
        out = folder / f"out{i}"
        wall, main_cpu, workers_cpu, pages = fresh_build(root, out, jobs)
        best["cold"] = min(best["cold"], (wall, main_cpu, workers_cpu))
        wall, main_cpu, workers_cpu, n_written = fresh_build(root, out, jobs)
        best["warm"] = min(best["warm"], (wall, main_cpu, workers_cpu))
        written = max(written, n_written)
    base, cold, warm = best["base"][0], best["cold"][0], best["warm"][0]
    load_after = os.getloadavg()[0]
    where = _filesystem(folder)
    print(f"machine: {os.cpu_count()} CPUs, {jobs} worker processes, load average "
          f"{load_before:.1f} before, {load_after:.1f} after; pages in {where}")
    print(f"creating one file there: {create_us:.0f} us (median of 400; about 6 us on a "
          "quiet ext4, see file_creation_us)")
    print(f"ast.parse, 1 fresh process : {base:7.2f}s  cpu {best['base'][1]:7.2f}s  "
          f"({n_files} files)")
    for name, label, n, target in (("cold", "indexgen cold build        ", pages, COLD_TARGET),
                                   ("warm", "indexgen rebuild, no change", written,
                                    WARM_TARGET)):
        wall, main_cpu, workers_cpu = best[name]
        print(f"{label}: {wall:7.2f}s  cpu {main_cpu:6.2f}s calling process + "
              f"{workers_cpu:6.2f}s workers ({n} pages written) ratio {wall / base:.2f}x, "
              f"target <= {target:.2f}x")
    results = {"files": n_files, "jobs": jobs, "load_average": [load_before, load_after],
               "baseline_s": base, "baseline_cpu_s": best["base"][1], "cold_s": cold,
               "warm_s": warm, "cold_main_cpu_s": best["cold"][1],
               "cold_workers_cpu_s": best["cold"][2], "warm_main_cpu_s": best["warm"][1],
               "warm_workers_cpu_s": best["warm"][2],
               "cold_ratio": cold / base, "warm_ratio": warm / base,
               "file_creation_us": create_us, "pages_folder": where}
    if large:
        rows = large_files(repeat)
        for size, seconds in rows:
            print(f"extract one {size / 1e6:4.1f} MB file      : {seconds:7.2f}s")
        results["large"] = [{"bytes": size, "seconds": seconds} for size, seconds in rows]
    results["pass"] = cold <= COLD_TARGET * base and warm <= WARM_TARGET * base and not written
    print("PASS" if results["pass"] else "FAIL")
    return results


if __name__ == "__main__":
    sys.exit(main())
