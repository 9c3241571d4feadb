"""A clean exit: the handler of :mod:`fsdp_ref.clean_exit`, and a script that trains and exits.

The crash it prevents is a race (a gloo worker thread releasing the last ``Work`` while
Python finalizes); ``repeat_exit.py`` counts it over 100 runs, these tests check the
mechanism deterministically and that a training script exits cleanly.
"""

from __future__ import annotations

import ctypes
import hashlib
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from fsdp_ref import clean_exit

REPO = Path(__file__).resolve().parents[2]


def _busy_named_thread(seconds: float, done: list[float]) -> threading.Thread:
    """A thread named like gloo's workers that burns CPU outside the GIL (hashing a large
    buffer releases it) for ``seconds``, then records when it finished."""

    def run() -> None:
        ctypes.CDLL(None).prctl(15, clean_exit.GLOO_WORKER_THREAD.encode(), 0, 0, 0)
        data = b"x" * (8 << 20)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            hashlib.sha256(data).digest()
        done.append(time.monotonic())

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_waits_until_gloo_named_threads_are_idle():
    done: list[float] = []
    thread = _busy_named_thread(0.6, done)
    deadline = time.monotonic() + 5
    while not clean_exit.busy_threads() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert thread.native_id in clean_exit.busy_threads()
    assert clean_exit.wait_for_idle_gloo_workers(timeout_s=30) is True
    returned = time.monotonic()
    assert done and done[0] <= returned, "returned while the worker was still busy"
    thread.join()
    assert clean_exit.busy_threads() == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_gives_up_after_the_timeout():
    done: list[float] = []
    thread = _busy_named_thread(3.0, done)
    time.sleep(0.1)
    start = time.monotonic()
    assert clean_exit.wait_for_idle_gloo_workers(timeout_s=0.3) is False
    assert time.monotonic() - start < 2.5
    thread.join()


def test_training_script_exits_cleanly():
    """Two runs of train_and_exit.py under torchrun: exit status 0, no ``terminate
    called``, the handler installed by fully_shard, and the script's closing line."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node",
           "2", "tests/reliability/train_and_exit.py", "--impl", "fsdp_ref"]
    for _ in range(2):
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
        out = proc.stdout + proc.stderr
        assert proc.returncode == 0 and "terminate called" not in out, out[-3000:]
        assert "trained 3 steps with fsdp_ref on 2 ranks; exit handler installed: True" in out
