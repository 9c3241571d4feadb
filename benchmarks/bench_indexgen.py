"""Benchmark indexgen on the installed torch package against a bare ``ast.parse``.

Measured side by side in one run:

1. baseline: read and ``ast.parse`` every ``.py`` file of torch, on one core, in a fresh
   Python process that does nothing else (:func:`baseline`);
2. cold build: ``indexgen.build`` into an empty temporary folder (``--jobs``, default all
   cores), in a fresh process too (:func:`fresh_build`: a process that has run builds before
   has a larger heap, which slows the next build as it slowed the floor);
3. rebuild with nothing changed: the same build again, in another fresh process.

Targets: cold build <= 1.5x baseline; no-change rebuild <= 0.1x baseline (and it writes
nothing).  With ``--repeat N`` the three measurements alternate N times and the best of each
counts (of the large-module timings too), which keeps a burst of load from another process from
deciding the result.  CPU
seconds (this process plus its workers) are printed too: they show the work done, independent
of contention.  ``--large`` adds generated modules of 0.1, 0.4 and 2 MB and times the
extraction of each on one core (analysis must grow linearly with size).  ``--json PATH``
writes the numbers.  Prints the times and ratios and exits 1 if a target is missed.  Run by
hand (``python benchmarks/bench_indexgen.py --repeat 3``); it is not part of the unit tests.

Pages go to a temporary folder under ``$TMPDIR`` (``TMPDIR=/dev/shm`` keeps them in memory,
which takes the disk's cost of creating 5,251 files out of the build; see the guide's *The
file system*); the results name the folder.

``--against DIR`` compares instead: ``--repeat`` rounds of a floor and two cold builds, this
checkout's and that of the ``indexgen`` package in DIR (``git archive <commit> tools/indexgen
| tar -x -C /tmp/old`` gives ``/tmp/old/tools``), in alternating order, each build in a fresh
process; it prints every run with the load average and the medians.

``--stages`` runs one cold build with its steps timed (:func:`stages`): the CPU seconds of each
step of the calling process (discover, summarize, the global pass and its parts, folder pages,
manifest) and of each kind of work in each worker (extract, prepare, render, and their
parts), next to the floor's; with ``--against DIR``, of that indexgen; with ``--profile
DIR``, a cProfile file per step as well.
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

from indexgen.extract.discover import walk_python_files
from indexgen.extract.pipeline import extract_source

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
# commit's ``tools`` folder given on PYTHONPATH, or this checkout's): wall and CPU seconds
# (the process and its workers) and the number of pages written on stdout.
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
report = build(config)
print(time.perf_counter() - t, cpu() - c, len(report.written))
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
                ) -> tuple[float, float, int]:
    """Wall and CPU seconds of one build of ``root`` into ``out`` in a fresh process (a cold
    build when ``out`` does not exist, else a rebuild), and the pages it wrote; ``tools``: the
    folder holding the ``indexgen`` package to use (None: the installed one)."""
    env = _env(tools)
    done = subprocess.run([sys.executable, "-c", _COLD, str(root), str(out), str(jobs)],
                          capture_output=True, text=True, check=True, env=env)
    wall, cpu, written = done.stdout.split()[-3:]
    return float(wall), float(cpu), int(written)


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
            wall, cpu, _written = fresh_build(root, folder / f"{name}{i}", jobs, where)
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


# The steps of a cold build, timed in a fresh interpreter: every function named in
# ``_STEPS`` is wrapped to add the CPU seconds of the thread that runs it (and, for the
# calling process's steps, the wall seconds); a worker process writes its own sums to
# ``OUT.worker-PID.json`` when it ends.  A name an older indexgen lacks is left out.  With a
# profile folder, each step of the calling process and each kind of worker message is also
# run under cProfile (one ``.prof`` file each; the times then include its overhead).
_STAGES = """\
import cProfile, json, os, resource, sys, time, importlib
from pathlib import Path
from indexgen import Config
from indexgen.run import build

root, out, jobs, prof = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
sums, profiles, T0 = {}, {}, time.perf_counter()

def wrap(owner, name, label, top):
    func = getattr(owner, name, None)
    if func is None:
        return
    def timed(*args, **kwargs):
        profile = None
        if prof and top:
            profile = profiles.setdefault(label, cProfile.Profile())
            profile.enable()
        cpu, wall = time.thread_time(), time.perf_counter()
        try:
            return func(*args, **kwargs)
        finally:
            if profile is not None:
                profile.disable()
            entry = sums.setdefault(label, [0.0, 0.0, 0, wall - T0])
            entry[0] += time.perf_counter() - wall
            entry[1] += time.thread_time() - cpu
            entry[2] += 1
    setattr(owner, name, timed)

