"""A group's all-gather buffer: which tensors go in, and where each sits in a row.

Pure data and arithmetic, no communication. A group sends one all-gather; every rank packs
its :class:`GatherInput` s back to back into one row of a flat buffer of ``world_size``
rows, and :class:`BufferPlan` says where each input sits: in the inputs' own dtype when they
all agree, else as bytes with each input aligned so that it can be viewed back in its own
dtype. :mod:`fsdp_ref.collectives` moves the data; the design page ``design/extensions.md``
draws the byte layout of a mixed-dtype group from :meth:`BufferPlan.of`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from .layout import ShardLayout

__all__ = ["BufferPlan", "GatherInput", "allocate_storage", "free_storage", "plan_gather",
           "storage_slots"]


@dataclass(frozen=True)
class GatherInput:
    """One tensor a rank puts into its group's all-gather.

    A plain parameter gives one (its padded shard, cast to ``param_dtype`` on the way in);
    a parameter with the ``fsdp_pre_all_gather`` extension gives what its hook returned
    (:mod:`fsdp_ref.extensions`).

    Attributes:
        tensor: this rank's padded data (any shape: it is read flat).
        layout: how the ranks' pieces form the gathered tensor.
        dtype: the input's dtype in the buffer.
    """

    tensor: torch.Tensor
    layout: ShardLayout
    dtype: torch.dtype


@dataclass(frozen=True)
class BufferPlan:
    """Where each input sits in a group's flat buffer of ``world_size`` equal rows.

    One dtype for the whole buffer when every input has it; otherwise the buffer is bytes
    (``torch.uint8``) and each input occupies ``numel * itemsize`` bytes of a row, starting
    at an offset aligned to the largest itemsize (the row width too), so that every
    input's columns can be viewed back in its own dtype in every row (:meth:`columns`).

    Attributes:
        dtype: the buffer's dtype.
        dtypes: each input's own dtype.
        offsets: each input's first column in a row, in buffer elements.
        sizes: each input's columns in a row, in buffer elements.
        width: columns per row.
        world_size: rows.
    """

    dtype: torch.dtype
    dtypes: tuple[torch.dtype, ...]
    offsets: tuple[int, ...]
    sizes: tuple[int, ...]
    width: int
    world_size: int

    @classmethod
    def of(cls, numels: Sequence[int], dtypes: Sequence[torch.dtype], world_size: int):
        """Plan a buffer for inputs of ``numels`` elements (per rank) of ``dtypes``."""
        dtypes = tuple(dtypes)
        uniform = len(set(dtypes)) <= 1
        itemsizes = [1 if uniform else d.itemsize for d in dtypes]
        align = max(itemsizes, default=1)
        offsets, sizes, width = [], [], 0
        for numel, itemsize in zip(numels, itemsizes):
            width = -(-width // align) * align
            offsets.append(width)
            sizes.append(numel * itemsize)
            width += numel * itemsize
        width = -(-width // align) * align
        dtype = dtypes[0] if uniform and dtypes else torch.uint8
        return cls(dtype, dtypes, tuple(offsets), tuple(sizes), width, world_size)

    @property
    def is_uniform(self) -> bool:
        """Whether the buffer is in every input's own dtype (no byte views needed)."""
        return all(d == self.dtype for d in self.dtypes)

    @property
    def numel(self) -> int:
        """Elements of the whole buffer (``world_size`` rows)."""
        return self.world_size * self.width

    def allocate(self, device: torch.device, allocate=None) -> torch.Tensor:
        """A new flat buffer for this plan (``allocate``: see :func:`buffer_allocator`)."""
        if allocate is None:
            return torch.empty(self.numel, dtype=self.dtype, device=device)
        return allocate(self.numel, self.dtype, device)

    def columns(self, rows: torch.Tensor, i: int) -> torch.Tensor:
        """Input ``i``'s columns of ``rows`` (``(world, width)`` or one row ``(width,)``),
        in the input's own dtype."""
        cols = rows.narrow(-1, self.offsets[i], self.sizes[i])
        return cols if cols.dtype == self.dtypes[i] else cols.view(self.dtypes[i])


def plan_gather(inputs: Sequence[GatherInput]) -> BufferPlan:
    """The buffer plan of an all-gather of ``inputs`` (one group's, in order)."""
    world = inputs[0].layout.world_size if inputs else 1
    return BufferPlan.of([i.layout.padded_shard_numel for i in inputs],
                         [i.dtype for i in inputs], world)


def storage_slots(tensors: Sequence[torch.Tensor]) -> list[tuple[torch.UntypedStorage, int]]:
    """Each tensor's storage and the bytes its shape needs, for :func:`allocate_storage`
    and :func:`free_storage`.

    The buffers an all-gather fills every iteration (unsharded parameters, an extension's
    all-gather outputs) keep their tensor objects for the life of the module: autograd
    saves them in forward and must find the same ones in backward. Only their memory
    comes and goes, by resizing the storage under them, so the slots of such a tensor can
    be looked up once and kept (:meth:`fsdp_ref.param.FSDPParam.alloc_unsharded` does).
    """
    return [(t.untyped_storage(), t.numel() * t.element_size()) for t in tensors]


def allocate_storage(slots: Sequence[tuple[torch.UntypedStorage, int]]) -> None:
    """Give each storage of ``slots`` (:func:`storage_slots`) its bytes again, after
    :func:`free_storage`."""
    for storage, nbytes in slots:
        if storage.size() != nbytes:
            storage.resize_(nbytes)


def free_storage(slots: Sequence[tuple[torch.UntypedStorage, int]]) -> None:
    """Release each storage's memory; the tensor objects (and their views) stay."""
    for storage, _ in slots:
        storage.resize_(0)
