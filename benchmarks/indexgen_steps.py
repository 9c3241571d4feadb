"""A cold indexgen build with its steps timed, by process and by phase (for
``bench_indexgen.py --stages`` and ``--sweep``).

:func:`timed_build` runs one cold build in a fresh interpreter (``_TIMED``) in which every
function named in :data:`STEPS` is wrapped to add up the CPU seconds of the thread that runs
it (for the calling process's top steps also the wall seconds and the CPU seconds of the
whole process, feeder and helper threads included); each worker process writes its own sums
when it ends.  A name an older indexgen lacks is left out.  With a profile folder, each top
step of the calling process and each kind of worker message also runs under cProfile (one
``.prof`` file each; the times then include its overhead).  From Python 3.12 a process
holds one profile at a time: a step that starts while another is profiled (the folder pages'
thread during the render) is timed but not profiled, and a forked process drops the profile
it inherits.

:func:`phases` cuts the build into the phases that follow one another (start, extract, global
pass, render, finish): in each, the CPU seconds of the calling process and of the busiest
worker.  On enough real cores a phase lasts about the larger of the two, so their sum,
:func:`projected_wall`, is what the build would take there (Amdahl's law with the serial
part measured, not assumed): the calling process's seconds are the part that more workers
do not shorten.  :func:`sweep` prints that for several worker counts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

_TIMED = """\
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
            try:
                profile.enable()
            except ValueError:  # Python 3.12: one profile a process (the render's, not the
                profile = None  # folder thread's)
        cpu, wall, proc = time.thread_time(), time.perf_counter(), time.process_time()
        try:
            return func(*args, **kwargs)
        finally:
            if profile is not None:
                profile.disable()
            entry = sums.setdefault(label, [0.0, 0.0, 0, wall - T0, 0.0])
            entry[0] += time.perf_counter() - wall
            entry[1] += time.thread_time() - cpu
            entry[2] += 1
            entry[4] += time.process_time() - proc
    setattr(owner, name, timed)

for line in sys.stdin.read().splitlines():
    module, attr, label, top = line.split()
    owner = importlib.import_module(module)
    if "." in attr:
        cls, attr = attr.split(".")
        owner = getattr(owner, cls, None)
    if owner is not None:
        wrap(owner, attr, label, top == "1")

def forget_inherited():
    # a forked process inherits the profile running in the thread that forked it: stop it
    # there (on Python 3.12 an active one also refuses any other: sys.monitoring)
    for profile in profiles.values():
        profile.disable()
    profiles.clear()

os.register_at_fork(after_in_child=forget_inherited)

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

try:  # the processes the global pass forks (indexgen.run.fanout), where it has them
    fanout = importlib.import_module("indexgen.run.fanout")
except ImportError:
    fanout = None
# the function each forked process computes its shard with: _send since the processes are
# forked as a tree (it leaves out the forks an inner process of the tree makes), _child before
helper_name = next((n for n in ("_send", "_child") if hasattr(fanout, n)), None) if fanout else None
if helper_name is not None:
    child = getattr(fanout, helper_name)

    def measured_child(*args):
        cpu = time.process_time()
        try:
            child(*args)
        finally:
            Path(f"{out}.helper-{os.getpid()}.json").write_text(
                json.dumps({"cpu": time.process_time() - cpu}))

    setattr(fanout, helper_name, measured_child)

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
helpers = [json.loads(f.read_text())["cpu"]
           for f in sorted(out.parent.glob(out.name + ".helper-*.json"))]
print(json.dumps({"wall_s": wall, "main_cpu_s": me2 - me, "workers_cpu_s": kids2 - kids,
                  "load": [load, os.getloadavg()[0]], "main": sums, "workers": workers,
                  "helpers": helpers}))
