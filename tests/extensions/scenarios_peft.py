"""PEFT LoRA on a small transformers Llama built from a config: the frozen base and the
trainable adapters in the same groups (each decoder layer, then the root), under torch's
``fully_shard`` and fsdp_ref side by side in the same rank process."""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.distributed as dist
from peft import LoraConfig, get_peft_model
from transformers import LlamaConfig, LlamaForCausalLM

from tests.extensions.scenarios_mixed import count_bytes
from tests.fsdp.common import Report, get_impl, make_mesh, rank_slice
from tests.tolerance import EXACT

CONFIG = dict(vocab_size=128, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
              num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=32)


def _model():
    torch.manual_seed(0)
    base = LlamaForCausalLM(LlamaConfig(**CONFIG))
    lora = LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"],
                      init_lora_weights="gaussian")  # (B = 0 upstream: A would get no grad)
    return get_peft_model(base, lora)


def _shard(model, impl: str, mesh) -> None:
    api = get_impl(impl)
    for layer in model.base_model.model.model.layers:
        api.fully_shard(layer, mesh=mesh)
    api.fully_shard(model, mesh=mesh)


def lora_llama_vs_torch(rank: int, world_size: int, steps: int = 3) -> dict[str, Any]:
    """Same losses and adapter shards under both; frozen weights unchanged; the
    reduce-scatters carry the trainable adapters and nothing else."""
    report = Report(rank, "peft lora llama")
    mesh = make_mesh(world_size)
    runs = {}
    for impl in ("torch", "fsdp_ref"):
        model = _model()
        frozen = {n: p.detach().clone() for n, p in model.named_parameters() if not p.requires_grad}
        trainable = {n: p.shape for n, p in model.named_parameters() if p.requires_grad}
        _shard(model, impl, mesh)
        opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
        losses, rs_bytes = [], []
        g = torch.Generator().manual_seed(0)
        ids = torch.randint(0, CONFIG["vocab_size"], (2 * world_size, 16), generator=g)
        for _ in range(steps):
            with count_bytes() as log:
                loss = model(input_ids=rank_slice(ids, rank, world_size),
                             labels=rank_slice(ids, rank, world_size)).loss
                loss.backward()
            rs_bytes.append(sum(b for kind, _, b in log if kind == "RS"))
            grads = {n for n, p in model.named_parameters() if p.grad is not None}
            report.check(grads == set(trainable), f"{impl}: grads on {sorted(grads ^ set(trainable))[:4]}")
            opt.step()
            opt.zero_grad()
            mean = loss.detach().clone()
            dist.all_reduce(mean)
            losses.append(mean.item() / world_size)
        for n, p in model.named_parameters():
            if n in frozen:
                report.check(torch.equal(p.full_tensor(), frozen[n]), f"{impl}: frozen {n} changed")
        shards = {n: p.to_local().detach().clone() for n, p in model.named_parameters()
                  if p.requires_grad}
        runs[impl] = (losses, shards, rs_bytes)
    (t_losses, t_shards, t_rs), (losses, shards, rs) = runs["torch"], runs["fsdp_ref"]
    report.close("losses", losses, t_losses, EXACT)
    for n, t in t_shards.items():
        report.close(f"adapter shard {n}", shards[n], t, EXACT)
    # Bytes of one rank's padded shard of every trainable parameter, from the shapes.
    expected = sum(math.ceil(s[0] / world_size) * math.prod(s[1:]) * 4 for s in trainable.values())
    return report.result(losses=losses, rs_bytes=rs, torch_rs_bytes=t_rs,
                         expected_rs_bytes=expected, n_trainable=len(trainable),
                         n_frozen=len(frozen))
