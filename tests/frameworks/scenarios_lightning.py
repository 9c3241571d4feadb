"""PyTorch Lightning's ``ModelParallelStrategy`` (FSDP2 applied by the user in
``configure_model``) on the tiny block model, including its full-state-dict checkpoint:
the same script under torch's ``fully_shard`` and under fsdp_ref."""

from __future__ import annotations

import os
from typing import Any

import torch
import torch.nn as nn

from tests.frameworks.common import fsdp_modules, params, scenario, to_plain
from tests.frameworks.models import TinyLM, batches

STEPS = 3


@scenario
def train(rank: int, world_size: int, impl: str, out_dir: str) -> dict[str, Any]:
    """``STEPS`` steps of ``Trainer.fit``; returns the losses, every parameter after every
    step, and the model and optimizer state of the checkpoint ``save_checkpoint`` wrote
    (``save_distributed_checkpoint=False``: one full file from rank 0)."""
    import pytorch_lightning as pl
    from pytorch_lightning.strategies import ModelParallelStrategy
    from torch.distributed.fsdp import fully_shard

    class Lit(pl.LightningModule):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.model = TinyLM()
            self.losses: list[torch.Tensor] = []
            self.history: list[dict[str, torch.Tensor]] = []

        def configure_model(self):
            mesh = self.device_mesh["data_parallel"]
            for block in self.model.blocks:
                fully_shard(block, mesh=mesh)
            fully_shard(self.model, mesh=mesh)

        def training_step(self, batch, batch_idx):
            (ids,) = batch
            logits = self.model(ids[:, :-1])
            loss = nn.functional.cross_entropy(logits.flatten(0, 1), ids[:, 1:].flatten())
            self.losses.append(loss.detach().clone())
            return loss

        def on_train_batch_end(self, outputs, batch, batch_idx):
            self.history.append(params(self.model))

        def configure_optimizers(self):
            return torch.optim.AdamW(self.parameters(), lr=1e-2)

    # every rank's microbatches, in rank order: the distributed sampler deals them out
    data = torch.cat([ids for r in range(world_size) for ids in batches(r, STEPS)])
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(data), batch_size=2)
    out_dir = os.path.join(out_dir, impl)
    strategy = ModelParallelStrategy(data_parallel_size=world_size, tensor_parallel_size=1,
                                     save_distributed_checkpoint=False)
    trainer = pl.Trainer(accelerator="cpu", devices=world_size, strategy=strategy,
                         max_steps=STEPS, logger=False, enable_checkpointing=False,
                         enable_progress_bar=False, enable_model_summary=False,
                         default_root_dir=out_dir, use_distributed_sampler=True)
    lit = Lit()
    trainer.fit(lit, loader)
    path = os.path.join(out_dir, "last.ckpt")
    trainer.save_checkpoint(path)
    trainer.strategy.barrier()
    saved = {}
    if rank == 0:
        ckpt = torch.load(path, weights_only=False)
        saved = {"state_dict": ckpt["state_dict"],
                 "optimizer_states": to_plain(ckpt["optimizer_states"])}
    return {"losses": lit.losses, "params": lit.history, "saved": saved,
            "fsdp_modules": fsdp_modules(lit.model, impl)}
