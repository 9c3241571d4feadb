"""A stand-in for a training framework's FSDP2 helper, written against torch's names.

Like real frameworks, it imports torch's ``fully_shard`` and ``FSDPModule`` when it is
imported, shards block by block, and then walks the model to configure every FSDP module:
it scales the loss by the global number of elements itself, so it asks FSDP for summed
gradients (``set_gradient_divide_factor(1.0)``). Imported after ``fsdp_ref.install()``
it shards with fsdp_ref without a line changed; its ``isinstance`` check must then match
fsdp_ref's modules, or the setting is silently skipped and every gradient comes out
divided by the world size.
"""

from __future__ import annotations

import torch.nn as nn
from torch.distributed._composable.fsdp import FSDPModule as ComposableFSDPModule
from torch.distributed.fsdp import FSDPModule, fully_shard


def parallelize(model: nn.Module, mesh) -> int:
    """Shard ``model.blocks`` one by one, then ``model``; ask every FSDP module for summed
    gradients. Returns how many modules were configured."""
    for block in model.blocks:
        fully_shard(block, mesh=mesh)
    fully_shard(model, mesh=mesh)
    configured = 0
    for module in model.modules():
        if isinstance(module, FSDPModule) and isinstance(module, ComposableFSDPModule):
            module.set_gradient_divide_factor(1.0)
            configured += 1
    return configured
