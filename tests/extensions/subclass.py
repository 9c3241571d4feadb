"""A tensor subclass written for the tests: a weight that FSDP all-gathers quantized.

:class:`QuantWeight` wraps a full-precision ``_data`` (what the optimizer steps on) and
implements FSDP2's all-gather extension in two modes, the two shapes real clients take:

* ``"int8"``: two inputs per rank, int8 values and one fp32 scale per row (NF4's shape of
  contract: several inputs of different dtypes, so the group's buffer is bytes);
* ``"float8"``: one ``float8_e4m3fn`` input, cast with a per-tensor scale fixed when the
  weight is made (the same on every rank, as torchao's precomputed float8 scales are) and
  handed to the post hook in the metadata (torchao's float8 weights: a float8 buffer,
  moved as bytes over gloo).

Like ``NF4Tensor`` it supports only the ops FSDP may use to shard it (``split`` on dim 0,
``new_zeros``, a ``slice``/``narrow`` from 0, ``copy_``, ``view``...) and refuses a slice at
any other offset; like torchao's float8 wrapper, every other op returns a plain tensor.

The post hook returns a plain tensor (the dequantized weight): the first call allocates it
and names it among the tensors FSDP frees at reshard; later calls must get ``out=`` (the
same tensor) and the very same all-gather outputs (same storages, as NF4 asserts), and
fill it in place. Each hook call is counted in :data:`CALLS` so tests can see who called
what, on which tensor.

Variants for the error cases: :class:`ShortForm` (the one-argument pre hook),
:class:`NoPad` (does not pad uneven shards), :class:`OnlyPre`, :class:`OnlyPost`,
:class:`BadSignature`, :class:`NoOut`.
"""

from __future__ import annotations

import math
from collections import Counter

import torch
import torch.utils._pytree as pytree

aten = torch.ops.aten

CALLS: Counter = Counter()
"""``CALLS["pre"]`` (``"pre_short"``), ``CALLS["post_first"]``, ``CALLS["post_out"]``: hook
calls so far."""

PRE_PTRS: list[int] = []
"""For each pre hook call, the address of the data it read: tests compare it with the
registered shard's (under CPU offload FSDP must hand the hook the device copy)."""

_PRESERVE = {
    aten.split.Tensor, aten.new_zeros.default, aten.slice.Tensor, aten.copy_.default,
    aten.view.default, aten.as_strided.default, aten._to_copy.default, aten.detach.default,
    aten.empty_like.default, aten.clone.default, aten._pin_memory.default, aten.alias.default,
}


class QuantWeight(torch.Tensor):
    """A full-precision weight gathered quantized (see the module docstring)."""

    @staticmethod
    def __new__(cls, data: torch.Tensor, mode: str = "int8", scale: float = 1.0):
        return torch.Tensor._make_wrapper_subclass(
            cls, data.shape, strides=data.stride(), storage_offset=data.storage_offset(),
            dtype=data.dtype, device=data.device, requires_grad=data.requires_grad,
        )

    def __init__(self, data: torch.Tensor, mode: str = "int8", scale: float = 1.0):
        self._data = data
        self._mode = mode
        self._scale = scale

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._mode}, {tuple(self.shape)})"

    def __tensor_flatten__(self):
        return ["_data"], (self._mode, self._scale)

    @classmethod
    def __tensor_unflatten__(cls, inner, meta, outer_size, outer_stride):
        return cls(inner["_data"], *meta)

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is aten.slice.Tensor:
            dim, start = (list(args[1:3]) + [0, 0])[:2]
            if start not in (0, None):
                raise NotImplementedError(f"{cls.__name__}: slice from {start} on dim {dim}")
        sub = next(a for a in pytree.tree_leaves(args) if isinstance(a, QuantWeight))
        plain_args, plain_kwargs = pytree.tree_map_only(
            QuantWeight, lambda t: t._data, (args, kwargs)
        )
        out = func(*plain_args, **plain_kwargs)
        if func not in _PRESERVE:
            return out
        return pytree.tree_map_only(
            torch.Tensor, lambda t: type(sub)(t, sub._mode, sub._scale), out
        )

    # ---- FSDP2's all-gather extension -------------------------------------------------

    def _payload(self, rows: int):
        """The quantized inputs for this shard, padded with zero rows to ``rows``."""
        data = self._data.detach()
        if data.shape[0] != rows:
            data = torch.cat([data, data.new_zeros(rows - data.shape[0], *data.shape[1:])])
        if self._mode == "int8":
            scale = data.abs().amax(dim=-1, keepdim=True).clamp(min=1e-8).float() / 127
            q = torch.round(data / scale).to(torch.int8)
            return (q, scale), None
        return ((data * self._scale).to(torch.float8_e4m3fn),), self._scale

    def fsdp_pre_all_gather(self, mesh, outer_size, outer_stride, module, mp_policy):
        CALLS["pre"] += 1
        PRE_PTRS.append(self._data.untyped_storage().data_ptr())
        world = mesh.get_group().size() if mesh is not None else 1
        inputs, meta = self._payload(math.ceil(outer_size[0] / world))
        return inputs, (meta, tuple(outer_size))

    def fsdp_post_all_gather(self, outputs, metadata, param_dtype, *, out=None):
        meta, outer_size = metadata
        if self._mode == "int8":
            q, scale = outputs
            full = (q.float() * scale).to(param_dtype)
        else:
            (f8,) = outputs
            full = (f8.float() / meta).to(param_dtype)
        gathered = tuple(_storage_id(t) for t in outputs)
        if out is not None:
            CALLS["post_out"] += 1
            assert _FIRST.get(gathered[0]) == (gathered, _storage_id(out)), (
                "expects out= to be the tensor the first call returned, and the all-gather "
                "outputs of the first call, re-gathered in place"
            )
            with torch.no_grad():
                out.copy_(full[: out.shape[0]])  # out: the unpadded rows
            return None
        CALLS["post_first"] += 1
        _FIRST[gathered[0]] = (gathered, _storage_id(full))
        return full, (full,)


