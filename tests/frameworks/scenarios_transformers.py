"""transformers' ``Trainer(fsdp="full_shard", fsdp_config={"fsdp_version": 2})`` on a tiny
Llama with tied embeddings, gradient accumulation and clipping, optionally with a PEFT
LoRA adapter: the same script under torch's ``fully_shard`` and under fsdp_ref."""

from __future__ import annotations

import os
from typing import Any

import torch

from tests.frameworks.common import fsdp_modules, params, scenario
from tests.frameworks.shims import accelerate_fsdp_on_cpu

CONFIG = dict(vocab_size=96, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
              num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=32,
              tie_word_embeddings=True)
SEQ, BATCH, ACCUMULATION, STEPS, MAX_NORM = 12, 2, 2, 3, 0.1


class TokenDataset(torch.utils.data.Dataset):
    """Random token rows (the same on every rank; the Trainer's sampler splits them)."""

    def __init__(self, n: int):
        self.ids = torch.randint(0, CONFIG["vocab_size"], (n, SEQ),
                                 generator=torch.Generator().manual_seed(7))

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


def _model(peft: bool):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(**CONFIG))
    if peft:
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(model, LoraConfig(r=4, lora_alpha=8, init_lora_weights="gaussian",
                                                 target_modules=["q_proj", "v_proj"]))
    return model


@scenario
def train(rank: int, world_size: int, impl: str, out_dir: str, peft: bool = False
          ) -> dict[str, Any]:
    """``STEPS`` optimizer steps of ``ACCUMULATION`` microbatches, gradients clipped to
    ``MAX_NORM``; returns each microbatch's loss, every parameter after every step, the
    gradient norms the Trainer logged, and the tensors of the model ``save_model`` wrote."""
    from safetensors.torch import load_file
    from transformers import Trainer, TrainerCallback, TrainingArguments

    class Record(TrainerCallback):
        def __init__(self):
            self.params: list[dict[str, torch.Tensor]] = []

        def on_step_end(self, args, state, control, model=None, **kwargs):
            self.params.append(params(model))

    class RecordingTrainer(Trainer):
        losses: list[torch.Tensor] = []

        def training_step(self, *args, **kwargs):
            loss = super().training_step(*args, **kwargs)
            self.losses.append(loss.detach().clone())
            return loss

    out_dir = os.path.join(out_dir, impl)
    record = Record()
    with accelerate_fsdp_on_cpu():  # before TrainingArguments: it sets up accelerate's state
        args = TrainingArguments(
            output_dir=out_dir, use_cpu=True, fsdp="full_shard", fsdp_config={"fsdp_version": 2},
            per_device_train_batch_size=BATCH, gradient_accumulation_steps=ACCUMULATION,
            max_steps=STEPS, max_grad_norm=MAX_NORM, learning_rate=1e-2,
            lr_scheduler_type="constant",
            logging_steps=1, save_strategy="no", report_to="none", disable_tqdm=True, seed=0,
            dataloader_num_workers=0)
        trainer = RecordingTrainer(model=_model(peft), args=args, callbacks=[record],
                                   train_dataset=TokenDataset(world_size * BATCH * ACCUMULATION
                                                              * STEPS))
        trainer.losses = []
        trainer.train()
        model = trainer.model_wrapped
        n_fsdp = fsdp_modules(model, impl)
        tied = (model.get_output_embeddings().weight is model.get_input_embeddings().weight)
        trainer.save_model(out_dir)
    files = sorted(f for f in os.listdir(out_dir) if f.endswith(".safetensors"))
    saved = {f: load_file(os.path.join(out_dir, f)) for f in files} if rank == 0 else {}
    grad_norms = [torch.tensor(e["grad_norm"]) for e in trainer.state.log_history
                  if "grad_norm" in e]
    return {"losses": trainer.losses, "params": record.params, "saved": saved,
            "grad_norms": grad_norms, "fsdp_modules": n_fsdp, "tied": tied,
            "trainable": sorted(n for n, p in model.named_parameters() if p.requires_grad)}
