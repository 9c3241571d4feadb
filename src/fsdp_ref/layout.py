"""Layout math for sharding one tensor along one dim: pure functions, no communication.

FSDP splits a parameter the way ``torch.chunk`` does: every rank gets ``ceil(n / world)``
rows of the shard dim except at the end, where ranks may get fewer rows or none. For the
collectives every rank needs the *same* number of elements, so each shard is padded up to
``ceil(n / world)`` rows. The padded, equal-size shards are what the all-gather exchanges
and what the reduce-scatter produces::

    full parameter (n=5 rows, world=2)      padded shards (3 rows each)
    r0 r1 r2 r3 r4                           rank 0: r0 r1 r2
                                             rank 1: r3 r4 [pad]

A *ranked view* is a tensor of shape ``(world, *padded_shard_shape)``: slice ``i`` is the
padded shard of rank ``i``. :func:`gather_from_ranked` fills a full tensor from it (the
all-gather copy-out when one ``split_with_sizes_copy`` cannot do it: uneven or
non-dim-0 shards, ``torch.compile``); the reduce-scatter input is built by one
``torch._chunk_cat`` (:func:`fsdp_ref.collectives.reduce_scatter_copy_in`).

**Subclass-safe sharding.** A parameter may be a tensor subclass (torchao's ``NF4Tensor``,
its float8 weight wrapper) that implements only the few ops FSDP needs, and every other op
either raises (``NF4Tensor``: ``narrow``/``slice`` only over the whole dim) or silently
returns a plain tensor (the float8 wrapper keeps its class only under ``split``,
``new_zeros``, ``slice``, ``copy_``, ``view`` ...). :meth:`ShardLayout.padded_shard`
therefore cuts a shard with exactly this sequence, which both support, and uses it for
every parameter (for a plain tensor it costs what ``narrow`` + ``zeros`` cost)::

    chunk  = torch.chunk(full, world, dim)[rank]    # aten.split on dim 0
    padded = full.new_zeros(padded_shard_shape)     # the subclass makes its own zeros
    padded.narrow(dim, 0, rows).copy_(chunk)        # a slice from 0 (all rows if even)

and :meth:`ShardLayout.local_view` takes the unpadded shard with one ``narrow`` from 0.
``torch.zeros(...)`` + ``copy_`` would turn the float8 wrapper into a plain tensor (the
copy lands in a plain buffer) and ``full.narrow(dim, offset, rows)`` is refused by NF4.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import torch

__all__ = [
    "ShardLayout",
    "chunk_sizes",
    "contiguous_stride",
    "gather_from_ranked",
    "split_ranks",
]


def chunk_sizes(dim_size: int, world_size: int) -> list[int]:
    """Sizes that ``torch.chunk(t, world_size, dim)`` gives each rank, padded with zeros.

    Args:
        dim_size: length of the shard dim.
        world_size: number of shards.

    Returns:
        A list of ``world_size`` sizes summing to ``dim_size``; trailing entries may be 0.
    """
    if world_size < 1:
        raise ValueError(f"world_size must be >= 1, got {world_size}")
    per_rank = math.ceil(dim_size / world_size) if dim_size else 0
    return [max(0, min(per_rank, dim_size - i * per_rank)) for i in range(world_size)]


def contiguous_stride(shape: torch.Size) -> tuple[int, ...]:
    """The strides of a contiguous tensor of ``shape`` (size-0 dims count as 1)."""
    stride, acc = [], 1
    for size in reversed(shape):
        stride.append(acc)
        acc *= max(size, 1)
    return tuple(reversed(stride))


@dataclass(frozen=True)
class ShardLayout:
    """Where one parameter's shard sits: the full shape, the shard dim and this rank's slice.

    The derived numbers (:attr:`rows_per_rank`, :attr:`padded_shard_shape`, ...) are
    computed on first use and kept: the layout is frozen, and the collectives read them
    for every parameter of every step.

    Attributes:
        full_shape: shape of the unsharded parameter.
        shard_dim: the dim that is split across ranks.
        world_size: number of shards.
        rank: this rank's index among them.
    """

    full_shape: torch.Size
    shard_dim: int
    world_size: int
    rank: int

    @functools.cached_property
    def rows_per_rank(self) -> int:
        """Padded length of the shard dim on every rank (``ceil(n / world)``)."""
        return math.ceil(self.full_shape[self.shard_dim] / self.world_size)

    def _with_rows(self, rows: int) -> torch.Size:
        shape = list(self.full_shape)
        shape[self.shard_dim] = rows
        return torch.Size(shape)

    @functools.cached_property
    def padded_shard_shape(self) -> torch.Size:
        """Shape of every rank's padded shard."""
        return self._with_rows(self.rows_per_rank)

    @functools.cached_property
    def padded_shard_numel(self) -> int:
        """Elements in one padded shard: what each rank contributes to the collectives."""
        return self.padded_shard_shape.numel()

    @functools.cached_property
    def local_rows(self) -> int:
        """Unpadded length of this rank's shard dim (may be 0 for trailing ranks)."""
        return chunk_sizes(self.full_shape[self.shard_dim], self.world_size)[self.rank]

    @functools.cached_property
    def local_shape(self) -> torch.Size:
        """Shape of this rank's unpadded shard."""
        return self._with_rows(self.local_rows)

    @functools.cached_property
    def padded_stride(self) -> tuple[int, ...]:
        """Strides of a contiguous padded shard."""
        return contiguous_stride(self.padded_shard_shape)

    def local_in(self, flat: torch.Tensor, offset: int) -> torch.Tensor:
        """The unpadded shard in a flat plain buffer that holds the padded shard from
        element ``offset`` on (a reduce-scatter output): one ``as_strided``, where
        :meth:`local_view` of the padded columns takes three views."""
        return flat.as_strided(self.local_shape, self.padded_stride,
                               flat.storage_offset() + offset)

    def local_view(self, padded_shard: torch.Tensor) -> torch.Tensor:
        """The unpadded shard as a view of a padded shard buffer (flat or shaped).

        A buffer that already has the padded shape is not viewed again, so a tensor subclass
        (which may only support a few views) goes through a single ``narrow`` from 0.
        """
        shaped = padded_shard
        if padded_shard.shape != self.padded_shard_shape:
            shaped = padded_shard.view(self.padded_shard_shape)
        return shaped.narrow(self.shard_dim, 0, self.local_rows)

    def pad(self, shard: torch.Tensor, device: torch.device | None = None) -> torch.Tensor:
        """A new padded buffer (shape :attr:`padded_shard_shape`) holding the unpadded
        ``shard``, zeros in the padding, on ``device`` (default: ``shard``'s)."""
        return self._fill(shard.new_zeros(self.padded_shard_shape), shard, device)

    def padded_shard(self, full: torch.Tensor, device: torch.device | None = None) -> torch.Tensor:
        """This rank's rows of the ``full`` tensor, cut out into a new padded buffer."""
        shard = torch.chunk(full, self.world_size, self.shard_dim)[self.rank] if (
            self.local_rows
        ) else None
        return self._fill(full.new_zeros(self.padded_shard_shape), shard, device)

    def _fill(self, padded: torch.Tensor, shard: torch.Tensor | None, device) -> torch.Tensor:
        """Copy ``shard`` into the first rows of ``padded`` (nothing is copied from or to
        the meta device), then move the result to ``device``."""
        if shard is not None and self.local_rows and "meta" not in (
            shard.device.type, padded.device.type
        ):
            padded.narrow(self.shard_dim, 0, self.local_rows).copy_(shard)
        if device is not None and padded.device != device:
            padded = padded.to(device)
        return padded

    def ranked_view(self, flat_ranks: torch.Tensor) -> torch.Tensor:
        """View a ``(world, padded_shard_numel)`` buffer as ``(world, *padded_shard_shape)``."""
        return flat_ranks.view(self.world_size, *self.padded_shard_shape)


def split_ranks(layout: ShardLayout, full: torch.Tensor) -> torch.Tensor:
    """View ``full`` (first ``world * rows`` rows) as ``(world, *padded_shard_shape)``:
    slice ``i`` is rank ``i``'s shard (even shards only: no padding)."""
    d, rows, world = layout.shard_dim, layout.rows_per_rank, layout.world_size
    shape = list(full.shape)
    split = shape[:d] + [world, rows] + shape[d + 1 :]
    return full.view(split).movedim(d, 0)


def gather_from_ranked(ranked: torch.Tensor, full: torch.Tensor, layout: ShardLayout) -> None:
    """Copy a ranked view (all-gather output) into the full tensor, dropping padding."""
    n = full.shape[layout.shard_dim]
    rows = layout.rows_per_rank
    if n == rows * layout.world_size:
        split_ranks(layout, full).copy_(ranked)
        return
    whole = n // rows if rows else 0
    if whole:
        full[: whole * rows].view(whole, rows, *full.shape[1:]).copy_(ranked[:whole])
    rest = n - whole * rows
    if rest:
        full[whole * rows :].copy_(ranked[whole, :rest])
