"""Configuration objects of the public API: policies, mesh dims, and communication hooks.

These are the plain values a user passes to :func:`fsdp_ref.fully_shard`. They carry no
behaviour beyond validation; the runtime reads them when it builds a parameter group.
Names, fields and defaults match ``torch.distributed.fsdp`` so that switching the import
is the only change a training script needs.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.distributed as dist

__all__ = [
    "AllGather",
    "CPUOffloadPolicy",
    "Comm",
    "DataParallelMeshDims",
    "MixedPrecisionPolicy",
    "OffloadPolicy",
    "ReduceScatter",
]


@dataclass(frozen=True)
class MixedPrecisionPolicy:
    """Module-level mixed precision: which dtype to gather, compute, reduce and return in.

    The sharded parameters always stay in their original dtype, so the optimizer steps on
    full-precision values; only the all-gathered (unsharded) copy is cast. Casting happens at
    module boundaries, not per op as with autocast, so activations saved for backward are in
    ``param_dtype`` too.

    Attributes:
        param_dtype: dtype of the unsharded parameters, hence of the all-gather and of the
            forward/backward compute. ``None`` keeps the original dtype.
        reduce_dtype: dtype of gradient reduction (reduce-scatter and all-reduce). ``None``
            means "same as ``param_dtype``". Gradients are cast back to the sharded
            parameter's dtype after the reduction.
        output_dtype: dtype that floating-point forward outputs are cast to. ``None`` leaves
            outputs alone. Useful at the boundary between groups with different policies.
        cast_forward_inputs: whether floating-point forward inputs are cast to
            ``param_dtype`` before the module runs.
    """

    param_dtype: torch.dtype | None = None
    reduce_dtype: torch.dtype | None = None
    output_dtype: torch.dtype | None = None
    cast_forward_inputs: bool = True


@dataclass
class OffloadPolicy:
    """No offloading: sharded parameters, gradients and optimizer state stay on the device.

    This base class is the default value of ``fully_shard(offload_policy=...)``.
    """


@dataclass
class CPUOffloadPolicy(OffloadPolicy):
    """Keep sharded parameters, their gradients and hence the optimizer state on the CPU.

    Before each all-gather the shard is copied host-to-device; after each reduce-scatter the
    reduced gradient shard is copied device-to-host, and the optimizer steps on the CPU.

    Attributes:
        pin_memory: pin the CPU shards so host/device copies can run asynchronously and
            overlap with compute. Only meaningful when an accelerator is present.
    """

    pin_memory: bool = True


@dataclass
class DataParallelMeshDims:
    """Names which dims of a larger SPMD mesh are data parallel.

    With ``fully_shard(mesh=spmd_mesh, dp_mesh_dims=DataParallelMeshDims(...))`` the mesh is
    the full SPMD mesh; FSDP shards over the ``shard`` dim(s) and replicates (HSDP) over the
    ``replicate`` dim(s). Several names are flattened into one dim.

    Attributes:
        shard: mesh dim name(s) to shard over.
        replicate: mesh dim name(s) to replicate over.
    """

    shard: str | tuple[str, ...] | None = None
    replicate: str | tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.shard is None and self.replicate is None:
            raise ValueError(
                "DataParallelMeshDims needs at least one of shard= or replicate=, "
                "e.g. DataParallelMeshDims(shard='dp')"
            )

    @property
    def shard_names(self) -> tuple[str, ...]:
        """The shard dim names as a tuple (empty when unset)."""
        return _as_names(self.shard)

    @property
    def replicate_names(self) -> tuple[str, ...]:
        """The replicate dim names as a tuple (empty when unset)."""
        return _as_names(self.replicate)


def _as_names(value: str | tuple[str, ...] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(value)


class Comm(ABC):
    """A communication primitive that also decides where its buffers live.

    Subclasses implement :meth:`allocate` (e.g. from a special memory pool) and
    ``__call__`` (the collective itself).
    """

    @abstractmethod
    def allocate(
        self, size: Sequence[int], *, dtype: torch.dtype, device: torch.device
    ) -> torch.Tensor:
        """Return an uninitialized buffer of ``size`` for the collective to use."""


class AllGather(Comm):
    """A custom all-gather, installed with ``FSDPModule.set_custom_all_gather``."""

    @abstractmethod
    def __call__(
        self,
        output_tensor: torch.Tensor,
        input_tensor: torch.Tensor,
        group: dist.ProcessGroup,
        async_op: bool = False,
    ) -> dist.Work | None:
        """Gather ``input_tensor`` from every rank of ``group`` into ``output_tensor``."""


class ReduceScatter(Comm):
    """A custom reduce-scatter, installed with ``FSDPModule.set_custom_reduce_scatter``."""

    @abstractmethod
    def __call__(
        self,
        output_tensor: torch.Tensor,
        input_tensor: torch.Tensor,
        group: dist.ProcessGroup,
        op: dist.ReduceOp,
        async_op: bool = False,
    ) -> dist.Work | None:
        """Reduce ``input_tensor`` over ``group`` and keep this rank's slice."""
