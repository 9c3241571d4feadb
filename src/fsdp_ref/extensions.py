"""FSDP2's all-gather extension: tensor subclasses that choose what is all-gathered.

A parameter whose sharded local tensor defines both hooks below is not all-gathered as
its padded shard. Instead, on every unshard (torch 2.13's contract, reimplemented here)::

    copy-in stream   inputs, metadata = local.fsdp_pre_all_gather(mesh)        # or the
                     long form (mesh, outer_size, outer_stride, module, mp_policy)
                     each input is packed into the group's all-gather buffer (bytes when
                     the dtypes of the group's inputs differ: fsdp_ref.collectives)
    all-gather       the buffer, one collective for the whole group
    compute stream   copy-out into this parameter's own all-gather outputs, one per
                     input, of shape (world * input.shape[0], *input.shape[1:])
                     first time: unsharded, inner = local.fsdp_post_all_gather(
                                     outputs, metadata, param_dtype)
                                 the unsharded parameter is ``unsharded`` (its first
                                 ``full_shape`` elements: padding rows fall off the end)
                     later:      local.fsdp_post_all_gather(outputs, metadata,
                                     param_dtype, out=unsharded_param)
                                 fills the same parameter in place; the outputs are the
                                 same tensors (their storage re-allocated), which NF4
                                 asserts
    reshard          free the storage of the outputs and of ``inner``

Rules, each checked with a clear error (identical on every rank: the model is):

* both hooks or neither; the pre hook takes ``(mesh)`` or ``(mesh, outer_size,
  outer_stride, module, mp_policy)``; the post hook takes ``out=``;
* an extension shards on dim 0 and cannot be combined with an int
  ``reshard_after_forward`` (it has no post-forward shard);
* an unevenly sharded parameter's pre hook returns inputs of the *padded* shard size on
  every rank. Only the ranks that pad can break this rule, so the first all-gather of a
  group with extensions exchanges every rank's input sizes (:func:`agree_on_inputs`) and
  every rank raises the same error instead of the others hanging in the collective.
  Later unshards check locally that the sizes did not change.

Under CPU offload the pre hook runs on the device copy of the shard.

The hooks are looked up on the sharded local tensor, its class or the object itself, when
``fully_shard`` builds the sharded parameter and again at the root's lazy init (or an
``unshard()`` before it), as torch does: hooks attached to ``module.weight._local_tensor``
after ``fully_shard`` are used (:meth:`fsdp_ref.param.FSDPParam.adopt`).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.device_mesh import DeviceMesh

from .buffer_plan import allocate_storage, free_storage, storage_slots
from .layout import ShardLayout
from .mesh import MeshInfo

__all__ = ["Extension", "agree_on_inputs", "find_extension", "input_problems", "shard_mesh"]

PRE, POST = "fsdp_pre_all_gather", "fsdp_post_all_gather"
_LONG_FORM = "fsdp_pre_all_gather(self, mesh, outer_size, outer_stride, module, mp_policy)"


def find_extension(local: torch.Tensor, fqn: str, shard_dim: int) -> Extension | None:
    """The :class:`Extension` of a parameter whose sharded local tensor is ``local``, or
    ``None`` when it defines neither hook.

    Raises:
        ValueError: one hook without the other, a pre hook with another signature than
            the two above, a post hook without ``out=``, or a shard dim other than 0.
    """
    has_pre, has_post = hasattr(local, PRE), hasattr(local, POST)
    what = f"{fqn} ({type(local).__name__})"
    if has_pre != has_post:
        present, missing = (PRE, POST) if has_pre else (POST, PRE)
        raise ValueError(
            f"{what} defines {present} but not {missing}; FSDP's all-gather extension needs "
            "both hooks (the pre hook says what to gather, the post hook builds the "
            f"unsharded tensor from it): define {missing}, or neither"
        )
    if not has_pre:
        return None
    params = inspect.signature(getattr(local, PRE)).parameters
    if len(params) not in (1, 5):
        raise ValueError(
            f"{what} has {PRE}{inspect.signature(getattr(local, PRE))}; FSDP calls "
            f"fsdp_pre_all_gather(self, mesh) or {_LONG_FORM}: use one of the two"
        )
    post = inspect.signature(getattr(local, POST)).parameters
    if "out" not in post and not any(p.kind is p.VAR_KEYWORD for p in post.values()):
        raise ValueError(
            f"{what} has {POST}{inspect.signature(getattr(local, POST))}; FSDP calls it "
            "again with out=<the unsharded parameter> on every later all-gather to fill it "
            "in place: add a keyword argument out=None"
        )
    if shard_dim != 0:
        raise ValueError(
            f"{what} defines the FSDP all-gather extension and was given Shard({shard_dim}) "
            "by shard_placement_fn; the extension gathers its inputs along dim 0: return "
            "None (Shard(0)) for this parameter"
        )
    return Extension(long_form=len(params) == 5)


def shard_mesh(info: MeshInfo) -> DeviceMesh:
    """The mesh the pre hook gets, as torch passes it: the 1-D mesh of the ranks a
    parameter is spread over, that is its shard dim (its replicate dim under
    ``replicate``), sliced by name out of a larger mesh (HSDP, ``dp_mesh_dims``)."""
    mesh = info.mesh
    dim = info.shard_mesh_dim if info.shard_mesh_dim is not None else info.replicate_mesh_dim
    if mesh.ndim == 1 or dim is None or mesh.mesh_dim_names is None:
        return mesh
    return mesh[mesh.mesh_dim_names[dim]]


class Extension:
    """What FSDP keeps for one parameter with the all-gather extension.

    Attributes:
        long_form: whether the pre hook takes the five-argument form.
        metadata: what the last pre hook returned beside its inputs, for the post hook.
        sizes: the input sizes the ranks agreed on (``None`` before the first all-gather).
        outputs: this parameter's all-gather outputs, one per input, kept across
            iterations (their storage is freed at reshard and re-allocated).
        inner: the tensors the first post hook said to free at reshard.
        last_inputs: ``(size, dtype)`` of each input the last pre hook returned.
    """

    def __init__(self, long_form: bool) -> None:
        self.long_form = long_form
        self.metadata: Any = None
        self.sizes: list[torch.Size] | None = None
        self.last_inputs: list[tuple[torch.Size, torch.dtype]] = []
        self.outputs: list[torch.Tensor] = []
        self.inner: list[torch.Tensor] = []

    def pre_all_gather(self, local, mesh, full_shape, module, mp_policy, fqn) -> list:
        """Call the pre hook on ``local`` (the shard, on the compute device); return its
        inputs, flat."""
        if self.long_form:
            stride = torch.empty(full_shape, device="meta").stride()
            inputs, self.metadata = getattr(local, PRE)(mesh, full_shape, stride, module,
                                                        mp_policy)
        else:
            inputs, self.metadata = getattr(local, PRE)(mesh)
        if not inputs or not all(isinstance(t, torch.Tensor) for t in inputs):
            raise TypeError(
                f"{PRE} of {fqn} returned {type(inputs).__name__} "
                f"{inputs!r:.80}; it must return (inputs, metadata) with inputs a non-empty "
                "tuple of tensors"
            )
        sizes = [t.size() for t in inputs]
        if self.sizes is not None and sizes != self.sizes:
            raise RuntimeError(
                f"{PRE} of {fqn} returned inputs of sizes "
                f"{[tuple(s) for s in sizes]}, but {[tuple(s) for s in self.sizes]} at the "
                "first all-gather; the other ranks all-gather the old sizes, so the sizes "
                "must stay fixed"
            )
        self.last_inputs = [(t.size(), t.dtype) for t in inputs]
        return [t.contiguous().view(-1) for t in inputs]

    def alloc_outputs(self, world_size: int, device: torch.device) -> list[torch.Tensor]:
        """This parameter's all-gather outputs with storage: created at the first
        all-gather, re-allocated in place after a reshard (as are the ``inner`` tensors)."""
        if not self.outputs:
            self.outputs = [torch.empty(world_size * s.numel(), dtype=d, device=device)
                            for s, d in self.last_inputs]
        allocate_storage(storage_slots((*self.outputs, *self.inner)))
        return self.outputs

    def post_all_gather(self, local, param_dtype, out: nn.Parameter | None):
        """Call the post hook on the gathered outputs: returns the unsharded tensor the
        first time (``out`` is ``None``), fills ``out`` in place after that."""
        outputs = tuple(t.view(-1, *s[1:]) for t, (s, _) in zip(self.outputs, self.last_inputs))
        with torch.no_grad():
            if out is None:
                unsharded, inner = getattr(local, POST)(outputs, self.metadata, param_dtype)
                self.inner = list(inner)
            else:
                getattr(local, POST)(outputs, self.metadata, param_dtype, out=out)
                unsharded = None
        self.metadata = None
        return unsharded

    def free(self) -> None:
        """Release the outputs' and inner tensors' memory; the tensor objects stay."""
        free_storage(storage_slots((*self.outputs, *self.inner)))


def input_problems(
    fqn: str, layout: ShardLayout, sizes_by_rank: Sequence[Sequence[tuple]]
) -> list[str]:
    """What is wrong with the inputs every rank's pre hook returned for one parameter:
    ``sizes_by_rank[r]`` holds rank ``r``'s ``(shape, dtype)`` pairs. Pure; the same answer
    on every rank that sees the same sizes."""
    problems = []
    padded = tuple(layout.padded_shard_shape)
    full_rows = layout.full_shape[layout.shard_dim]
    for r, entries in enumerate(sizes_by_rank):
        rows = ShardLayout(layout.full_shape, 0, layout.world_size, r).local_rows
        if rows != layout.rows_per_rank and any(tuple(s) != padded for s, _ in entries):
            problems.append(
                f"{fqn}: rank {r} holds {rows} of {full_rows} rows (FSDP pads its shard to "
                f"{padded}) and its {PRE} returned inputs of sizes "
                f"{[tuple(s) for s, _ in entries]}; an unevenly sharded parameter's pre "
                f"hook must return inputs of the padded shard size {padded} on every rank "
                "(pad them with zeros, as FSDP pads plain shards), or shard it evenly"
            )
    first = [(tuple(s), d) for s, d in sizes_by_rank[0]]
    for r, entries in enumerate(sizes_by_rank[1:], start=1):
        if [(tuple(s), d) for s, d in entries] != first and not problems:
            problems.append(
                f"{fqn}: {PRE} returned {first} on rank 0 but {list(entries)} on rank {r}; "
                "every rank must all-gather inputs of the same sizes and dtypes"
            )
    return problems


def agree_on_inputs(params: Sequence, group: dist.ProcessGroup | None) -> None:
    """Before a group's first all-gather: exchange the sizes of every extension input
    with the other ranks of ``group`` and raise the same error on all of them if one
    rank's pre hook broke a rule (a check on one rank alone would leave the others
    waiting in the all-gather). Records the agreed sizes. A no-op without extensions.

    Args:
        params: the group's :class:`~fsdp_ref.param.FSDPParam` s, their pre hooks called.
        group: the process group of the all-gather (``None``: nothing to exchange).
    """
    exts = [p for p in params if p.extension is not None]
    if not exts:
        return
    mine = [[(tuple(s), str(d)) for s, d in p.extension.last_inputs] for p in exts]
    everyone = [mine]
    if group is not None and group.size() > 1 and dist.get_backend(group) != "fake":
        everyone = [None] * group.size()
        dist.all_gather_object(everyone, mine, group=group)
    problems = [
        problem
        for k, p in enumerate(exts)
        for problem in input_problems(p.fqn, p.layout, [rank[k] for rank in everyone])
    ]
    if problems:
        raise ValueError("the FSDP all-gather extension was misused: " + "; ".join(problems))
    for p in exts:
        p.extension.sizes = [s for s, _ in p.extension.last_inputs]