for line in sys.stdin.read().splitlines():
    module, attr, label, top = line.split()
    owner = importlib.import_module(module)
    if "." in attr:
        cls, attr = attr.split(".")
        owner = getattr(owner, cls, None)
    if owner is not None:
        wrap(owner, attr, label, top == "1")

team = importlib.import_module("indexgen.run.team")
worker_main = team.worker_main

def measured_worker(*args):
    sums.clear()
    profiles.clear()
    try:
        worker_main(*args)
    finally:
        Path(f"{out}.worker-{os.getpid()}.json").write_text(json.dumps(sums))
        for label, profile in profiles.items():
            profile.dump_stats(os.path.join(prof, f"worker-{os.getpid()}-{label}.prof"))

team.worker_main = measured_worker

def cpu():
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime

config = Config(roots=[root], out=out, jobs=jobs, base=root.parent)
load = os.getloadavg()[0]
(me, kids), T0 = cpu(), time.perf_counter()
build(config)
wall = time.perf_counter() - T0
me2, kids2 = cpu()
for label, profile in profiles.items():
    profile.dump_stats(os.path.join(prof, f"main-{label}.prof"))
workers = [json.loads(f.read_text()) for f in sorted(out.parent.glob(out.name + ".worker-*.json"))]
print(json.dumps({"wall_s": wall, "main_cpu_s": me2 - me, "workers_cpu_s": kids2 - kids,
                  "load": [load, os.getloadavg()[0]], "main": sums, "workers": workers}))
