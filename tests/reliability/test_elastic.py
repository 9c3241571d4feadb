"""Elastic restart: ``torchrun --max-restarts 1`` after a rank fails mid-step resumes from
the last complete DCP checkpoint and ends bit-identical to an uninterrupted run.

``TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1`` gives each attempt a fresh TCPStore; without it
the restarted ranks meet the failed attempt's keys in torchrun's shared store and wait in
``init_process_group`` (docs/design/reliability.md, "Elastic restart").
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_restart_resumes_bit_identical(tmp_path, pool2):
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node",
           "2", "--max-restarts", "1", "tests/reliability/elastic_train.py",
           "--ckpt", str(tmp_path / "elastic"), "--out", str(tmp_path / "out"), "--fail-at", "2"]
    env = dict(os.environ, TORCH_DISABLE_SHARE_RDZV_TCP_STORE="1")
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=400)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    assert "simulated failure in step 2 on rank 1" in out
    # Rank 0 may or may not print gloo's "Connection closed by peer" before torchrun stops it
    # (SIGTERM once rank 1 has failed): a race of the launcher, not ours, so not asserted.
    assert "attempt 1: resumed after step 1" in out and "attempt 1: trained steps 2..3" in out

    expected = pool2.run("tests.reliability.elastic_train:uninterrupted",
                         ckpt=str(tmp_path / "straight"))
    for rank, want in enumerate(expected):
        got = pickle.loads((tmp_path / "out" / f"rank{rank}.bin").read_bytes())
        assert got.keys() == want.keys() and len(got) == 6
        differ = [k for k in want if got[k] != want[k]]
        assert differ == [], f"rank {rank}: resumed run differs in {differ}"
