"""One parameter in the all-gather: what it puts in and where the output goes.

* **In**: this rank's padded shard, copied to the compute device when it lives on the CPU
  (:meth:`ParamGather.all_gather_input`; refused with torch's error while it is still on
  the meta device), the tensors an all-gather extension's pre hook returns, or, in
  backward after an int ``reshard_after_forward``, the post-forward shard
  (:meth:`ParamGather.gather_inputs`).
* **Out**: the unsharded parameter's storage, allocated before the copy-out and freed at
  reshard while the tensor object stays (:meth:`ParamGather.alloc_unsharded`,
  :meth:`ParamGather.free_unsharded`), or the extension's all-gather outputs.

:class:`ParamGather` is a part of :class:`~fsdp_ref.param.FSDPParam` (one of its bases):
it reads the shard, dtypes, device and unsharded parameter that
:class:`~fsdp_ref.param.FSDPParam` sets, and calls only what this module imports.
"""

from __future__ import annotations

import torch

from .buffer_plan import GatherInput, allocate_storage, free_storage, storage_slots
from .extensions import Extension, shard_mesh
from .layout import ShardLayout
from .recorder import recorder
from .spmd import ParamPlacement, local_tensor

__all__ = ["ParamGather", "meta_error"]


class ParamGather:
    """The all-gather methods of :class:`~fsdp_ref.param.FSDPParam` (see the module)."""

    layout: ShardLayout
    placement: ParamPlacement
    extension: Extension | None

    def alloc_unsharded(self) -> list[torch.Tensor]:
        """Make sure the unsharded parameter has storage; return the tensors to copy the
        gathered inputs into (the parameter itself, or its local tensor for a DTensor; the
        extension's all-gather outputs)."""
        if self.extension is not None:
            outputs = self.extension.alloc_outputs(self.layout.world_size, self.device)
            for t in outputs:
                recorder.name_buffer(t, f"all-gather output of {self.fqn}")
            return outputs
        if self.unsharded_param is None:
            # A normal tensor even when the first unshard runs under inference_mode():
            # an inference tensor could never be refilled or trained outside it (torch
            # 2.13 makes one there, and a later training forward fails).
            with torch.inference_mode(False):
                full = torch.empty(
                    self.layout.full_shape, dtype=self.param_dtype, device=self.device
                )
                self.unsharded_param = self.placement.unsharded(full, self.requires_grad)
        local, slots = self._unsharded_local()
        allocate_storage(slots)
        if recorder.listener is not None:  # (the name is only formatted for a listener)
            recorder.name_buffer(local[0], f"unsharded {self.fqn}")
        return local

    def _unsharded_local(self) -> tuple[list[torch.Tensor], list]:
        """The unsharded parameter's local tensor (itself, unless tensor parallel), in a
        list, and its :func:`~fsdp_ref.buffer_plan.storage_slots`, looked up once per
        unsharded parameter: every unshard and reshard uses them.

        A fast path, equivalent to ``local = [local_tensor(self.unsharded_param)]`` and
        ``storage_slots(local)`` at each call; it saves about 0.6 µs per call, four calls
        per parameter and step (``benchmarks/fast_paths.py``)."""
        cached = self._local
        if cached is None or cached[0] is not self.unsharded_param:
            local = [local_tensor(self.unsharded_param)]
            cached = self._local = (self.unsharded_param, local, storage_slots(local))
        return cached[1], cached[2]

    def free_unsharded(self) -> None:
        """Release the unsharded parameter's memory; the tensor object stays."""
        if self.extension is not None:
            self.extension.free()
        elif self.unsharded_param is not None:
            free_storage(self._unsharded_local()[1])

    def gather_inputs(self) -> list[GatherInput]:
        """What this rank puts into the group's all-gather: the post-forward shard after
        an int ``reshard_after_forward``, the extension's pre hook inputs, or the shard."""
        if self.post_forward_shard is not None:
            return [GatherInput(self.post_forward_shard, self.post_forward_layout,
                                self.param_dtype)]
        if self.extension is None:
            return [GatherInput(self.all_gather_input(), self.layout, self.param_dtype)]
        self._check_materialized()
        local = local_tensor(self.sharded_param)
        if self.offload_to_cpu:  # the pre hook runs on the device copy
            local = local.to(self.device, non_blocking=True, copy=True)
            recorder.name_buffer(local, f"device copy of sharded {self.fqn}")
        inputs = self.extension.pre_all_gather(
            local, shard_mesh(self.mesh_info), self.layout.full_shape, self.refs[0].module,
            self.mp_policy, self.fqn,
        )
        world, rank = self.layout.world_size, self.layout.rank
        return [GatherInput(t, ShardLayout(torch.Size([world * t.numel()]), 0, world, rank),
                            t.dtype) for t in inputs]

    def all_gather_input(self) -> torch.Tensor:
        """This rank's padded shard, on the compute device, for the all-gather copy-in."""
        self._check_materialized()
        if self.offload_to_cpu or self.padded_shard.device != self.device:
            # Host to device on the copy-in stream. Offloaded shards are copied on a CPU
            # mesh too (where it is a host copy) so that CPU runs take the GPU's path.
            copy = self.padded_shard.to(self.device, non_blocking=True, copy=True)
            recorder.name_buffer(copy, f"device copy of sharded {self.fqn}")
            return copy
        return self.padded_shard

    @property
    def on_meta(self) -> bool:
        """Whether the shard is still on the meta device (no values yet)."""
        return self.padded_shard.device.type == "meta"

    def _check_materialized(self) -> None:
        if self.on_meta:  # (an unshard() before the root's lazy init checks every group)
            raise meta_error([self.fqn])



def meta_error(fqns: list[str]) -> RuntimeError:
    """Torch's error for parameters (named ``fqns``) still on the meta device when FSDP
    needs their values, with what to do."""
    return RuntimeError(
        "FSDP parameters should be materialized from meta device before training, "
        f"but the following were still on meta device: {fqns}\n"
        "For example, call module.to_empty(device) to materialize to device and call "
        "module.reset_parameters() on each module to initialize values. (Or load a "
        "checkpoint into the sharded model before its first forward.)"
    )
