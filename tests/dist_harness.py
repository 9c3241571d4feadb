"""Multi-rank test harness: a pool of gloo worker processes started once and reused.

Starting a rank costs seconds (every process imports torch), so tests do not start
processes themselves.  A :class:`WorkerPool` starts ``world_size`` processes once,
initializes a gloo process group in each (``file://`` rendezvous in a private temporary
directory, never a fixed port), and then runs many *scenarios* in them::

    pool = WorkerPool(world_size=2)
    results = pool.run("tests.fsdp.scenarios_parity:mlp_vs_reference", impl="torch", steps=3)
    # results[r] is what rank r's call returned (must be picklable)

``pool.run(target, **kwargs)`` sends the call to every rank; each rank imports
``module:function`` and calls ``function(rank, world_size, **kwargs)``.

It never hangs:

* every call has a timeout (``timeout_s``, default :data:`DEFAULT_TIMEOUT_S`);
* if a rank raises, its traceback becomes the failure (:class:`RankError`), the other
  ranks get a short grace period, and the pool is then health-checked and, unless every
  rank answered and the process group still works, killed and restarted lazily on the
  next call;
* on timeout (:class:`ScenarioTimeout`) the pool is killed and restarted on the next call;
* workers kill themselves when the parent process dies (``PR_SET_PDEATHSIG`` plus a
  watchdog thread polling the parent pid).

Worker output (stdout/stderr) goes to a per-rank log file; its tail is attached to
failure messages.
"""

from __future__ import annotations

import faulthandler
import importlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

DEFAULT_TIMEOUT_S = 120.0
#: How long the other ranks get to finish after one rank raised.
ERROR_GRACE_S = 5.0
#: Timeout of the health check run after a failure.
HEALTH_TIMEOUT_S = 15.0
#: Per-collective timeout of the gloo process group in the workers.
PG_TIMEOUT_S = 90.0
#: How long starting the pool (all ranks importing torch + rendezvous) may take.
START_TIMEOUT_S = 180.0

_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class HarnessError(AssertionError):
    """Base class of the failures the harness reports (an AssertionError so that
    pytest shows them as plain test failures)."""


class RankError(HarnessError):
    """A rank raised while running a scenario."""

    def __init__(self, message: str, rank: int, exc_type: str, tb: str):
        super().__init__(message)
        self.rank = rank
        self.exc_type = exc_type
        self.traceback = tb


class ScenarioTimeout(HarnessError):
    """Not every rank answered within the call's timeout."""


class PoolDied(HarnessError):
    """A worker process exited (crashed) while running a scenario."""


# --------------------------------------------------------------------------------------
# Worker side
# --------------------------------------------------------------------------------------


def _die_with_parent(parent_pid: int) -> None:
    try:  # Linux: get SIGKILL when the parent thread dies.
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL)
    except Exception:
        pass

    def watchdog() -> None:
        while True:
            if os.getppid() != parent_pid:
                os._exit(3)
            time.sleep(1.0)

    threading.Thread(target=watchdog, name="parent-watchdog", daemon=True).start()
    if os.getppid() != parent_pid:  # parent died before prctl took effect
        os._exit(3)


def _resolve(target: str):
    if ":" not in target:
        raise ValueError(f"target must be 'module:function', got {target!r}")
    mod_name, fn_name = target.split(":", 1)
    module = importlib.import_module(mod_name)
    fn = module
    for part in fn_name.split("."):
        fn = getattr(fn, part)
    return fn


def _health_check(rank: int, world_size: int, seq: int) -> bool:
    import torch
    import torch.distributed as dist

    t = torch.tensor([rank, seq], dtype=torch.int64)
    out = [torch.zeros(2, dtype=torch.int64) for _ in range(world_size)]
    dist.all_gather(out, t)
    ok = all(o.tolist() == [r, seq] for r, o in enumerate(out))
    dist.barrier()
    return ok


def _worker_entry() -> None:
    """Entry point of a worker process (``python -c``); argv: rank world_size
    init_file conn_fd parent_pid.  stdout/stderr are the rank's log file."""
    rank, world_size, init_file, conn_fd, parent_pid = sys.argv[1:6]
    _worker_main(int(rank), int(world_size), init_file, Connection(int(conn_fd)), int(parent_pid))


