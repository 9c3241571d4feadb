"""When each part of indexgen's global pass runs, in the calling process and in the processes
it forks: the pass alone, from the compact summaries of a build's manifest.

``bench_indexgen.py --stages`` gives a whole build's CPU seconds by step; this gives the
pass's timeline with ``N`` pass processes (``fanout.shard_count`` forced), which is what
decides the wall on many cores: the calling process's serial parts, and in each fan-out the
busiest of the processes.  Each forked process appends its records to a file, read at the
end.  The contexts are sealed as a build seals them (their hash and their pickle).

    .venv/bin/python benchmarks/indexgen_pass_timeline.py OUT/.indexgen-manifest.json 16

Output: the calling process's parts (start and end in seconds from the pass's start, CPU
seconds), then per round the calling process's CPU seconds in the fan-out against the
busiest forked process's, and the pass *projected* on free cores: the calling process's
CPU seconds with each fan-out's part replaced by the larger of the two (on a machine with
fewer cores than processes, the wall itself measures the contention).

``--count-calls`` (one process only) also counts the Python function calls the pass makes,
under ``cProfile``: a measure of its work that the machine's load does not change, for an
A/B of two versions on a shared machine, where CPU seconds of the same code vary by 15%
from run to run (``PYTHONPATH=<other>/tools`` runs another version's pass on the same
manifest).  It slows the pass about twice, so its seconds say nothing then.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import gc
import json
import os
import pickle
import pstats
import tempfile
import time
from functools import partial
from pathlib import Path

from indexgen.analyze import assemble, callgraph, second_round
from indexgen.analyze.flows import Flows
from indexgen.analyze.project import Project
from indexgen.run import fanout
from indexgen.run import manifest as mf

T0 = time.perf_counter()
MAIN = os.getpid()
EVENTS: list[tuple] = []
LOG = Path(tempfile.gettempdir()) / f"indexgen-pass-timeline-{MAIN}.jsonl"
#: (module, function, whether forked processes record it too)
PARTS = [(callgraph, "_first_round", True), (second_round, "_retried_files", True),
         (callgraph, "second_round", False), (callgraph, "effects", False),
         (callgraph, "inverses", False), (assemble, "find_tests", False),
         (assemble, "_finish_run", True), (fanout, "fork_map", False),
         (fanout, "_send", True), (Flows, "set_flows", False)]


def _timed(owner, name: str, in_children: bool) -> None:
    func = getattr(owner, name)

    def timed(*args, **kwargs):
        t, cpu = time.perf_counter(), time.thread_time()
        try:
            return func(*args, **kwargs)
        finally:
            record = (name, os.getpid(), round(t - T0, 3), round(time.perf_counter() - T0, 3),
                      round(time.thread_time() - cpu, 3))
            if os.getpid() == MAIN:
                EVENTS.append(record)
            elif in_children:
                with LOG.open("a") as out:
                    out.write(json.dumps(record) + "\n")

    setattr(owner, name, timed)


def main() -> None:
    global T0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("manifest", type=Path, help="a build's .indexgen-manifest.json")
    parser.add_argument("processes", type=int, help="pass processes (fanout.shard_count)")
    parser.add_argument("--count-calls", action="store_true",
                        help="count the pass's Python function calls (one process only)")
    args = parser.parse_args()
    if args.count_calls and args.processes != 1:
        parser.error("--count-calls counts the calls of one process: give 1 process")
    compacts = [mf.decode_summary(e["summary"])
                for _key, e in sorted(mf.read(args.manifest)["files"].items())]
    for owner, name, in_children in PARTS:
        _timed(owner, name, in_children)
    LOG.unlink(missing_ok=True)
    gc.disable()  # as in a build
    T0, cpu0 = time.perf_counter(), time.thread_time()
    profile = cProfile.Profile() if args.count_calls else None
    if profile is not None:
        profile.enable()
    project = Project(compacts, {})
    project.contexts(fan=partial(fanout.fork_map, here=True), shards=args.processes,
                     seal=lambda key, ctx: (mf.context_hash(ctx, key),
                                            pickle.dumps(ctx, pickle.HIGHEST_PROTOCOL)))
    wall, cpu = time.perf_counter() - T0, time.thread_time() - cpu0
    if profile is not None:
        profile.disable()
        print(f"Python function calls of the pass: {pstats.Stats(profile).total_calls:,}")
    print(f"{args.processes} processes: the pass {wall:.2f} s wall, {cpu:.2f} CPU s in the "
          f"calling process")
    for name, _pid, start, end, used in EVENTS:
        print(f"  calling process  {name:16s} {start:6.3f} -> {end:6.3f}  {used:5.2f} CPU s")
    records = [json.loads(line) for line in LOG.open()] if LOG.exists() else []
    LOG.unlink(missing_ok=True)
    inner = {r[1]: r[0] for r in records if r[0] != "_send"}  # process -> what it ran
    sends = collections.defaultdict(list)  # what it ran -> CPU s of each process
    for r in records:
        if r[0] == "_send":
            sends[inner.get(r[1], "?")].append(r[4])
    fans = [e for e in EVENTS if e[0] == "fork_map"]
    projected = cpu - sum(e[4] for e in fans)
    for event, name in zip(fans, ["_first_round", "_retried_files", "_finish_run"]):
        busiest = max(sends.get(name, [0.0]))
        projected += max(event[4], busiest)
        print(f"  fan-out {name:16s} calling process {event[4]:.2f} CPU s, busiest forked "
              f"{busiest:.2f}, all forked {sum(sends.get(name, [])):.2f} "
              f"({len(sends.get(name, []))} processes, ended by {event[3]:.3f} s)")
    print(f"  projected on free cores: {projected:.2f} s")


if __name__ == "__main__":
    main()
