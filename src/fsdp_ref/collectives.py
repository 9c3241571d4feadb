"""The three collectives of FSDP and the buffer layouts around them, as pure functions.

In DTensor terms: a parameter is ``Shard(0)`` on the mesh; *using* it is a redistribute
to ``Replicate()``, which is the **all-gather**; its gradient comes back ``Partial()``
(each rank holds a summand), and turning that into ``Shard(0)`` is the
**reduce-scatter**. HSDP adds an **all-reduce** across replicas of the reduced shard.

One group of parameters is communicated in one collective, through flat buffers of one
row per rank (:class:`BufferPlan` says where each input sits in a row):

* all-gather copy-in: each rank packs its inputs (:class:`GatherInput`: the padded shard
  of every plain parameter, cast to ``param_dtype`` on the way; what the
  ``fsdp_pre_all_gather`` hook of an extension parameter returned) back to back into
  ``inp``. ``inp`` is a row of the output buffer ``out`` (world rows), so the all-gather
  runs in place. When the inputs' dtypes differ (fp32 adapters beside a bf16 base, an
  ``NF4Tensor``'s uint8 data and bf16 scales) the buffer is bytes and each input is
  viewed back in its own dtype;
* all-gather copy-out: ``out`` viewed as ``(world, width)`` holds rank ``i``'s inputs in
  row ``i``; each input's columns, viewed as ``(world, *padded_shard_shape)``, are copied
  into its full tensor;
* reduce-scatter copy-in: the mirror image, in one dtype: every gradient is split into its
  padded per-rank chunks and written into column ranges of a ``(world, width)`` buffer;
  the reduce-scatter leaves each rank its row, from which each parameter's gradient shard
  is a view.

Float8 payloads travel as bytes: gloo has no float8 types, so :func:`run_all_gather` hands
the collective ``uint8`` views of a float8 buffer (same bits, same size) on every backend.

Reductions always use ``SUM`` and divide afterwards: gloo emulates reduce-scatter and its
``AVG`` has had silent correctness bugs, and an explicit factor is easier to reason about.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.distributed as dist

from .debug import before_collective
from .layout import ShardLayout, gather_from_ranked, scatter_to_ranked
from .streams import recorder

__all__ = [
    "BufferPlan",
    "GatherInput",
    "buffer_allocator",
    "all_gather_copy_in",
    "all_gather_copy_out",
    "all_reduce",
    "reduce_scatter_copy_in",
    "reduce_scatter",
    "run_all_gather",
]


# torch 2.13 names the flat collectives all_gather_single / reduce_scatter_single; older
# releases (2.11, as found on some GPU machines) call them all_gather_into_tensor /
# reduce_scatter_tensor, with the same arguments. Look the name up at call time, so that a
# wrapper installed on torch.distributed (a test's counter, the race detector) sees it.
_FLOAT8 = frozenset(
    getattr(torch, name) for name in
    ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu")
    if hasattr(torch, name)
)


def _all_gather_single(out, inp, **kwargs):
    if hasattr(dist, "all_gather_single"):
        return dist.all_gather_single(out, inp, **kwargs)
    return dist.all_gather_into_tensor(out, inp, **kwargs)


def _reduce_scatter_single(out, inp, **kwargs):
    if hasattr(dist, "reduce_scatter_single"):
        return dist.reduce_scatter_single(out, inp, **kwargs)
    return dist.reduce_scatter_tensor(out, inp, **kwargs)


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


def all_gather_copy_in(
    inputs: Sequence[GatherInput],
    rank: int,
    device: torch.device,
    allocate=None,
) -> tuple[BufferPlan, torch.Tensor, torch.Tensor]:
    """Pack this rank's inputs into a new all-gather buffer.

    Args:
        inputs: what each parameter of the group contributes, in order.
        rank: this rank's index in the gather group (its row of the output).
        device: device of the buffers.
        allocate: optional ``(numel, dtype, device) -> Tensor`` for custom memory.

    Returns:
        ``(plan, inp, out)``: ``inp`` is row ``rank`` of ``out`` (``plan.numel`` elements).
    """
    world = inputs[0].layout.world_size if inputs else 1
    plan = BufferPlan.of([i.layout.padded_shard_numel for i in inputs],
                         [i.dtype for i in inputs], world)
    out = plan.allocate(device, allocate)
    inp = out.narrow(0, rank * plan.width, plan.width)
    dsts = [plan.columns(inp, i) for i in range(len(inputs))]
    if dsts:
        torch._foreach_copy_(dsts, [i.tensor.reshape(-1) for i in inputs], non_blocking=True)
    return plan, inp, out


def run_all_gather(
    out: torch.Tensor,
    inp: torch.Tensor,
    group: dist.ProcessGroup | None,
    async_op: bool,
    custom=None,
    label: str = "",
    phase: str | None = None,
):
    """Launch the all-gather of ``inp`` into ``out``; returns the ``Work`` or ``None``.

    ``group=None`` means no shard dim (``dp_mesh_dims`` with ``replicate`` only): every
    rank holds whole parameters, ``inp`` already is all of ``out``, nothing is sent.
    """
    before_collective("all_gather", group, label, inp, out, phase=phase)
    if group is None:
        return None
    recorder.log("collective", "all_gather", "all_gather", label)
    if out.dtype in _FLOAT8:  # gloo refuses float8: move the same bits as bytes
        out, inp = out.view(torch.uint8), inp.view(torch.uint8)
    if custom is not None:
        return custom(out, inp, group, async_op=async_op)
    return _all_gather_single(out, inp, group=group, async_op=async_op)


def all_gather_copy_out(
    out: torch.Tensor,
    plan: BufferPlan,
    layouts: Sequence[ShardLayout],
    unsharded: Sequence[torch.Tensor],
) -> None:
    """Copy each input's gathered columns from ``out`` into its full tensor (in the
    input's own dtype: a byte buffer is viewed back per input, see :class:`BufferPlan`)."""
    rows = out.view(plan.world_size, plan.width)
    for i, (layout, full) in enumerate(zip(layouts, unsharded)):
        gather_from_ranked(layout.ranked_view(plan.columns(rows, i)), full, layout)