_FIRST: dict[int, tuple] = {}


def _storage_id(t: torch.Tensor) -> int:
    """Identity of ``t``'s storage, which survives FSDP freeing and re-allocating it."""
    return t.untyped_storage()._cdata


class ShortForm(QuantWeight):
    """The one-argument pre hook (evenly sharded parameters only: it cannot pad)."""

    def fsdp_pre_all_gather(self, mesh):
        CALLS["pre_short"] += 1
        PRE_PTRS.append(self._data.untyped_storage().data_ptr())
        inputs, meta = self._payload(self._data.shape[0])
        return inputs, (meta, None)


class NoPad(QuantWeight):
    """Returns unpadded inputs: breaks the padded-size rule on the ranks that pad."""

    def fsdp_pre_all_gather(self, mesh, outer_size, outer_stride, module, mp_policy):
        inputs, meta = self._payload(self._data.shape[0])
        return inputs, (meta, tuple(outer_size))


class OnlyPre(torch.Tensor):
    """Defines the pre hook and not the post hook."""

    def fsdp_pre_all_gather(self, mesh):
        return (self,), None


class OnlyPost(torch.Tensor):
    """Defines the post hook and not the pre hook."""

    def fsdp_post_all_gather(self, outputs, metadata, param_dtype, *, out=None):
        return outputs[0], ()


class BadSignature(torch.Tensor):
    """A pre hook with three arguments: neither of the two forms FSDP calls."""

    def fsdp_pre_all_gather(self, mesh, outer_size):
        return (self,), None

    def fsdp_post_all_gather(self, outputs, metadata, param_dtype, *, out=None):
        return outputs[0], ()


class NoOut(torch.Tensor):
    """A post hook without ``out=``: cannot refill the parameter in place."""

    def fsdp_pre_all_gather(self, mesh):
        return (self,), None

    def fsdp_post_all_gather(self, outputs, metadata, param_dtype):
        return outputs[0], ()


def float8_scale(weight: torch.Tensor) -> float:
    """The per-tensor scale that maps ``weight``'s largest magnitude to float8_e4m3fn's."""
    return 448.0 / max(weight.detach().abs().max().item(), 1e-8)


def fake_quant(weight: torch.Tensor, mode: str, scale: float = 1.0) -> torch.Tensor:
    """What the post hook makes of ``weight`` (whole, on one process), with the gradient
    passed straight through: the reference the sharded runs are compared with."""
    w = weight.detach()
    if mode == "int8":
        s = w.abs().amax(dim=-1, keepdim=True).clamp(min=1e-8).float() / 127
        q = torch.round(w / s).to(torch.int8).float() * s
    else:
        q = (w * scale).to(torch.float8_e4m3fn).float() / scale
    return weight + (q - w)


def quant_weight(weight: torch.Tensor, mode: str = "int8", cls: type = QuantWeight):
    """``nn.Parameter`` of ``cls`` around a copy of ``weight``."""
    scale = float8_scale(weight)
    return torch.nn.Parameter(cls(weight.detach().clone(), mode, scale), requires_grad=True)