"""

STEPS = [
    ("indexgen.run.plan", "Plan.discover", "discover", 1),
    ("indexgen.run.plan", "Plan.hash_sources", "hash sources", 1),
    ("indexgen.run.plan", "Plan.summarize", "summarize", 1),
    ("indexgen.run.plan", "Plan._extracted", "  decode compact summaries", 0),
    ("indexgen.run.plan", "Plan.relate", "relate (global pass)", 1),
    ("indexgen.analyze.project", "Project.__init__", "  project tables", 0),
    ("indexgen.analyze.callgraph", "edges", "  call edges (types)", 0),
    ("indexgen.analyze.callgraph", "effects", "  effects", 0),
    ("indexgen.analyze.callgraph", "inverses", "  inverse views", 0),
    ("indexgen.analyze.assemble", "find_tests", "  tests", 0),
    ("indexgen.analyze.assemble", "_finish_run", "  contexts finished and sealed here", 0),
    ("indexgen.run.plan", "Plan.choose_renders", "choose renders", 1),
    ("indexgen.run.plan", "Plan.render_files", "render files (waits for workers)", 1),
    ("indexgen.run.plan", "Plan._rendered", "  manifest lines", 0),
    ("indexgen.run.plan", "Plan.render_folders", "folder pages (helper thread)", 1),
    ("indexgen.run.plan", "Plan._release", "  free summaries", 0),
    ("indexgen.run.dispatch", "Feeder.run", "feeder threads (pickle, send)", 0),
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
    ("indexgen.run.jobs", "keywords_head", "  keyword page head ahead", 0),
    ("indexgen.run.jobs", "sections_ahead", "  context-free sections ahead", 0),
    ("indexgen.run.worker", "Store.render", "render", 1),
    ("indexgen.run.jobs", "render_keywords", "  keyword page", 0),
    ("indexgen.run.jobs", "render_docs", "  analysis page", 0),
    ("indexgen.run.pageio", "emit", "  compare and write", 0),
]
"""(module, function, label, whether a profile folder gets a profile of it): the steps of
the calling process (:mod:`indexgen.run.plan`), the work of the workers
(:mod:`indexgen.run.worker`) and the parts of each; indented rows are parts of the row
above them."""

PHASES = [
    ("start", ("discover", "hash_sources"), ()),
    ("extract", ("summarize",), ("extract",)),
    ("global pass", ("relate_(global_pass)",), ("prepare_(while_waiting)",
                                                "extract_test_files")),
    ("render", ("choose_renders", "render_files_(waits_for_workers)"), ("render",)),
    ("finish", ("write_manifest", "remove_orphans"), ()),
]
"""The phases of a cold build, one after the other: (name, the top steps of the calling
process in it, the kinds of worker work in it).  Workers prepare while the global pass runs
(and rarely otherwise); the folder pages run in a helper thread during the render."""


def key(label: str) -> str:
    """A step's key in the timed process's sums: its label without the indent, one word."""
    return label.strip().replace(" ", "_")


def timed_build(root: Path, jobs: int, out: Path, env: dict[str, str],
                profile: Path | None = None) -> dict:
    """One cold build of ``root`` into ``out`` (which must not exist) in a fresh process,
    its steps timed (see ``_TIMED``); the sums as measured."""
    if profile is not None:
        profile.mkdir(parents=True, exist_ok=True)
    steps = "\n".join(f"{m} {f} {key(label)} {top}" for m, f, label, top in STEPS)
    done = subprocess.run([sys.executable, "-c", _TIMED, str(root), str(out), str(jobs),
                           str(profile or "")], input=steps, capture_output=True, text=True,
                          check=False, env=env)
    if done.returncode:
        raise SystemExit(f"the timed build with {jobs} workers failed (exit status "
                         f"{done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def phases(found: dict) -> list[dict]:
    """Per phase: the calling process's wall and CPU seconds (all its threads) and the CPU
    seconds of each worker (see :data:`PHASES`)."""
    rows = []
    for name, main_steps, worker_steps in PHASES:
        entries = [found["main"][s] for s in main_steps if s in found["main"]]
        rows.append({
            "phase": name,
            "wall_s": sum(e[0] for e in entries),
            "main_cpu_s": sum(e[4] for e in entries),
            "workers_cpu_s": [sum(w.get(s, [0, 0])[1] for s in worker_steps)
                              for w in found["workers"]],
            "helpers_cpu_s": found.get("helpers", []) if name == "global pass" else [],
        })
    return rows


def projected_wall(found: dict) -> float:
    """The wall seconds of the build on as many free cores as it had workers (plus one for
    the calling process): each phase lasts the largest of the CPU seconds of the calling
    process, of the busiest worker and (in the global pass) of the busiest process the pass
    forked.  (Workers preparing and forked processes share the cores in the pass; with
    as many cores as processes it is the largest, which is what this assumes.)"""
    return sum(max([row["main_cpu_s"], *row["workers_cpu_s"], *row["helpers_cpu_s"]])
               for row in phases(found))  # a list: with one worker, max of one number


def print_steps(found: dict, floor_cpu: float) -> None:
    """The ``--stages`` tables: the calling process's steps, each worker's work."""
    workers = found["workers"]
    print(f"{'calling process':40s} {'start':>6s} {'wall':>6s} {'thread':>6s} {'proc':>6s}")
    for m, _f, label, top in STEPS:
        k = key(label)
        if k in found["main"] and not m.startswith(("indexgen.run.worker", "indexgen.extract",
                                                    "indexgen.run.jobs")):
            wall, cpu, _calls, start, proc = found["main"][k]
            print(f"  {label:38s} {start:6.2f} {wall:6.2f} {cpu:6.2f} "
                  + (f"{proc:6.2f}" if top else ""))
    print(f"{'workers (CPU s, each)':40s} " + " ".join(f"{f'w{i}':>6s}" for i in
                                                    range(len(workers))) + "    sum  /floor")
    for _m, _f, label, _top in STEPS:
        k = key(label)
        if any(k in w for w in workers):
            cpus = [w.get(k, [0, 0])[1] for w in workers]
            print(f"  {label:38s} " + " ".join(f"{c:6.2f}" for c in cpus)
                  + f" {sum(cpus):6.2f} {sum(cpus) / floor_cpu:5.2f}x")


def print_phases(found: dict, floor_cpu: float) -> None:
    """The phases of one build: what the calling process and the busiest worker spent."""
    print(f"{'phase':14s} {'wall':>6s} {'main CPU':>9s} {'busiest worker':>15s} "
          f"{'all workers':>12s} {'forked (each)':>14s}")
    for row in phases(found):
        cpus = row["workers_cpu_s"]
        print(f"  {row['phase']:12s} {row['wall_s']:6.2f} {row['main_cpu_s']:9.2f} "
              f"{max(cpus, default=0.0):15.2f} {sum(cpus):12.2f} "
              + " ".join(f"{c:.2f}" for c in row["helpers_cpu_s"]))
    projected = projected_wall(found)
    print(f"  projected wall on {len(found['workers']) + 1} free cores: {projected:.2f} s, "
          f"{projected / floor_cpu:.2f}x of the floor's CPU seconds")


def sweep(root: Path, jobs_list: list[int], folder: Path, env: dict[str, str],
          floor: tuple[float, float]) -> list[dict]:
    """A cold build for each worker count of ``jobs_list`` (fresh processes, pages under
    ``folder``): its wall and CPU seconds, the calling process's part, and the projected wall
    on as many free cores.  On a machine with fewer cores than workers the measured wall
    says little (the workers share the cores); the CPU seconds and the projection still
    hold, since they add up what each process did."""
    floor_wall, floor_cpu = floor
    print(f"floor: {floor_wall:.2f}s wall, {floor_cpu:.2f} CPU s; {os.cpu_count()} CPUs here")
    print(f"{'jobs':>4s} {'wall':>7s} {'ratio':>6s} {'main CPU':>9s} {'pass':>6s} "
          f"{'workers CPU':>12s} {'projected':>10s} {'ratio':>6s} {'load':>11s}")
    rows = []
    for jobs in jobs_list:
        found = timed_build(root, jobs, folder / f"sweep-{jobs}", env)
        projected = projected_wall(found)
        relate = found["main"].get("relate_(global_pass)", [0, 0, 0, 0, 0])[4]
        print(f"{jobs:4d} {found['wall_s']:6.2f}s {found['wall_s'] / floor_wall:5.2f}x "
              f"{found['main_cpu_s']:9.2f} {relate:6.2f} {found['workers_cpu_s']:12.2f} "
              f"{projected:9.2f}s {projected / floor_cpu:5.2f}x "
              f"{found['load'][0]:5.1f}->{found['load'][1]:4.1f}")
        rows.append({"jobs": jobs, **found, "phases": phases(found),
                     "projected_wall_s": projected})
    print("ratio: wall over the floor's wall; projected: the sum over the phases of the larger "
          "of the calling process's and the busiest worker's CPU seconds, over the floor's "
          "CPU seconds (the wall on as many free cores, see indexgen_steps)")
    return rows
