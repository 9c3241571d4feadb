"""torchtitan's ``Trainer`` with its llama3 debug-model configuration (``llama3_debugmodel``:
FSDP2 with bf16 parameters and fp32 reduction, selective activation checkpointing, the
chunked loss, AdamW with warmup, clipping to 1), shrunk to a tiny model: the same script
under torch's ``fully_shard`` and under fsdp_ref.

torchtitan 0.3 targets GPUs; :func:`cpu_shims` (applied in both runs alike, before
torchtitan is imported) makes the CPU run possible without touching any arithmetic of
FSDP. The data is random tokens (:class:`RandomTokens`) instead of the ``c4_test`` files
and tokenizer that torchtitan's repository, not its wheel, ships.
"""

from __future__ import annotations

import gc
import os
import sys
import types
from dataclasses import dataclass
from typing import Any

import torch

from tests.frameworks.common import fsdp_modules, params, scenario

VOCAB, DIM, LAYERS, HEADS, SEQ, BATCH, STEPS = 128, 32, 2, 4, 16, 2, 3


class _Absent:
    """Any attribute, call or index of it is itself; as a bare decorator it returns the
    function: enough for a module of triton kernels to import (never to run)."""

    def __getattr__(self, name):
        return self

    def __getitem__(self, key):
        return self

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]
        return self


def _inert_names(name: str):
    """Module ``__getattr__`` of the kernel stand-in: every public name is :class:`_Absent`."""
    if name.startswith("__"):
        raise AttributeError(name)
    return _Absent()


class _CpuDevice(types.SimpleNamespace):
    """The device module torchtitan uses on CPU: one device, no memory statistics."""

    def __init__(self):
        import psutil

        super().__init__(
            set_device=lambda device: None, current_device=lambda: 0,
            device_count=lambda: 1, synchronize=lambda *a: None,
            get_device_name=lambda device=None: "cpu",
            get_device_properties=lambda device=None: types.SimpleNamespace(
                total_memory=psutil.virtual_memory().total),
            reset_peak_memory_stats=lambda *a: None, empty_cache=lambda: None,
            memory_stats=lambda *a: {})


def cpu_shims() -> None:
    """The smallest changes that let torchtitan 0.3's ``Trainer`` run on gloo CPU ranks
    (idempotent; before the first torchtitan import):

    1. its MoE expert-parallel kernel module imports ``triton`` (not installed with the CPU
       wheel of torch): that module is replaced by a stand-in whose names are inert, since
       the dense llama3 never calls them (``triton`` itself stays absent for torch);
    2. it picks its device type once, at import, as ``_get_available_device_type() or
       "cuda"``: during that import the answer is ``"cpu"``, with a device module whose
       memory statistics are zeros (:class:`_CpuDevice`);
    3. after the first step it calls ``torch.distributed.set_timeout``, absent in torch 2.13
       (and a barrier with ``device_ids``, which gloo refuses): ``set_pg_timeouts`` changes
       only timeouts and is a no-op here.

    Two more changes are made to the configuration, not to torchtitan: the attention
    kernel (:func:`_tiny_spec`) and the reduce op on gloo (:func:`_summing`).
    """
    if "torchtitan.trainer" in sys.modules:
        return
    import torch._utils

    stub = types.ModuleType("torchtitan.distributed.minimal_async_ep.kernels")
    stub.__getattr__ = _inert_names
    sys.modules[stub.__name__] = stub
    detect, module_of = torch._utils._get_available_device_type, torch._utils._get_device_module
    cpu = _CpuDevice()
    torch._utils._get_available_device_type = lambda: "cpu"
    torch._utils._get_device_module = lambda device_type=None: cpu
    try:
        import torchtitan.tools.utils  # noqa: F401  (reads the device type now)
    finally:
        torch._utils._get_available_device_type, torch._utils._get_device_module = (
            detect, module_of)
    import torchtitan.distributed.utils as dist_utils

    dist_utils.set_pg_timeouts = lambda timeout, parallel_dims: None


def _tiny_spec():
    """``model_registry("debugmodel")`` (torchtitan's llama3 parallelize function) with the
    debug model's architecture built smaller by the same builders.

    One change of kernel: the debug model's FlexAttention (block-causal over documents)
    becomes torchtitan's ``ScaledDotProductAttention`` (causal), because torch 2.13's
    FlexAttention has no backward on CPU outside ``torch.compile``, and compiling it
    needs triton. With one document per row (:class:`RandomTokens`) the two masks are the
    same; both runs use it alike.
    """
    from torchtitan.models import llama3
    from torchtitan.models.common import ComplexRoPE, Embedding, Linear, RMSNorm
    from torchtitan.models.common.attention import FlexAttention, ScaledDotProductAttention

    spec = llama3.model_registry("debugmodel")
    spec.model = llama3.Llama3Model.Config(
        dim=DIM, vocab_size=VOCAB,
        tok_embeddings=Embedding.Config(num_embeddings=VOCAB, embedding_dim=DIM,
                                        param_init=llama3._EMBEDDING_INIT),
        norm=RMSNorm.Config(normalized_shape=DIM, param_init=llama3._NORM_INIT),
        lm_head=Linear.Config(in_features=DIM, out_features=VOCAB,
                              param_init=llama3._output_linear_init(DIM)),
        layers=llama3._build_llama3_layers(
            fuse_qkv=True, n_layers=LAYERS, dim=DIM, n_heads=HEADS, hidden_dim=2 * DIM,
            rope=ComplexRoPE.Config(dim=DIM // HEADS, max_seq_len=4 * SEQ, theta=500000,
                                    scaling="llama"),
            attn_backend="flex"))
    flex = list(spec.model.traverse(FlexAttention.Config))
    for _, _, parent, attr in flex:
        setattr(parent, attr, ScaledDotProductAttention.Config())
    assert len(flex) == LAYERS
    spec.parallelize_fn = _summing(spec.parallelize_fn)
    return spec


