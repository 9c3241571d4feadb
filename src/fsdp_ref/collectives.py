"""The three collectives of FSDP and the buffer layouts around them, as pure functions.

In DTensor terms: a parameter is ``Shard(0)`` on the mesh; *using* it is a redistribute
to ``Replicate()``, which is the **all-gather**; its gradient comes back ``Partial()``
(each rank holds a summand), and turning that into ``Shard(0)`` is the
**reduce-scatter**. HSDP adds an **all-reduce** across replicas of the reduced shard.

One group of parameters is communicated in one collective, through flat buffers of one
row per rank (:class:`~fsdp_ref.buffer_plan.BufferPlan` says where each input sits in a
row):

* all-gather copy-in: each rank packs its inputs (:class:`~fsdp_ref.buffer_plan.GatherInput`: the padded shard
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

import torch
import torch.distributed as dist

from .buffer_plan import BufferPlan, GatherInput
from .debug import before_collective
from .layout import ShardLayout, gather_from_ranked, split_ranks
from .recorder import recorder

__all__ = [
    "buffer_allocator",
    "has_peers",
    "all_gather_copy_in",
    "all_gather_copy_out",
    "copy_out_views",
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


def has_peers(group: dist.ProcessGroup | None) -> bool:
    """Whether ``group`` has ranks besides this one. Without peers a collective moves
    nothing: an all-gather's input already is its whole output, a reduce-scatter's input
    its own sum. Then none is issued (a one-rank mesh communicates nothing, as in torch)."""
    return group is not None and group.size() > 1


def all_gather_copy_in(
    inputs: Sequence[GatherInput],
    plan: BufferPlan,
    rank: int,
    device: torch.device,
    allocate=None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Pack this rank's inputs into a new all-gather buffer.

    Args:
        inputs: what each parameter of the group contributes, in order.
        plan: their :func:`plan_gather` (a group reuses it while its inputs stay the same).
        rank: this rank's index in the gather group (its row of the output).
        device: device of the buffers.
        allocate: optional ``(numel, dtype, device) -> Tensor`` for custom memory.

    Returns:
        ``(inp, out)``: ``inp`` is row ``rank`` of ``out`` (``plan.numel`` elements).
    """
    out = plan.allocate(device, allocate)
    inp = out.narrow(0, rank * plan.width, plan.width)
    flat = [i.tensor if i.tensor.dim() == 1 else i.tensor.reshape(-1) for i in inputs]
    if plan.is_uniform:  # one concatenation, casting to the buffer's dtype on the way
        torch.cat(flat, out=inp)
    elif inputs:  # bytes: every input is written through a view in its own dtype
        dsts = [plan.columns(inp, i) for i in range(len(inputs))]
        torch._foreach_copy_(dsts, flat, non_blocking=True)
    return inp, out


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

    Without peers (``group=None``: no shard dim, as ``dp_mesh_dims`` with ``replicate``
    only; or a one-rank group) every rank holds whole parameters, ``inp`` already is all
    of ``out``, nothing is sent.
    """
    if not has_peers(group):
        return None
    before_collective("all_gather", group, label, inp, out, phase=phase)
    recorder.log("collective", "all_gather", "all_gather", label)
    if out.dtype in _FLOAT8:  # gloo refuses float8: move the same bits as bytes
        out, inp = out.view(torch.uint8), inp.view(torch.uint8)
    if custom is not None:
        return custom(out, inp, group, async_op=async_op)
    return _all_gather_single(out, inp, group=group, async_op=async_op)


def copy_out_views(
    plan: BufferPlan, layouts: Sequence[ShardLayout], unsharded: Sequence[torch.Tensor]
) -> list[torch.Tensor] | None:
    """Each full tensor viewed as ``(world, -1)``, when that puts rank ``i``'s shard in
    row ``i`` of every one of them (one dtype, dim-0 shards without padding, contiguous
    tensors): then one ``split_with_sizes_copy`` is the whole copy-out. ``None`` otherwise.
    """
    world = plan.world_size
    if plan.is_uniform and all(
        lay.shard_dim == 0 and lay.full_shape[0] == lay.rows_per_rank * world
        and full.is_contiguous() for lay, full in zip(layouts, unsharded)
    ):
        return [full.view(world, -1) for full in unsharded]
    return None


def all_gather_copy_out(
    out: torch.Tensor,
    plan: BufferPlan,
    layouts: Sequence[ShardLayout],
    unsharded: Sequence[torch.Tensor],
    views: list[torch.Tensor] | None = None,
) -> None:
    """Copy each input's gathered columns from ``out`` into its full tensor (in the
    input's own dtype: a byte buffer is viewed back per input, see :class:`BufferPlan`).

    ``views``: the :func:`copy_out_views` of ``unsharded``, if any, for the one-op copy
    (not under ``torch.compile``, which would not reuse views made outside the graph).
    """
    rows = out.view(plan.world_size, plan.width)
    if views is not None and not torch.compiler.is_compiling():
        torch.split_with_sizes_copy(rows, plan.sizes, dim=1, out=views)
        return
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
    in one ``dtype`` (a sum needs one: see :mod:`fsdp_ref.reduce` for mixed dtypes).

    A ``None`` grad (a parameter unused on this rank) contributes zeros.
    """
    world = layouts[0].world_size if layouts else 1
    plan = BufferPlan.of([lay.padded_shard_numel for lay in layouts], [dtype] * len(layouts),
                         world)
    buf = plan.allocate(device, allocate)
    # _chunk_cat writes chunk i of every source (along dim 0, ceil(n / world) rows,
    # zero-padded) into row i: each source's padded shards, as the reduce-scatter wants.
    present = {g.dtype for g in grads if g is not None}
    common = present.pop() if len(present) == 1 else dtype  # cast only mixed dtypes
    sources = [_chunk_source(g, lay, common, device)
               for g, lay in zip(grads, layouts) if lay.padded_shard_numel]
    if sources:
        torch._chunk_cat(sources, 0, world, out=buf.view(world, plan.width))
    return plan, buf


