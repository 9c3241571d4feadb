"""The smallest changes that let each framework's FSDP2 path run on gloo CPU ranks.

Each shim is applied identically in the torch run and in the fsdp_ref run, changes no
arithmetic, and is listed with what it changes on ``docs/guides/frameworks.md``:

* :func:`accelerate_fsdp_on_cpu`: accelerate 1.15 (and transformers' ``Trainer`` through it)
  keeps the FSDP plugin only on accelerator devices;
* :func:`torchao_names_for_torchtune`: torchtune 0.6.1 imports torchao names that
  torchao 0.18 moved or removed;
* the torchtitan shims live in ``scenarios_torchtitan.py`` with the run they serve.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def accelerate_fsdp_on_cpu() -> Iterator[None]:
    """Inside the block, an ``AcceleratorState`` made with an ``fsdp_plugin`` on a CPU
    process group is an FSDP state, as it would be on GPUs.

    accelerate 1.15 classifies a gloo CPU run as ``DistributedType.MULTI_CPU`` and keeps the
    plugin only for its GPU-like types (``AcceleratorState.__init__``), so ``prepare`` would
    return the model unsharded. After the original ``__init__`` this does what accelerate's
    own FSDP branch does there: ``distributed_type = FSDP``, ``fsdp_plugin = plugin``
    (with ``plugin.set_mixed_precision`` when mixed precision is on), and, as accelerate
    does at the end of that ``__init__``, copies the type into ``PartialState``'s shared
    state (every later ``AcceleratorState()`` reads it from there). Nothing else changes.
    """
    from accelerate.state import AcceleratorState, PartialState
    from accelerate.utils import DistributedType

    original = AcceleratorState.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        plugin = kwargs.get("fsdp_plugin")
        if plugin is not None and self.distributed_type == DistributedType.MULTI_CPU:
            self.distributed_type = DistributedType.FSDP
            if self._mixed_precision != "no":
                plugin.set_mixed_precision(self._mixed_precision)
            self.fsdp_plugin = plugin
            PartialState._shared_state["distributed_type"] = DistributedType.FSDP

    AcceleratorState._reset_state(reset_partial_state=True)
    AcceleratorState.__init__ = init
    try:
        yield
    finally:
        AcceleratorState.__init__ = original
        AcceleratorState._reset_state(reset_partial_state=True)


class _AbsentInTorchao:
    """Stands for a torchao name torchtune 0.6.1 imports and torchao 0.18 lacks (only its
    quantization recipes use them; the tests never do)."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("absent in the installed torchao (a torchtune import shim)")


def torchao_names_for_torchtune() -> None:
    """Let ``import torchtune.training`` succeed with torchao 0.18 (idempotent).

    torchtune 0.6.1 imports ``torchao.dtypes.nf4tensor`` (now
    ``torchao.quantization.quantize_.workflows.nf4.nf4_tensor``: aliased to it) and three
    quantization names torchao removed (``TensorCoreTiledLayout``, ``int4_weight_only``,
    ``int8_dynamic_activation_int4_weight``: placeholders that raise when used).
    """
    import torchao.dtypes
    import torchao.quantization

    sys.modules.setdefault("torchao.dtypes.nf4tensor", importlib.import_module(
        "torchao.quantization.quantize_.workflows.nf4.nf4_tensor"))
    for module, name in ((torchao.dtypes, "TensorCoreTiledLayout"),
                         (torchao.quantization, "int4_weight_only"),
                         (torchao.quantization, "int8_dynamic_activation_int4_weight")):
        if not hasattr(module, name):
            setattr(module, name, _AbsentInTorchao)