def reduce_scatter_copy_in(
    grads: Sequence[torch.Tensor | None],
    layouts: Sequence[ShardLayout],
    dtype: torch.dtype,
    device: torch.device,
    allocate=None,
) -> tuple[BufferPlan, torch.Tensor]:
    """Build the reduce-scatter input: row ``i`` holds rank ``i``'s chunk of every grad,
    in one ``dtype`` (a sum needs one: see :mod:`fsdp_ref.reduction` for mixed dtypes).

    A ``None`` grad (a parameter unused on this rank) contributes zeros.
    """
    world = layouts[0].world_size if layouts else 1
    plan = BufferPlan.of([lay.padded_shard_numel for lay in layouts], [dtype] * len(layouts),
                         world)
    buf = plan.allocate(device, allocate)
    rows = buf.view(world, plan.width)
    for i, (layout, grad) in enumerate(zip(layouts, grads)):
        ranked = layout.ranked_view(plan.columns(rows, i))
        if grad is None:
            ranked.zero_()
        else:
            scatter_to_ranked(grad, ranked, layout)
    return plan, buf


def reduce_scatter(
    inp: torch.Tensor,
    group: dist.ProcessGroup | None,
    async_op: bool,
    custom=None,
    label: str = "",
    phase: str | None = None,
):
    """Sum ``inp`` over ``group`` and keep this rank's row; returns ``(out, work)``.

    ``group=None`` (no shard dim): the single row is ``inp`` itself; only the all-reduce
    across replicas that follows reduces anything.
    """
    before_collective("reduce_scatter", group, label, inp, phase=phase)
    if group is None:
        return inp, None
    out = torch.empty(inp.numel() // group.size(), dtype=inp.dtype, device=inp.device)
    recorder.log("collective", "reduce_scatter", "reduce_scatter", label)
    if custom is not None:
        work = custom(out, inp, group, dist.ReduceOp.SUM, async_op=async_op)
    else:
        work = _reduce_scatter_single(
            out, inp, op=dist.ReduceOp.SUM, group=group, async_op=async_op
        )
    return out, work


def all_reduce(
    tensor: torch.Tensor, group: dist.ProcessGroup, label: str = "", phase: str | None = None
):
    """Sum ``tensor`` in place across ``group`` (the HSDP replica reduction).

    ``label`` names the group and ``phase`` the step of the iteration, for logs and for
    the debug mode's fingerprint (:mod:`fsdp_ref.debug`), as in the two functions above.
    """
    before_collective("all_reduce", group, label, tensor, phase=phase)
    recorder.log("collective", "all_reduce", "all_reduce", label)
    dist.all_reduce(tensor, op=dist.ReduceOp.SUM, group=group)


def buffer_allocator(custom=None, *, symmetric_group=None, pool_group=None, device=None):
    """How a collective's flat buffer is allocated: ``(numel, dtype, device) -> Tensor``,
    or ``None`` for plain ``torch.empty``.

    In order of precedence: a custom comm's ``allocate`` (``set_custom_all_gather`` /
    ``set_custom_reduce_scatter``); symmetric memory registered with ``symmetric_group``
    (NCCL copy-engine collectives); NCCL's own memory pool of ``pool_group`` (zero-copy
    capable). The first two are given by the caller; only one applies.
    """
    if custom is not None:
        return lambda numel, dt, dev: custom.allocate((numel,), dtype=dt, device=dev)
    if symmetric_group is not None:
        from torch.distributed import _symmetric_memory as symm_mem

        def symmetric_alloc(numel, dt, dev):
            buf = symm_mem.empty(numel, dtype=dt, device=dev)
            symm_mem.rendezvous(buf, group=symmetric_group)
            return buf

        return symmetric_alloc
    if pool_group is not None:
        pool = torch.cuda.MemPool(pool_group._get_backend(device).mem_allocator)

        def pool_alloc(numel, dt, dev):
            with torch.cuda.use_mem_pool(pool):
                return torch.empty(numel, dtype=dt, device=dev)

        return pool_alloc
    return None