"""

# (module, function, label, whether a profile folder gets a profile of it): the steps of
# the calling process (indexgen.run.plan), the work of the workers (indexgen.run.worker) and
# the parts of each; "of which" rows are printed under the row before them.
_STEPS = [
    ("indexgen.run.plan", "Plan.discover", "discover", 1),
    ("indexgen.run.plan", "Plan.hash_sources", "hash sources", 1),
    ("indexgen.run.plan", "Plan.summarize", "summarize", 1),
    ("indexgen.run.plan", "Plan._extracted", "  decode compact summaries", 0),
    ("indexgen.run.plan", "Plan.relate", "relate (global pass)", 1),
    ("indexgen.analyze.project", "Project.__init__", "  project tables", 0),
    ("indexgen.analyze.callgraph", "edges", "  call edges (types)", 0),
    ("indexgen.analyze.callgraph", "effects", "  effects", 0),
    ("indexgen.analyze.callgraph", "indirect_findings", "  indirect findings", 0),
    ("indexgen.analyze.callgraph", "inverses", "  inverse views", 0),
    ("indexgen.analyze.project", "find_tests", "  tests", 0),
    ("indexgen.run.plan", "Plan.choose_renders", "choose renders", 1),
    ("indexgen.run.plan", "Plan.render_files", "render files (waits for workers)", 1),
    ("indexgen.run.plan", "Plan._rendered", "  manifest lines", 0),
    ("indexgen.run.plan", "Plan.render_folders", "folder pages (helper thread)", 1),
    ("indexgen.run.plan", "Plan._release", "  free summaries", 0),
    ("indexgen.run.plan", "Plan.write_manifest", "write manifest", 1),
    ("indexgen.run.plan", "Plan.remove_orphans", "remove orphans", 1),
    ("indexgen.run.worker", "Store.extract", "extract", 1),
    ("indexgen.extract.pipeline", "parse_source", "  decode + ast.parse", 0),
    ("indexgen.extract.structure", "Structure.scan", "  structure", 0),
    ("indexgen.extract.pipeline", "walk", "  identifier walk", 0),
    ("indexgen.extract.pipeline", "classify_calls", "  classify calls", 0),
    ("indexgen.extract.pipeline", "attribute", "  attribute calls", 0),
    ("indexgen.extract.pipeline", "bind", "  bindings", 0),
    ("indexgen.extract.pipeline", "enrich", "  enrich", 0),
    ("indexgen.run.manifest", "summary_json", "  compact summary JSON", 0),
    ("indexgen.run.worker", "Store.full", "extract test files", 1),
    ("indexgen.run.worker", "Store.prepare_next", "prepare (while waiting)", 1),
    ("indexgen.run.jobs", "finish", "  signatures, griffe docstrings", 0),
    ("indexgen.run.jobs", "source_listing", "  source listing", 0),
    ("indexgen.run.jobs", "identifier_index", "  identifier index", 0),
    ("indexgen.run.jobs", "docs_ahead", "  docstrings ahead", 0),
    ("indexgen.run.jobs", "heads_ahead", "  entry heads ahead", 0),
    ("indexgen.run.worker", "Store.render", "render", 1),
    ("indexgen.run.manifest", "context_hash", "  context hash", 0),
    ("indexgen.run.jobs", "render_keywords", "  keyword page", 0),
    ("indexgen.run.jobs", "render_docs", "  analysis page", 0),
    ("indexgen.run.pageio", "emit", "  compare and write", 0),
]


def _key(label: str) -> str:
    """A step's key in the timed process's sums: its label without the indent, one word."""
    return label.strip().replace(" ", "_")


def stages(root: Path, jobs: int, folder: Path, tools: Path | None = None,
           profile: Path | None = None) -> dict:
    """One cold build in a fresh process with its steps timed (see ``_STAGES``): what the
    calling process and the workers spend their CPU seconds on.  Printed as a table next to
    the floor's CPU seconds; returned as measured."""
    env = _env(tools)
    if profile is not None:
        profile.mkdir(parents=True, exist_ok=True)
    floor_wall, floor_cpu, _n = baseline(root)
    steps = "\n".join(f"{m} {f} {_key(label)} {top}"
                      for m, f, label, top in _STEPS)
    done = subprocess.run([sys.executable, "-c", _STAGES, str(root), str(folder / "out"),
                           str(jobs), str(profile or "")], input=steps, capture_output=True,
                          text=True, check=True, env=env)
    found = json.loads(done.stdout.splitlines()[-1])
    found["floor_wall_s"], found["floor_cpu_s"] = floor_wall, floor_cpu
    workers = found["workers"]
    print(f"cold build: {found['wall_s']:.2f}s wall, {found['main_cpu_s']:.2f} CPU s in the "
          f"calling process, {found['workers_cpu_s']:.2f} in {len(workers)} workers; floor "
          f"{floor_wall:.2f}s ({floor_cpu:.2f} CPU s); load {found['load'][0]:.1f} -> "
          f"{found['load'][1]:.1f}")
    print(f"{'calling process (thread CPU)':40s} {'start':>6s} {'wall':>6s} {'cpu':>6s}")
    for m, _f, label, _top in _STEPS:
        key = _key(label)
        if key in found["main"] and not m.startswith(("indexgen.run.worker",
                                                      "indexgen.extract", "indexgen.run.jobs")):
            wall, cpu, _calls, start = found["main"][key]
            print(f"  {label:38s} {start:6.2f} {wall:6.2f} {cpu:6.2f}")
    print(f"{'workers (CPU s, each)':40s} " + " ".join(f"{f'w{i}':>6s}" for i in
                                                    range(len(workers))) + "    sum  /floor")
    for _m, _f, label, _top in _STEPS:
        key = _key(label)
        if any(key in w for w in workers):
            cpus = [w.get(key, [0, 0])[1] for w in workers]
            print(f"  {label:38s} " + " ".join(f"{c:6.2f}" for c in cpus)
                  + f" {sum(cpus):6.2f} {sum(cpus) / floor_cpu:5.2f}x")
    return found


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
    parser.add_argument("--stages", action="store_true",
                        help="one cold build with the CPU seconds of each step of the calling "
                             "process and of the workers (with --against: of that indexgen)")
    parser.add_argument("--profile", type=Path, default=None,
                        help="with --stages: write a cProfile file per step into this folder")
    args = parser.parse_args(argv)
    root = args.root or torch_root()
    if args.stages:
        with tempfile.TemporaryDirectory(prefix="indexgen-bench-") as tmp:
            found = stages(root, args.jobs or os.cpu_count() or 1, Path(tmp), args.against,
                           args.profile)
        if args.json:
            args.json.write_text(json.dumps(found, indent=2) + "\n")
        return 0
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
    jobs = args.jobs or os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="indexgen-bench-") as tmp:
        create_us = file_creation_us(Path(tmp))
        for i in range(max(1, args.repeat)):
            wall, cpu, n_files = baseline(root)
            best["base"] = min(best["base"], (wall, cpu))
            # Each build in a fresh process, as the floor: a process that has run builds
            # before has a larger heap, which slows the next one.
            out = Path(tmp) / f"out{i}"
            wall, cpu, pages = fresh_build(root, out, jobs)
            best["cold"] = min(best["cold"], (wall, cpu))
            wall, cpu, n_written = fresh_build(root, out, jobs)
            best["warm"] = min(best["warm"], (wall, cpu))
            written = max(written, n_written)
    base, cold, warm = best["base"][0], best["cold"][0], best["warm"][0]
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
               "file_creation_us": create_us, "pages_folder": tempfile.gettempdir()}
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
