"""``FSDPModule``: the methods every sharded module gains, and the helpers around it.

``fully_shard(module)`` swaps ``module.__class__`` for a new class ``FSDP<Name>`` that
derives from both :class:`FSDPModule` and the original class, so ``isinstance(m, Name)``
still holds and every method below is available on the module itself. The methods only
change settings on, or drive, the module's :class:`~fsdp_ref.param_group.FSDPParamGroup`.

This module holds what drives the module (unshard, reshard, recovery, prefetch targets,
conversions) and the functions around it; the ``set_*`` methods of gradient
synchronization, resharding and communication are
:class:`~fsdp_ref.module_settings.ModuleSettings`', a base of :class:`FSDPModule`.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn as nn

from .module_settings import ModuleSettings
from .param_group import FSDPParamGroup
from .state import adopt_changes, get_state
from .streams import Event

__all__ = ["FSDPModule", "UnshardHandle", "register_fsdp_forward_method", "share_comm_ctx"]


class UnshardHandle:
    """A pending ``unshard(async_op=True)``: call :meth:`wait` to block until it is done.

    Waiting is optional: the module's next forward waits for the unshard itself.
    """

    def __init__(self, groups: list[FSDPParamGroup]) -> None:
        self._groups = groups

    def wait(self) -> None:
        """Make compute wait for the all-gather and register the unsharded parameters."""
        for group in self._groups:
            group.wait_for_unshard()
        self._groups = []


class FSDPModule(ModuleSettings):
    """Mixin added to every module passed to ``fully_shard``.

    All ``set_*`` methods are settings that take effect from the next forward/backward.
    Methods with a ``recurse`` argument also apply to every FSDP module below this one.
    Most of them are inherited from :class:`~fsdp_ref.module_settings.ModuleSettings`.
    """

    def __new__(cls, *args: Any, **kwargs: Any):
        # Containers such as nn.Sequential build new instances of their own class when
        # sliced; construct the original class there, not the FSDP subclass. The class
        # fully_shard made names it (fsdp_ref.compat.wrapper_class): its place in the MRO
        # differs between FSDP<Name> and Replicate<Name>.
        orig_cls = cls._fsdp_orig_cls
        self = orig_cls.__new__(orig_cls, *args, **kwargs)
        self.__init__(*args, **kwargs)
        return self

    def __deepcopy__(self, memo: dict) -> Any:
        raise AssertionError(
            "FSDP does not support deepcopy. Please use state dict for serialization. "
            "(A fully_shard module's parameters are shards tied to a process group: copy "
            "the model before fully_shard, or save and load a state dict.)"
        )

    # ---- unshard / reshard ---------------------------------------------------------

    def unshard(self, async_op: bool = False) -> UnshardHandle | None:
        """All-gather this module's parameters (not recursive).

        Args:
            async_op: return an :class:`UnshardHandle` instead of waiting.

        Returns:
            The handle when ``async_op`` is ``True``, else ``None``.
        """
        state = self._get_fsdp_state()
        groups = list(state.groups)
        if state.is_root is None:  # before the first forward: adopt as its lazy init would
            adopt_changes(groups)
        for group in groups:
            # Works before the first forward too: the group then uses its own streams
            # until the root's lazy init hands it the shared ones.
            ctx = group.comm_ctx
            ctx.lazy_init(group.device)
            # Called from user code (e.g. right after optim.step()): the copy-in reads the
            # shards, so it must come after everything queued on compute so far.
            ctx.all_gather_copy_in.wait_stream(ctx.current(), "copy_in_after_user_unshard")
            group.unshard(async_op=async_op)
        handle = UnshardHandle(groups)
        if async_op:
            return handle
        handle.wait()
        return None

    def reshard(self) -> None:
        """Free this module's unsharded parameters and register the shards (not recursive)."""
        for group in self._groups():
            group.reshard()

    def reset_iter_state(self) -> None:
        """Recover after an exception in forward or backward; call on the root module.

        Completes in-flight collectives, reshards every group, and forgets the failed
        iteration's unreduced gradients, so the next iteration runs normally.

        Raises:
            RuntimeError: when called on a module that is not the root.
        """
        state = self._get_fsdp_state()
        if state.is_root is False:
            raise RuntimeError(
                f"reset_iter_state must be called on the root FSDP module, not on "
                f"{state.name}; call it on the model you run forward on"
            )
        state.lazy_init()
        state.reset_iter_state()

    # ---- prefetching ---------------------------------------------------------------

    def set_modules_to_forward_prefetch(self, modules: list[FSDPModule]) -> None:
        """All-gather ``modules`` right after this module's pre-forward all-gather."""
        _check_fsdp_modules(modules)
        self._get_fsdp_state().set_prefetch("forward", [m._get_fsdp_state() for m in modules])

    def set_modules_to_backward_prefetch(self, modules: list[FSDPModule]) -> None:
        """All-gather ``modules`` right after this module's pre-backward all-gather
        (replaces the implicit prefetch: the module that ran forward just before)."""
        _check_fsdp_modules(modules)
        self._get_fsdp_state().set_prefetch("backward", [m._get_fsdp_state() for m in modules])

    def set_post_optim_event(self, event: torch.Event) -> None:
        """Order the next forward's all-gathers after ``event`` (recorded after the
        optimizer step) instead of after everything on the compute stream. Use a new
        event every iteration; it is dropped after use."""
        self._get_fsdp_state().iter_ctx.post_optim_event = Event(event)

    def _apply(self, *args: Any, **kwargs: Any) -> Any:
        # `to_empty`, `.to()` and `.double()` convert the parameters: reshard first so the
        # conversion applies to the sharded DTensors, then adopt what the module holds.
        state = get_state(self)  # type: ignore[arg-type]
        groups = state.groups if state is not None else []
        for group in groups:
            group.reshard()
        result = super()._apply(*args, **kwargs)  # type: ignore[misc]
        adopt_changes(groups, converted=True)
        return result


