"""Attribute an FSDP implementation's host time to its phases, without editing it.

Every FSDP2-style implementation (fsdp_ref's and torch's ``fully_shard`` alike) runs its
per-step work from the same five kinds of callbacks, which it has to hand to PyTorch:

==================  ==============================================================
``pre_forward``     a module forward pre-hook (``module._forward_pre_hooks``)
``post_forward``    a module forward hook (``module._forward_hooks``)
``pre_backward``    what the post-forward hook registers on the module's outputs: a
                    tensor hook (``Tensor.register_hook``) or an autograd ``Function``
``post_backward``   what the pre-forward hook puts on the module's inputs: an autograd
                    ``Function`` whose ``backward`` runs after the module's backward
``final_callback``  the callback queued with ``Variable._execution_engine.queue_callback``
==================  ==============================================================

:class:`PhaseClock` wraps each of those at the place PyTorch keeps it: it replaces the
module hook dict entries (same keys, so ``with_kwargs`` / ``always_call`` flags stay),
patches ``Tensor.register_hook`` while a post-forward (or pre-forward) hook runs, wraps the
``backward`` of every custom ``Function`` class whose node a hook puts on its returned
tensors, and puts a thin proxy in front of the autograd engine's ``queue_callback``. Each
wrapper adds its wall time to its phase; a phase that runs inside another (a callback
queued from a pre-backward hook) counts for the outer one only, so phases never overlap.
The wrappers are named ``phase_<name>``, so a sampling profiler's stacks show the phase as
a frame and can be split by it too (see ``overhead_profile.py``).

What the clock cannot see is reported as the remainder: the extra cost of
``nn.Module.__call__``'s slow path for modules with hooks, the autograd engine calling into
the Python nodes, and compute on DTensors outside the hooks. The optimizer step is timed by
the caller around ``optim.step()`` and ``zero_grad()``.
"""

from __future__ import annotations

import functools
import time
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch
import torch.nn as nn
from torch.autograd.variable import Variable
from torch.utils._pytree import tree_leaves

__all__ = ["HOOK_PHASES", "PHASES", "PhaseClock"]

HOOK_PHASES = ("pre_forward", "post_forward", "pre_backward", "post_backward", "final_callback")
"""The phases the clock times from inside the implementation's callbacks."""

PHASES = (*HOOK_PHASES, "optimizer")
"""Every phase reported, in step order."""

# A hook that registers something on tensors: which phase will that something run in?
_LATER_PHASE = {"pre_forward": "post_backward", "post_forward": "pre_backward"}


def _run_timed(clock: PhaseClock, phase: str, fn: Callable, *args, **kwargs):
    """Call ``fn``; add its time to ``phase`` unless the clock is off or another phase
    is running."""
    if clock._running or not clock.enabled:
        return fn(*args, **kwargs)
    clock._running = True
    start = clock.now()
    try:
        return fn(*args, **kwargs)
    finally:
        clock.seconds[phase] += clock.now() - start
        clock._running = False


# One copy of _run_timed per phase, its code named phase_<name>: a profiler's stack then
# names the phase (built once, so wrapping a hook per step costs one functools.partial).
_RUNNERS = {
    phase: types.FunctionType(
        _run_timed.__code__.replace(co_name=f"phase_{phase}", co_qualname=f"phase_{phase}"),
        _run_timed.__globals__,
        f"phase_{phase}",
    )
    for phase in HOOK_PHASES
}


class _EngineProxy:
    """The autograd engine, except that queued callbacks are timed as ``final_callback``."""

    def __init__(self, engine: Any, clock: PhaseClock) -> None:
        self._engine = engine
        self._clock = clock

    def queue_callback(self, callback: Callable[[], None]) -> None:
        self._engine.queue_callback(self._clock.timed("final_callback", callback))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)


class PhaseClock:
    """Seconds spent in each phase since the last :meth:`reset`.

    Use :meth:`installed` around the whole run (it patches process-wide PyTorch entry
    points and restores them on exit) and :meth:`attach` once per model, after
    ``fully_shard`` and before the first forward.

    Args:
        now: the clock, by default this thread's CPU time (``time.thread_time``): the
            measured work is single-threaded and host-bound, and on a shared machine CPU
            time leaves out the time the OS gave to other processes; pass
            ``time.perf_counter`` for wall time. Reading a CPU clock is a system call
            (about 3 us here), so time step totals with the clock :attr:`enabled` off and
            phases in separate steps with it on.
    """

    def __init__(self, now: Callable[[], float] = time.thread_time) -> None:
        self.now = now
        self.enabled = True
        self.seconds: dict[str, float] = dict.fromkeys(HOOK_PHASES, 0.0)
        self._running = False
        self._registering: str | None = None
        self._function_classes: dict[type, Any] = {}

    def reset(self) -> None:
        """Set every phase back to zero."""
        for phase in self.seconds:
            self.seconds[phase] = 0.0

    def timed(self, phase: str, fn: Callable) -> Callable:
        """``fn`` wrapped so that its wall time (when not nested in a phase) adds to
        ``phase``; the wrapper's frame is named ``phase_<phase>`` for profilers."""
        return functools.partial(_RUNNERS[phase], self, phase, fn)

    def _forward_hook(self, phase: str, hook: Callable) -> Callable:
        """A module forward (pre-)hook, timed; on its first call it also adopts the
        autograd Functions it puts on tensors (the same classes every step)."""
        later = _LATER_PHASE[phase]
        first = True

        def run(*args, **kwargs):
            nonlocal first
            previous, self._registering = self._registering, later
            try:
                out = hook(*args, **kwargs)
            finally:
                self._registering = previous
            if first:
                first = False
                self._adopt_functions(out, later)
            return out

        return self.timed(phase, run)

    def _adopt_functions(self, out: Any, phase: str) -> None:
        """Time the ``backward`` of custom autograd Functions on the hook's outputs."""
        for t in tree_leaves(out):
            node = getattr(t, "grad_fn", None) if isinstance(t, torch.Tensor) else None
            cls = getattr(node, "_forward_cls", None)
            if cls is None or cls in self._function_classes:
                continue
            original = cls.__dict__["backward"]
            self._function_classes[cls] = original
            cls.backward = staticmethod(self.timed(phase, original.__func__))

    def attach(self, model: nn.Module) -> int:
        """Wrap every forward (pre-)hook registered on ``model``'s modules; returns how
        many were wrapped (0 for a model without hooks)."""
        wrapped = 0
        for module in model.modules():
            for hooks, phase in ((module._forward_pre_hooks, "pre_forward"),
                                 (module._forward_hooks, "post_forward")):
                for key, hook in list(hooks.items()):
                    hooks[key] = self._forward_hook(phase, hook)
                    wrapped += 1
        return wrapped

    @contextmanager
    def installed(self) -> Iterator[PhaseClock]:
        """Patch ``Tensor.register_hook`` and the engine's ``queue_callback``; undo both
        (and every adopted ``Function.backward``) on exit."""
        original_register = torch.Tensor.register_hook
        clock = self

        def register_hook(tensor, hook):
            if clock._registering is not None:
                hook = clock.timed(clock._registering, hook)
            return original_register(tensor, hook)

        engine = Variable._execution_engine
        torch.Tensor.register_hook = register_hook
        Variable._execution_engine = _EngineProxy(engine, self)
        try:
            yield self
        finally:
            Variable._execution_engine = engine
            torch.Tensor.register_hook = original_register
            for cls, original in self._function_classes.items():
                cls.backward = original
            self._function_classes.clear()
