"""Count crashes at exit over many runs (not a test: each run costs a torchrun start).

``python tests/reliability/repeat_exit.py --runs 100 [--demo] [--impl torch]``

Runs ``make demo``'s command (``--demo``) or ``train_and_exit.py`` under torchrun, one run
at a time with a pause between runs, and counts runs that failed (a non-zero exit status,
or ``terminate called`` in the output, the signature of the gloo-worker-at-exit race).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--demo", action="store_true", help="run fsdp_ref.examples.demo instead")
    parser.add_argument("--impl", choices=["fsdp_ref", "torch"], default="fsdp_ref")
    parser.add_argument("--pause", type=float, default=1.0, help="seconds between runs")
    args = parser.parse_args()
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]
    target = ["-m", "fsdp_ref.examples.demo"] if args.demo else [str(HERE / "train_and_exit.py"), "--impl", args.impl]
    failed = 0
    for i in range(1, args.runs + 1):
        proc = subprocess.run(torchrun + target, capture_output=True, text=True)
        out = proc.stdout + proc.stderr
        bad = proc.returncode != 0 or "terminate called" in out
        failed += bad
        print(f"run {i}: rc={proc.returncode}{'  CRASH' if bad else ''}  ({failed} of {i} failed)",
              flush=True)
        if bad:  # the evidence: the abort line and torchrun's exit codes
            for line in out.splitlines():
                if "terminate called" in line or "exitcode" in line or "Error" in line[:40]:
                    print(f"    {line.strip()}", flush=True)
        time.sleep(args.pause)
    print(f"{failed} of {args.runs} runs failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