def _worker_main(
    rank: int, world_size: int, init_file: str, conn: Connection, parent_pid: int
) -> None:
    _die_with_parent(parent_pid)
    # A crash in native code (torch, gloo, an extension) prints every thread's Python
    # stack into the rank's log, whose tail becomes the PoolDied message.
    faulthandler.enable(all_threads=True)
    if _REPO_ROOT not in sys.path:
        sys.path.insert(0, _REPO_ROOT)

    try:
        from datetime import timedelta

        import torch
        import torch.distributed as dist

        torch.set_num_threads(1)
        dist.init_process_group(
            "gloo",
            init_method=f"file://{init_file}",
            rank=rank,
            world_size=world_size,
            timeout=timedelta(seconds=PG_TIMEOUT_S),
        )
        dist.barrier()
    except BaseException as e:  # noqa: BLE001
        conn.send(("err", type(e).__name__, traceback.format_exc()))
        return
    conn.send(("ready", os.getpid()))

    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            break
        kind = msg[0]
        if kind == "stop":
            # no destroy_process_group(): it can wait on peers; the pool is done anyway
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(0)
        if kind == "health":
            try:
                conn.send(("ok", _health_check(rank, world_size, msg[1])))
            except BaseException as e:  # noqa: BLE001
                conn.send(("err", type(e).__name__, traceback.format_exc()))
            continue
        if kind == "run":
            _, target, kwargs = msg
            print(f"=== [rank {rank}] {target} {kwargs!r}", flush=True)
            try:
                fn = _resolve(target)
                result = fn(rank, world_size, **kwargs)
                reply = ("ok", result)
            except BaseException as e:  # noqa: BLE001
                reply = ("err", type(e).__name__, traceback.format_exc())
            try:
                conn.send(reply)
            except Exception as e:  # result not picklable
                conn.send(
                    (
                        "err",
                        type(e).__name__,
                        f"could not send the result of {target} back: {e!r}\n"
                        + traceback.format_exc(),
                    )
                )
            sys.stdout.flush()
            sys.stderr.flush()
            continue
        conn.send(("err", "ValueError", f"unknown message {msg!r}"))

    os._exit(0)


# --------------------------------------------------------------------------------------
# Parent side
# --------------------------------------------------------------------------------------


@dataclass
class _Worker:
    rank: int
    process: Any
    conn: Connection
    log_path: str


def _tail(path: str, n_chars: int = 4000) -> str:
    try:
        with open(path, errors="replace") as f:
            data = f.read()
    except OSError:
        return "<no log>"
    return data[-n_chars:]


