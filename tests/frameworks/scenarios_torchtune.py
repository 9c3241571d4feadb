"""torchtune's ``full_finetune_distributed`` recipe, step by step on a tiny Llama 3: meta
init, ``training.shard_model``, ``load_from_full_model_state_dict`` from a checkpoint file,
token-normalized accumulation with clipping (or ``optimizer_in_bwd``), and the saved
checkpoint. The same script under torch's ``fully_shard`` and under fsdp_ref.

The recipe itself (``recipes/full_finetune_distributed.py``) needs a tokenizer and a Hub
dataset, so its setup and training loop are followed here line for line with random token
batches instead; every FSDP call goes through torchtune's own functions.
"""

from __future__ import annotations

import os
from functools import partial
from typing import Any

import torch
import torch.distributed as dist

from tests.frameworks.common import fsdp_modules, full, params, scenario, to_plain
from tests.frameworks.shims import torchao_names_for_torchtune

ARCH = dict(vocab_size=96, num_layers=2, num_heads=4, num_kv_heads=2, embed_dim=32,
            max_seq_len=32, intermediate_dim=64)
SEQ, BATCH, STEPS = 12, 2, 3


def _build(meta: bool):
    from torchtune import training
    from torchtune.models.llama3._component_builders import llama3

    with training.set_default_dtype(torch.bfloat16), torch.device("meta" if meta else "cpu"):
        return llama3(**ARCH)


def _sharded_model(rank: int, world_size: int, folder: str):
    """The recipe's ``_setup_model``: the starting checkpoint (written by rank 0 from a seeded
    model) loaded by torchtune's checkpointer into a meta-initialized, sharded model."""
    from torch.distributed.device_mesh import init_device_mesh
    from torchtune import training
    from torchtune.training.checkpointing import FullModelTorchTuneCheckpointer

    ckpt_dir = os.path.join(folder, "start")
    if rank == 0:
        os.makedirs(ckpt_dir, exist_ok=True)
        torch.manual_seed(0)
        torch.save(_build(meta=False).state_dict(), os.path.join(ckpt_dir, "model.pt"))
    dist.barrier()
    checkpointer = FullModelTorchTuneCheckpointer(
        checkpoint_dir=ckpt_dir, checkpoint_files=["model.pt"], model_type="LLAMA3",
        output_dir=os.path.join(folder, "out"))
    state = checkpointer.load_checkpoint()[training.MODEL_KEY]
    model = _build(meta=True)
    mesh = init_device_mesh("cpu", (world_size, 1), mesh_dim_names=("dp", "tp"))
    training.shard_model(model=model,
                         shard_conditions=[partial(training.get_shard_conditions,
                                                   names_to_match=None)],
                         cpu_offload=False, reshard_after_forward=True, dp_mesh=mesh["dp"])
    with training.set_default_dtype(torch.bfloat16), torch.device("cpu"):
        for m in model.modules():
            if hasattr(m, "rope_init"):
                m.rope_init()
    training.load_from_full_model_state_dict(model, state, torch.device("cpu"), strict=True,
                                             cpu_offload=False)
    training.validate_no_params_on_meta_device(model)
    return model, checkpointer


@scenario
def finetune(rank: int, world_size: int, impl: str, out_dir: str, optimizer_in_bwd: bool = False
             ) -> dict[str, Any]:
    """``STEPS`` optimizer steps as the recipe takes them: 2 microbatches each, loss times
    tokens, ``scale_grads`` by world size over all tokens, clipping to 1, AdamW; or, with
    ``optimizer_in_bwd``, one microbatch per step and one AdamW per parameter stepped from
    its post-accumulate-grad hook. Returns losses, parameters after every step, the
    optimizer state and the model file torchtune's checkpointer saved."""
    torchao_names_for_torchtune()
    from torchtune import training
    from torchtune.modules.loss import CEWithChunkedOutputLoss

    folder = os.path.join(out_dir, impl)
    model, checkpointer = _sharded_model(rank, world_size, folder)
    loss_fn = CEWithChunkedOutputLoss()
    model.set_num_output_chunks(loss_fn.num_output_chunks)
    accumulation = 1 if optimizer_in_bwd else 2
    if optimizer_in_bwd:
        optim_dict = {p: torch.optim.AdamW([p], lr=1e-2) for p in model.parameters()}
        training.register_optim_in_bwd_hooks(model=model, optim_dict=optim_dict)
        wrapper = training.create_optim_in_bwd_wrapper(model=model, optim_dict=optim_dict)
    else:
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    ignore = torch.full((BATCH, 1), loss_fn.ignore_index)
    g = torch.Generator().manual_seed(100 + rank)
    losses, history, norms = [], [], []
    running, num_tokens = 0, 0
    for idx in range(STEPS * accumulation):
        tokens = torch.randint(0, ARCH["vocab_size"], (BATCH, SEQ), generator=g)
        labels = torch.hstack((tokens[..., 1:], ignore))
        current_tokens = (labels != loss_fn.ignore_index).sum()
        num_tokens += current_tokens
        logits = model(tokens)
        current = loss_fn(logits, labels) * current_tokens
        del logits
        running += current
        if optimizer_in_bwd:  # the recipe normalizes before backward here
            dist.all_reduce(num_tokens)
            dist.all_reduce(running)
            current = current * (world_size / num_tokens)
        current.backward()
        if (idx + 1) % accumulation == 0:
            if not optimizer_in_bwd:
                dist.all_reduce(num_tokens)
                dist.all_reduce(running)
                training.scale_grads(model, world_size / num_tokens)
                norms.append(full(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)))
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
            losses.append((running / num_tokens).detach().clone())
            history.append(params(model))
            running, num_tokens = 0, 0
    optim_state = to_plain(wrapper.state_dict() if optimizer_in_bwd else
                           training.get_full_optimizer_state_dict(model, optimizer, rank == 0))
    model_state = training.gather_cpu_state_dict(model, rank == 0)
    saved = {}
    if rank == 0:
        checkpointer.save_checkpoint({training.MODEL_KEY: model_state}, epoch=0)
        epoch = os.path.join(folder, "out", "epoch_0")
        saved = {f: torch.load(os.path.join(epoch, f), weights_only=True)
                 for f in sorted(os.listdir(epoch)) if f.endswith((".pt", ".bin"))}
    return {"losses": losses, "params": history, "grad_norms": norms, "saved": saved,
            "optim_state": optim_state if rank == 0 or optimizer_in_bwd else {},
            "fsdp_modules": fsdp_modules(model, impl)}