def _summing(parallelize):
    """``parallelize`` followed by ``set_force_sum_reduction_for_comms(True)`` on every FSDP
    module. torchtitan sets the gradient divide factor to 1 (it divides by the global token
    count itself), for which torch 2.13 reduce-scatters with ``ReduceOp.PREMUL_SUM(1.0)``:
    gloo has no such op. Forced sum reduction asks for ``SUM`` and then divides by that
    factor, 1, which torch skips: the same numbers, through an FSDP2 API both honour."""

    def parallelize_then_sum(model, **kwargs):
        from torch.distributed.fsdp import FSDPModule

        model = parallelize(model, **kwargs)
        for module in model.modules():
            if isinstance(module, FSDPModule):
                module.set_force_sum_reduction_for_comms(True)
        return model

    return parallelize_then_sum


def _components():
    """A tokenizer that is only a vocabulary size, and a loader of random token rows
    (one document per row: positions 0..SEQ-1), seeded by the data-parallel rank."""
    from torchtitan.components.dataloader import BaseDataLoader
    from torchtitan.components.tokenizer import BaseTokenizer

    class VocabOnly(BaseTokenizer):
        @dataclass(kw_only=True, slots=True)
        class Config(BaseTokenizer.Config):
            pass

        def __init__(self, config, **kwargs):
            super().__init__()

        def encode(self, *args, **kwargs):
            raise NotImplementedError

        def decode(self, *args, **kwargs):
            raise NotImplementedError

        def get_vocab_size(self) -> int:
            return VOCAB

    class RandomTokens(BaseDataLoader):
        @dataclass(kw_only=True, slots=True)
        class Config(BaseDataLoader.Config):
            pass

        def __init__(self, config, *, dp_rank, seq_len, local_batch_size, **kwargs):
            self.generator = torch.Generator().manual_seed(100 + dp_rank)
            self.shape = (local_batch_size, seq_len + 1)

        def __iter__(self):
            while True:
                ids = torch.randint(0, VOCAB, self.shape, generator=self.generator)
                positions = torch.arange(self.shape[1] - 1).expand(self.shape[0], -1)
                yield {"input": ids[:, :-1], "positions": positions}, ids[:, 1:]

        def state_dict(self):
            return {}

        def load_state_dict(self, state_dict):
            pass

    return VocabOnly.Config(), RandomTokens.Config()


def _config(out_dir: str, impl: str, spmd_backend: str = "partial_dtensor"):
    """``llama3_debugmodel()`` with the tiny model, the random data, ``STEPS`` steps of
    ``BATCH`` rows of ``SEQ`` tokens, seed 0, and ``spmd_backend``."""
    from torchtitan.models.llama3.config_registry import llama3_debugmodel

    config = llama3_debugmodel()
    config.model_spec = _tiny_spec()
    config.loss.loss_fn.global_vocab_size = VOCAB
    config.tokenizer, config.dataloader = _components()
    config.training.local_batch_size, config.training.seq_len = BATCH, SEQ
    config.training.steps = STEPS
    config.debug.seed = 0
    # torchtitan 0.3 defaults to spmd_backend="spmd_types", which hands fully_shard
    # plain tensors with SPMD annotations plus dp_mesh_dims: torch 2.13's fully_shard
    # refuses that ("all parameters must be DTensors on the full SPMD mesh"). The classic
    # FSDP2 path, fully_shard on the "fsdp" mesh (test_default_spmd_backend_refused_alike
    # checks that fsdp_ref refuses the default as torch does):
    config.parallelism.spmd_backend = spmd_backend
    config.dump_folder = os.path.join(out_dir, impl)
    return config


@scenario
def refusal(rank: int, world_size: int, impl: str, out_dir: str) -> list[str]:
    """The exception type and message of building the ``Trainer`` with torchtitan's default
    ``spmd_backend="spmd_types"`` (torch 2.13's ``fully_shard`` refuses its parameters)."""
    cpu_shims()
    from torchtitan.trainer import Trainer

    try:
        Trainer(_config(out_dir, impl, spmd_backend="spmd_types"))
    except Exception as e:  # noqa: BLE001 (the refusal is the result)
        return [type(e).__name__, str(e)]
    finally:
        gc.enable()  # torchtitan turns automatic collection off for the process
    return ["no error", ""]


@scenario
def train(rank: int, world_size: int, impl: str, out_dir: str) -> dict[str, Any]:
    """``STEPS`` steps of ``Trainer.train()``; returns the loss and gradient norm torchtitan
    logged at every step and every parameter after every step."""
    cpu_shims()
    from torchtitan.trainer import Trainer

    class Recording(Trainer):
        def train_step(self, data_iterator):
            super().train_step(data_iterator)
            self.history.append(params(self.model_parts[0]))

    config = _config(out_dir, impl)
    trainer = Recording(config)
    trainer.history, logged = [], []
    log = trainer.metrics_processor.log
    trainer.metrics_processor.log = lambda step, loss, max_loss, grad_norm, **kw: (
        logged.append(torch.tensor([loss, max_loss, grad_norm], dtype=torch.float64)),
        log(step, loss, max_loss, grad_norm, **kw))
    try:
        trainer.train()
    finally:
        trainer.close()
        gc.enable()  # torchtitan turns automatic collection off for the process
    model = trainer.model_parts[0]
    return {"logged": logged, "params": trainer.history, "fsdp_modules": fsdp_modules(model, impl),
            "param_dtype": str(next(model.parameters()).dtype),
            "mp": str(config.training.mixed_precision_param)}