class WorkerPool:
    """``world_size`` gloo ranks in worker processes, started lazily, reused across calls."""

    def __init__(self, world_size: int, *, env: dict[str, str] | None = None):
        if world_size < 1:
            raise ValueError("world_size must be >= 1")
        self.world_size = world_size
        self._env = dict(env or {})
        self._workers: list[_Worker] = []
        self._tmpdir: str | None = None
        self._health_seq = 0
        self._busy = False  # a call was sent and its replies not (fully) collected
        #: number of times the pool was (re)started; useful for tests of the harness
        self.starts = 0

    # -- lifecycle ---------------------------------------------------------------------

    @property
    def alive(self) -> bool:
        return bool(self._workers) and all(w.process.poll() is None for w in self._workers)

    def start(self) -> None:
        if self._workers:
            return
        self._tmpdir = tempfile.mkdtemp(prefix=f"fsdp_pool{self.world_size}_")
        init_file = os.path.join(self._tmpdir, "rendezvous")
        env = dict(os.environ)
        env.update({"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
        # `tests.*` (scenarios) and, when it is not pip-installed, `fsdp_ref` from src/.
        env["PYTHONPATH"] = os.pathsep.join(
            [_REPO_ROOT, os.path.join(_REPO_ROOT, "src")]
            + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
        )
        env.update(self._env)
        for rank in range(self.world_size):
            parent_sock, child_sock = socket.socketpair()
            log_path = os.path.join(self._tmpdir, f"rank{rank}.log")
            with open(log_path, "wb") as log:
                proc = subprocess.Popen(
                    [
                        sys.executable,
                        "-c",
                        "from tests.dist_harness import _worker_entry; _worker_entry()",
                        str(rank),
                        str(self.world_size),
                        init_file,
                        str(child_sock.fileno()),
                        str(os.getpid()),
                    ],
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    pass_fds=(child_sock.fileno(),),
                    cwd=_REPO_ROOT,
                    env=env,
                )
            child_sock.close()
            conn = Connection(parent_sock.detach())
            self._workers.append(_Worker(rank, proc, conn, log_path))
        self.starts += 1
        try:
            replies = self._collect(START_TIMEOUT_S, what="pool start")
        except BaseException:
            self.kill()
            raise
        for rank, reply in enumerate(replies):
            if reply is None or reply[0] != "ready":
                logs = self._log_tails(list(range(self.world_size)))
                self.kill()
                raise HarnessError(f"rank {rank} failed to start: {reply}\n{logs}")

    def kill(self) -> None:
        """Kill all workers now (SIGKILL) and forget them."""
        for w in self._workers:
            if w.process.poll() is None:
                try:
                    w.process.kill()
                except ProcessLookupError:
                    pass
        for w in self._workers:
            try:
                w.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            try:
                w.conn.close()
            except OSError:
                pass
        self._workers = []
        self._busy = False
        if self._tmpdir:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None

    def close(self) -> None:
        """Stop the workers gracefully (kill them if they do not exit)."""
        for w in self._workers:
            try:
                w.conn.send(("stop",))
            except OSError:
                pass
        deadline = time.monotonic() + 10
        for w in self._workers:
            try:
                w.process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        self.kill()

    def restart(self) -> None:
        self.kill()
        self.start()

    def __enter__(self) -> WorkerPool:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- calls -------------------------------------------------------------------------

    def _collect(self, timeout_s: float, what: str, grace_s: float = ERROR_GRACE_S):
        """Wait for one reply from every rank.

        Returns the list of replies.  Stops early (after ``grace_s``) once some rank
        replied with an error; ranks that did not reply then have ``None``.  Raises
        ScenarioTimeout / PoolDied (after killing the pool) when not every rank replied
        and none errored.
        """
        replies: list[Any] = [None] * len(self._workers)
        pending = {w.conn: w for w in self._workers}
        deadline = time.monotonic() + timeout_s
        error_deadline: float | None = None
        while pending:
            now = time.monotonic()
            limit = deadline if error_deadline is None else min(deadline, error_deadline)
            if now >= limit:
                break
            # A worker that dies closes its end of the socket: its conn becomes readable
            # and recv() raises EOFError.
            for conn in wait(list(pending), timeout=limit - now):
                w = pending.pop(conn)
                try:
                    replies[w.rank] = conn.recv()
                except (EOFError, OSError):
                    try:
                        code = w.process.wait(timeout=5)
                    except subprocess.TimeoutExpired:
                        code = None
                    replies[w.rank] = ("died", code)
                if replies[w.rank][0] in ("err", "died") and error_deadline is None:
                    error_deadline = time.monotonic() + grace_s
        if pending and error_deadline is None:
            missing = sorted(w.rank for w in pending.values())
            logs = self._log_tails(missing)
            self.kill()
            raise ScenarioTimeout(
                f"{what}: ranks {missing} did not answer within {timeout_s:.0f}s "
                f"(pool killed; it restarts on the next call)\n{logs}"
            )
        return replies

    def _log_tails(self, ranks: list[int]) -> str:
        parts = []
        for w in self._workers:
            if w.rank in ranks:
                parts.append(f"--- rank {w.rank} log tail ---\n{_tail(w.log_path)}")
        return "\n".join(parts)

    def _healthy_after_error(self) -> bool:
        """After an error every rank answered: is the process group still in sync?"""
        self._health_seq += 1
        try:
            for w in self._workers:
                w.conn.send(("health", self._health_seq))
            replies = self._collect(HEALTH_TIMEOUT_S, what="health check", grace_s=2.0)
        except HarnessError:
            return False
        except OSError:
            return False
        return all(r is not None and r[0] == "ok" and r[1] is True for r in replies)

    def run(self, target: str, /, *, timeout_s: float = DEFAULT_TIMEOUT_S, **kwargs: Any):
        """Run ``target`` ("pkg.module:function") on every rank as
        ``function(rank, world_size, **kwargs)``; return the per-rank results."""
        if self._busy or not self.alive:
            # dead worker, or an earlier call was interrupted (e.g. pytest-timeout) and
            # its replies are still in flight: start afresh
            self.kill()
            self.start()
        self._busy = True
        try:
            for w in self._workers:
                w.conn.send(("run", target, kwargs))
        except OSError as e:
            self.kill()
            raise PoolDied(f"could not send {target} to the workers: {e!r}") from None
        replies = self._collect(timeout_s, what=f"{target}({kwargs})")
        self._busy = False
        errors = [(r, rep) for r, rep in enumerate(replies) if rep is None or rep[0] != "ok"]
        if not errors:
            return [rep[1] for rep in replies]

        # Failure: keep the pool only if every rank answered and the group is healthy.
        all_answered = all(rep is not None and rep[0] in ("ok", "err") for rep in replies)
        keep = all_answered and self._healthy_after_error()
        first_err = next(
            ((r, rep) for r, rep in errors if rep is not None and rep[0] == "err"), None
        )
        died = [r for r, rep in errors if rep is not None and rep[0] == "died"]
        silent = [r for r, rep in errors if rep is None]
        tails = self._log_tails(died) if died else ""
        if not keep:
            self.kill()
        status = [
            f"{target} with {kwargs} failed on {len(errors)}/{self.world_size} ranks",
        ]
        if silent:
            status.append(f"ranks {silent} were still running (likely blocked in a collective)")
        if died:
            status.append(f"ranks {died} died: exit codes {[replies[r][1] for r in died]}")
        status.append(
            "pool kept (health check passed)"
            if keep
            else "pool killed; it restarts on the next call"
        )
        if first_err is not None:
            rank, (_, exc_type, tb) = first_err
            other = [r for r, rep in errors if rep is not None and rep[0] == "err" and r != rank]
            if other:
                status.append(f"ranks {other} raised too")
            msg = "\n".join(status) + f"\n--- traceback from rank {rank} ---\n{tb}"
            if tails:
                msg += "\n" + tails
            raise RankError(msg, rank, exc_type, tb)
        raise PoolDied("\n".join(status) + ("\n" + tails if tails else ""))


class PoolRegistry:
    """Lazily creates one pool per world size; closes them all at the end."""

    def __init__(self) -> None:
        self._pools: dict[int, WorkerPool] = {}

    def get(self, world_size: int) -> WorkerPool:
        pool = self._pools.get(world_size)
        if pool is None:
            pool = self._pools[world_size] = WorkerPool(world_size)
        pool.start()
        return pool

    def close(self) -> None:
        for pool in self._pools.values():
            pool.close()
        self._pools.clear()