def _chunk_source(grad, layout: ShardLayout, dtype: torch.dtype, device) -> torch.Tensor:
    """``grad`` as a source whose dim-0 chunks are the padded shards: zeros for a
    parameter unused on this rank, a shard dim ``d > 0`` (always even) viewed as
    ``(world, *padded_shard_shape)`` by :func:`~fsdp_ref.layout.split_ranks`."""
    if grad is None:
        zeros = torch.zeros(layout.world_size * layout.padded_shard_numel, dtype=dtype,
                            device=device)
        recorder.name_buffer(zeros, "zeros for an unused parameter's reduce-scatter input")
        return zeros
    grad = grad if grad.dtype == dtype else grad.to(dtype)
    return grad if layout.shard_dim == 0 else split_ranks(layout, grad)


def reduce_scatter(
    inp: torch.Tensor,
    group: dist.ProcessGroup | None,
    async_op: bool,
    custom=None,
    label: str = "",
    phase: str | None = None,
):
    """Sum ``inp`` over ``group`` and keep this rank's row; returns ``(out, work)``.

    Without peers (no shard dim, or a one-rank group) the single row is ``inp`` itself;
    only an all-reduce across replicas that follows reduces anything.
    """
    if not has_peers(group):
        return inp, None
    before_collective("reduce_scatter", group, label, inp, phase=phase)
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
    """Sum ``tensor`` in place across ``group`` (the HSDP replica reduction); nothing
    without peers.

    ``label`` names the group and ``phase`` the step of the iteration, for logs and for
    the debug mode's fingerprint (:mod:`fsdp_ref.debug`), as in the two functions above.
    """
    if not has_peers(group):
        return
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
