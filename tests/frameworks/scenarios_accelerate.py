"""accelerate's ``Accelerator`` with ``FullyShardedDataParallelPlugin(fsdp_version=2)`` on a
tiny block model: the same script under torch's ``fully_shard`` and under fsdp_ref."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn as nn

from tests.frameworks.common import fsdp_modules, params, scenario, to_plain
from tests.frameworks.models import TinyLM, batches
from tests.frameworks.shims import accelerate_fsdp_on_cpu


@scenario
def train(rank: int, world_size: int, impl: str, bf16: bool = False, accumulation: int = 1,
          steps: int = 3) -> dict[str, Any]:
    """``steps`` optimizer steps of ``accumulation`` microbatches each through
    ``accelerator.accumulate``; returns the losses, every parameter after every step, and
    ``accelerator.get_state_dict`` at the end, and after which backward a gradient had been
    reduced (accelerate turns gradient sync off for all but an accumulation's last)."""
    from accelerate import Accelerator
    from accelerate.utils import FullyShardedDataParallelPlugin
    from torch.distributed.fsdp import MixedPrecisionPolicy

    policy = (MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
              if bf16 else None)
    plugin = FullyShardedDataParallelPlugin(
        fsdp_version=2, auto_wrap_policy="transformer_based_wrap",
        transformer_cls_names_to_wrap=["Block"], reshard_after_forward=True,
        mixed_precision_policy=policy, state_dict_type="FULL_STATE_DICT")
    with accelerate_fsdp_on_cpu():
        accelerator = Accelerator(cpu=True, fsdp_plugin=plugin,
                                  gradient_accumulation_steps=accumulation)
        torch.manual_seed(0)
        model = TinyLM()
        optim = torch.optim.AdamW(model.parameters(), lr=1e-2)
        model, optim = accelerator.prepare(model, optim)
        n_fsdp = fsdp_modules(model, impl)
        losses, history, reduced = [], [], []
        for ids in batches(rank, steps * accumulation):
            with accelerator.accumulate(model):
                logits = model(ids[:, :-1])
                loss = nn.functional.cross_entropy(logits.float().flatten(0, 1),
                                                   ids[:, 1:].flatten())
                accelerator.backward(loss)
                reduced.append(model.head.weight.grad is not None)
                optim.step()
                optim.zero_grad()
            losses.append(loss.detach().clone())
            if accelerator.sync_gradients:
                history.append(params(model))
        state = to_plain(accelerator.get_state_dict(model))
    return {"losses": losses, "params": history, "state_dict": state, "fsdp_modules": n_fsdp,
            "reduced": reduced}
