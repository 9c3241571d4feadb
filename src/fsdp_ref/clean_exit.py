"""A clean interpreter exit: let gloo's worker threads finish before Python shuts down.

Why a training script could die *after* its last line with ``terminate called without an
active exception`` (SIGABRT):

1. Sharded parameters are DTensors on a ``DeviceMesh``; the mesh (held by the parameters,
   by FSDP's groups and by torch's DTensor caches) keeps its ``ProcessGroup`` alive, so
   ``dist.destroy_process_group()`` does not destroy it and gloo's two worker threads
   (``pt_gloo_runloop``) live on until the interpreter's own teardown.
2. A worker thread releases each collective's ``Work`` after running it. In torch 2.13,
   dropping a C++ reference to a tensor that has a Python object takes the GIL.
3. If the process is at its end when that happens (the last collective of a script, a
   worker thread starved of CPU on a busy machine), the worker asks for the GIL after
   ``Py_FinalizeEx`` began; CPython ends such a thread with ``pthread_exit``, whose unwind
   through a ``noexcept`` destructor calls ``std::terminate``.

Core dumps of the crash show exactly this: the main thread in ``Py_FinalizeEx``'s garbage
collection, a ``pt_gloo_runloop`` thread in ``~AsyncAllreduceWork`` ->
``TensorImpl::decref_pyobject`` -> ``take_gil`` -> ``pthread_exit`` -> ``std::terminate``
(pytorch/pytorch#190489 tracks the torch side).

The fix here is an ``atexit`` handler, installed by the first ``fully_shard`` call. atexit
handlers run while the interpreter is still whole, so a worker may still take the GIL
then. The handler releases the GIL in short sleeps until every gloo worker thread has
been seen asleep (not running or runnable) several times in a row: a worker still
releasing a ``Work`` is either running, runnable, or waiting for the GIL the sleeps hand
it. Only then does Python go on to finalize.
"""

from __future__ import annotations

import atexit
import os
import time

__all__ = ["GLOO_WORKER_THREAD", "busy_threads", "install", "wait_for_idle_gloo_workers"]

GLOO_WORKER_THREAD = "pt_gloo_runloop"
"""The name gloo's process groups give their worker threads (``/proc/<pid>/task/*/comm``)."""

_POLL_S = 0.005
_CALM_ROUNDS = 4
_installed = False


def busy_threads(name: str = GLOO_WORKER_THREAD) -> list[int] | None:
    """Thread ids of this process named ``name`` that are running, runnable or in
    uninterruptible sleep; ``None`` where ``/proc`` cannot tell (not Linux)."""
    task_dir = f"/proc/{os.getpid()}/task"
    try:
        tids = os.listdir(task_dir)
    except OSError:
        return None
    busy = []
    for tid in tids:
        try:
            with open(f"{task_dir}/{tid}/comm") as f:
                if f.read().strip() != name:
                    continue
            with open(f"{task_dir}/{tid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue  # the thread ended between listdir and open
        if state in ("R", "D"):  # running or runnable; uninterruptible sleep
            busy.append(int(tid))
    return busy


def wait_for_idle_gloo_workers(timeout_s: float = 5.0) -> bool:
    """Sleep (releasing the GIL) until gloo's worker threads have been idle for several
    polls in a row, or ``timeout_s`` passed. Returns whether they settled.

    Without ``/proc`` it sleeps the same number of polls, which lets any worker already
    waiting for the GIL take it.
    """
    deadline = time.monotonic() + timeout_s
    calm = 0
    while calm < _CALM_ROUNDS:
        time.sleep(_POLL_S)
        busy = busy_threads()
        calm = calm + 1 if not busy else 0
        if time.monotonic() > deadline:
            return False
    return True


def install() -> None:
    """Register :func:`wait_for_idle_gloo_workers` to run at interpreter exit (once)."""
    global _installed
    if not _installed:
        atexit.register(wait_for_idle_gloo_workers)
        _installed = True
