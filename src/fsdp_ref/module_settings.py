"""The settings every sharded module gains: gradient synchronization, resharding and
communication, each a ``set_*`` method of :class:`~fsdp_ref.module.FSDPModule`.

Each method changes a field of the module's groups'
:class:`~fsdp_ref.group_state.GroupSettings` (or of the root's iteration context), which
takes effect from the next forward or backward; the logic behind a setting lives where
the group reads it. Methods with a ``recurse`` argument also apply to every FSDP module
below this one (:meth:`ModuleSettings._recursive_groups`). The names, signatures and
refusals are torch 2.13's ``FSDPModule``'s.

:class:`ModuleSettings` is a base of :class:`~fsdp_ref.module.FSDPModule` and of nothing
else: every instance is a module ``fully_shard`` or ``replicate`` was called on.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist

from .api import AllGather, ReduceScatter
from .mesh import post_forward_mesh_info
from .param_group import FSDPParamGroup
from .state import FSDPState, get_state

__all__ = ["ModuleSettings"]


class ModuleSettings:
    """The ``set_*`` methods of :class:`~fsdp_ref.module.FSDPModule` (see the module), and
    the groups they reach."""

    # ---- the groups a setting reaches ----------------------------------------------

    def _get_fsdp_state(self) -> FSDPState:
        state = get_state(self)  # type: ignore[arg-type]
        if state is None:
            raise RuntimeError(f"no fully_shard state on {type(self).__name__}")
        return state

    def _groups(self) -> list[FSDPParamGroup]:
        return list(self._get_fsdp_state().groups)

    def _fsdp_modules(self, recurse: bool) -> list[ModuleSettings]:
        if not recurse:
            return [self]
        return [m for m in self.modules() if isinstance(m, ModuleSettings)]  # type: ignore[attr-defined]

    def _recursive_groups(self, recurse: bool) -> list[FSDPParamGroup]:
        return [g for m in self._fsdp_modules(recurse) for g in m._groups()]

    # ---- gradient synchronization --------------------------------------------------

    def set_is_last_backward(self, is_last_backward: bool) -> None:
        """Whether the next backward is the last before the optimizer step.

        When ``False``, the end of that backward keeps the iteration's prefetch order and
        the last all-gather output for the next microbatch. Its reductions are finished
        either way, so ``.grad`` holds every gradient reduced so far, as in torch 2.13
        (which assigns them in each post-backward, on its streams); unlike torch's, they
        do not run on behind the next microbatch's forward on a GPU.
        """
        self._get_fsdp_state().iter_ctx.is_last_backward = is_last_backward

    def set_requires_gradient_sync(self, requires_gradient_sync: bool, *, recurse: bool = True):
        """Turn gradient reduction off (accumulate locally) or back on.

        With ``False``, backward accumulates unsharded gradients without any
        communication; the next backward with ``True`` reduces the sum. This is FSDP1's
        ``no_sync``. Under HSDP it turns off the all-reduce too.
        """
        for group in self._recursive_groups(recurse):
            group.settings.requires_gradient_sync = requires_gradient_sync
            group.settings.requires_all_reduce = requires_gradient_sync

    def set_requires_all_reduce(self, requires_all_reduce: bool, *, recurse: bool = True):
        """HSDP only: reduce-scatter but skip the all-reduce (accumulate partial sums)."""
        for group in self._recursive_groups(recurse):
            group.settings.requires_all_reduce = requires_all_reduce

    def set_reduce_scatter_unused_params(
        self, reduce_scatter_unused_params: bool, *, recurse: bool = True
    ) -> None:
        """Reduce zeros for parameters without a gradient, so all ranks issue the same
        reduce-scatter even when control flow differs between ranks."""
        for group in self._recursive_groups(recurse):
            group.settings.reduce_scatter_unused_params = reduce_scatter_unused_params

    def set_gradient_divide_factor(self, factor: float) -> None:
        """Divide reduced gradients by ``factor`` instead of the data-parallel size."""
        if factor <= 0:
            raise ValueError(f"gradient divide factor must be positive, got {factor}")
        for group in self._groups():
            group.settings.gradient_divide_factor = float(factor)

    def set_reduce_scatter_divide_factor(self, factor: float) -> None:
        """Deprecated spelling of :meth:`set_gradient_divide_factor`."""
        warnings.warn(
            "set_reduce_scatter_divide_factor is deprecated; use set_gradient_divide_factor",
            FutureWarning,
            stacklevel=2,
        )
        self.set_gradient_divide_factor(factor)

    def set_force_sum_reduction_for_comms(self, enable: bool) -> None:
        """Require SUM-only collectives, dividing before and after them instead of
        averaging in them (this module's groups, as torch). fsdp_ref's collectives are
        always SUM; what changes is *where* it divides, which torch's numbers (and what an
        all-reduce hook sees) depend on: :mod:`fsdp_ref.division`."""
        if not isinstance(enable, bool):
            raise TypeError(f"enable must be a bool, got {type(enable).__name__}")
        for group in self._groups():
            group.settings.force_sum_reduction = enable

    # ---- resharding policy ---------------------------------------------------------

    def set_reshard_after_forward(self, reshard_after_forward: bool, recurse: bool = True):
        """Change ``reshard_after_forward`` at run time (``True`` or ``False``)."""
        if not isinstance(reshard_after_forward, bool):
            raise ValueError(
                f"reshard_after_forward must be a bool here, got {reshard_after_forward!r}"
            )
        for group in self._recursive_groups(recurse):
            group.settings.reshard_after_forward = reshard_after_forward
            group.settings.post_forward_mesh_info = post_forward_mesh_info(
                reshard_after_forward, group.mesh_info
            )

    def set_reshard_after_backward(self, reshard_after_backward: bool, *, recurse: bool = True):
        """Whether to free unsharded parameters after backward (``False`` keeps them for
        the next forward, e.g. between gradient-accumulation microbatches)."""
        for group in self._recursive_groups(recurse):
            group.settings.reshard_after_backward = reshard_after_backward

    def set_unshard_in_backward(self, unshard_in_backward: bool) -> None:
        """Skip the backward all-gather for groups whose backward does not read the
        parameters (an expert setting, e.g. an embedding)."""
        for group in self._groups():
            group.settings.unshard_in_backward = unshard_in_backward

    # ---- communication customization -----------------------------------------------

    def set_custom_all_gather(self, comm: AllGather) -> None:
        """Use ``comm`` to allocate and run this module's all-gather."""
        if not callable(comm) or not hasattr(comm, "allocate"):
            raise ValueError("set_custom_all_gather expects an AllGather (allocate + __call__)")
        for group in self._groups():
            group.settings.custom_all_gather = comm

    def set_custom_reduce_scatter(self, comm: ReduceScatter) -> None:
        """Use ``comm`` to allocate and run this module's reduce-scatter."""
        if not callable(comm) or not hasattr(comm, "allocate"):
            raise ValueError(
                "set_custom_reduce_scatter expects a ReduceScatter (allocate + __call__)"
            )
        for group in self._groups():
            group.settings.custom_reduce_scatter = comm

    def set_all_reduce_hook(
        self, hook: Callable[[torch.Tensor], None], *, stream: torch.Stream | None = None
    ) -> None:
        """Run ``hook(reduced_grad_shard)`` on each reduced gradient shard, in place.

        Plain FSDP: the hook gets the reduce-scatter output (e.g. to all-reduce it across
        another dimension yourself) and runs on ``stream`` if given, ordered after the
        reduce-scatter and before the division by events (on CPU, where FSDP runs without
        streams, ``stream`` is ignored: everything is ordered by the host). HSDP: it gets
        the output of the native all-reduce across replicas and runs on the all-reduce
        stream, so ``stream`` must not be given. Either way it runs before the division by
        the data-parallel size.

        Raises:
            ValueError: ``stream`` given for a group under HSDP, with torch 2.13's exact
                message (its tests compare the text; the why and the fix are on the
                errors page: the hook runs on the all-reduce stream, call it without
                ``stream``).
        """
        for group in self._groups():
            if stream is not None and group.mesh_info.replicate_group is not None:
                raise ValueError("stream cannot be set when using native HSDP")
            group.settings.all_reduce_hook = hook
            group.settings.all_reduce_hook_stream = stream

    def set_reduce_scatter_max_input_buffers(
        self, max_input_buffers: int, *, recurse: bool = True
    ) -> None:
        """How many reduce-scatters (and their input buffers) may be in flight at once."""
        if isinstance(max_input_buffers, bool) or not isinstance(max_input_buffers, int):
            raise TypeError(f"max_input_buffers must be an int, got {type(max_input_buffers)}")
        if max_input_buffers < 1:
            raise ValueError(f"max_input_buffers must be >= 1, got {max_input_buffers}")
        for group in self._recursive_groups(recurse):
            group.settings.max_reductions_in_flight = max_input_buffers

    def set_separate_reduce_scatter_group(self, enable: bool = True, *, recurse: bool = True):
        """Run reduce-scatters on their own process group (one per set of shard ranks),
        so they can progress concurrently with all-gathers. Collective: call on all ranks.

        ``new_group`` must be called by every rank of the job with the same ranks, so the
        groups of *all* shard lines of the mesh are created (in mesh order), under HSDP
        and tensor parallelism too, and each rank keeps the one it belongs to.
        """
        made: dict[tuple[tuple[int, ...], ...], dict[tuple[int, ...], Any]] = {}
        for group in self._recursive_groups(recurse):
            info = group.mesh_info
            if not enable or info.shard_group is None:
                group.settings.reduce_scatter_group = None
                continue
            key = tuple(tuple(line) for line in info.shard_lines(info.shard_size).tolist())
            if key not in made:  # the same on every rank: the whole mesh's lines
                made[key] = {line: dist.new_group(list(line)) for line in key}
            mine = tuple(dist.get_process_group_ranks(info.shard_group))
            group.settings.reduce_scatter_group = made[key][mine]

    def set_allocate_memory_from_process_group_for_comm(self, enable: bool) -> None:
        """Allocate collective buffers from the process group's own allocator (NCCL's
        zero-copy-capable memory pool). Only NCCL provides one.

        Raises:
            RuntimeError: on any other backend (e.g. gloo), where no such allocator exists.
        """
        for group in self._groups():
            if enable:
                _require_nccl(group, "set_allocate_memory_from_process_group_for_comm")
                if group.settings.custom_all_gather or group.settings.custom_reduce_scatter:
                    raise ValueError(
                        "cannot combine process-group allocation with set_custom_all_gather/"
                        "set_custom_reduce_scatter; choose one"
                    )
            group.settings.allocate_from_process_group = enable

    def set_symm_mem_for_comm(self, backend: str = "NCCL") -> None:
        """Allocate all-gather buffers in symmetric memory (NCCL copy-engine collectives).

        Raises:
            RuntimeError: on a non-NCCL process group or for another ``backend``.
        """
        if backend != "NCCL":
            raise ValueError(f"only backend='NCCL' is supported, got {backend!r}")
        for group in self._groups():
            _require_nccl(group, "set_symm_mem_for_comm")
            group.settings.use_symm_mem = True

    def _set_unshard_async_op(self, async_op: bool) -> None:
        """Use ``async_op=True`` collectives (wait on the ``Work``) for the pre-forward and
        pre-backward all-gathers instead of stream events. On CPU this is always the case."""
        for group in self._groups():
            group.settings.unshard_async_op = async_op



def _require_nccl(group: FSDPParamGroup, method: str) -> None:
    backend = dist.get_backend(group.mesh_info.shard_group)
    if backend != "nccl":
        raise RuntimeError(
            f"{method} needs an NCCL process group (it uses NCCL's memory allocators); this "
            f"group uses {backend!r}. Leave it unset on {backend}"
        )