def _check_fsdp_modules(modules: Any) -> None:
    for module in modules:
        if not isinstance(module, FSDPModule):
            raise ValueError(
                f"expected modules passed to fully_shard, got {type(module).__name__}; "
                "call fully_shard on it first"
            )


def register_fsdp_forward_method(module: nn.Module, method_name: str) -> None:
    """Make ``module.<method_name>()`` unshard and reshard like ``forward`` does.

    FSDP hooks only ``forward``; a method such as ``generate`` that uses the parameters
    outside ``forward`` needs the same pre- and post-forward around it.

    Raises:
        ValueError: when the module has no such method.
    """
    if not isinstance(module, FSDPModule):
        return
    if not hasattr(module, method_name):
        raise ValueError(f"{type(module).__name__} has no method {method_name!r}")
    state = module._get_fsdp_state()
    original = getattr(module, method_name).__func__

    def wrapped(self, *args: Any, **kwargs: Any):
        args, kwargs = state._pre_forward(self, args, kwargs)
        out = original(self, *args, **kwargs)
        return state._post_forward(self, args, out)

    setattr(module, method_name, wrapped.__get__(module))


def share_comm_ctx(modules: list[FSDPModule]) -> None:
    """Let several independent FSDP roots share one set of communication streams.

    Useful when separately sharded models (e.g. pipeline stages) run in one process: they
    then order their all-gathers on the same streams instead of each creating their own.

    Raises:
        ValueError: when a module is not an FSDP module.
    """
    if not modules:
        return
    _check_fsdp_modules(modules)
    shared = modules[0]._get_fsdp_state().comm_ctx
    for module in modules:
        for sub in module.modules():  # type: ignore[attr-defined]
            state = get_state(sub)
            if state is not None:
                state.use_comm_ctx(shared)
