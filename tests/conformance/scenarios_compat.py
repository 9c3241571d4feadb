"""Issue 23 item 8: code written for torch's FSDP2 sees fsdp_ref's modules.

* :func:`kinds`: a module sharded (or replicated) by an implementation is an instance of
  torch's ``FSDPModule`` (from ``torch.distributed.fsdp`` and from
  ``torch.distributed._composable.fsdp``) and, when replicated, of torch's
  ``ReplicateModule``; torch's own modules show what to match.
* :func:`framework`: :mod:`tests.conformance.thirdparty`, imported after
  ``fsdp_ref.install()``, shards with fsdp_ref and configures its modules through torch's
  ``isinstance``; training then equals the one-process model trained on the same
  globally normalised loss, with or without ``CPUOffloadPolicy()``. (torch's own
  ``fully_shard`` cannot run that configuration on gloo: ``ReduceOp.PREMUL_SUM`` is not
  supported there, and without an accelerator ``CPUOffloadPolicy()``'s default
  ``pin_memory=True`` fails in torch.)
* :func:`grad_spec`: a sharded parameter's gradient is a DTensor on the parameter's own
  spec object, step after step (what keeps an optimizer's in-place update from comparing
  the two specs field by field).
* :func:`torch_class_inert`: with every function of torch's ``FSDPModule`` and
  ``ReplicateModule`` replaced by a tripwire, fsdp_ref's modules train and answer every
  public method without tripping one.
"""

from __future__ import annotations

import copy
import importlib
import sys

import torch
import torch.nn as nn

from tests.conformance.harness import batch
from tests.fsdp.models import Stack

THIRD_PARTY = "tests.conformance.thirdparty"


def kinds(lib):
    """``isinstance`` answers of torch's classes for a sharded and a replicated module."""
    from torch.distributed._composable import fsdp as composable
    from torch.distributed._composable.replicate_with_fsdp import ReplicateModule
    from torch.distributed.fsdp import FSDPModule

    sharded, replicated = nn.Linear(4, 4), nn.Linear(4, 4)
    lib.fully_shard(sharded, mesh=lib.mesh())
    lib.replicate(replicated, mesh=lib.mesh())
    return {name: [isinstance(m, FSDPModule), isinstance(m, composable.FSDPModule),
                   isinstance(m, ReplicateModule), isinstance(m, nn.Linear),
                   type(m).__name__]
            for name, m in (("sharded", sharded), ("replicated", replicated))}


def _fresh_third_party():
    sys.modules.pop(THIRD_PARTY, None)
    return importlib.import_module(THIRD_PARTY)


def framework(lib, offload: bool = False, steps: int = 3):
    """Shard a Stack through the third-party helper (fsdp_ref: imported inside
    ``fsdp_ref.installed()``; torch: plain import; plain: not sharded), offloaded to the
    CPU when ``offload``, and train with the loss summed over this rank's elements divided
    by the global element count, SGD. Returns losses, parameters and how many modules the
    helper configured."""
    model = Stack(dim=16, hidden=32, n_blocks=2, out=8)
    configured = 0
    if lib.name == "fsdp_ref":
        import fsdp_ref

        with fsdp_ref.installed():
            helper = _fresh_third_party()
        configured = helper.parallelize(model, lib.mesh(), offload)
    elif lib.name == "torch":
        configured = _fresh_third_party().parallelize(model, lib.mesh(), offload)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for step in range(steps):
        x, y = batch(step, 2 * lib.world_size, 16, 8)
        opt.zero_grad(set_to_none=True)
        loss = ((model(lib.local(x)) - lib.local(y)) ** 2).sum() / y.numel()
        loss.backward()
        opt.step()
        losses.append(lib.mean(loss) * (lib.world_size if lib.distributed else 1))
    return {"losses": losses, "params": lib.state(model), "configured": configured}


def grad_spec(lib, steps: int = 2):
    """Per step, for each parameter: whether its gradient's spec is the parameter's spec
    object and equal to it."""
    model = Stack(dim=16, hidden=32, n_blocks=2, out=8)
    for block in model.blocks:
        lib.fully_shard(block, mesh=lib.mesh())
    lib.fully_shard(model, mesh=lib.mesh())
    seen = []
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(steps):
        x, y = batch(step, 2 * lib.world_size, 16, 8)
        ((model(lib.local(x)) - lib.local(y)) ** 2).sum().backward()
        seen.append([(name, p.grad._spec is p._spec, p.grad._spec == p._spec)
                     for name, p in model.named_parameters()])
        opt.step()
        opt.zero_grad(set_to_none=True)
    return {"seen": seen}


def torch_class_inert(lib):
    """Trip every function torch's ``FSDPModule`` / ``ReplicateModule`` define, then use
    fsdp_ref's modules as a user would; returns the names tripped (must be none)."""
    from torch.distributed._composable.replicate_with_fsdp import ReplicateModule
    from torch.distributed.fsdp import FSDPModule

    tripped: list[str] = []
    saved = []
    for cls in (FSDPModule, ReplicateModule):
        for name, value in list(vars(cls).items()):
            if callable(value) or isinstance(value, (staticmethod, classmethod)):
                saved.append((cls, name, value))
                setattr(cls, name, _tripwire(f"{cls.__name__}.{name}", tripped))
    try:
        _exercise(lib)
    finally:
        for cls, name, value in saved:
            setattr(cls, name, value)
    return {"tripped": tripped, "wired": len(saved)}


def _tripwire(name: str, tripped: list[str]):
    def tripwire(*args, **kwargs):
        tripped.append(name)
        raise AssertionError(f"torch's {name} ran on an fsdp_ref module")

    return tripwire


def _exercise(lib) -> None:
    """Shard, replicate, train, call the public methods, slice, copy, convert."""
    model = Stack(dim=16, hidden=32, n_blocks=2, out=8)
    lib.replicate(model.blocks[0], mesh=lib.mesh())
    lib.fully_shard(model.blocks[1], mesh=lib.mesh())
    lib.fully_shard(model, mesh=lib.mesh())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(2):
        x, y = batch(step, 2 * lib.world_size, 16, 8)
        ((model(lib.local(x)) - lib.local(y)) ** 2).mean().backward()
        opt.step()
        opt.zero_grad()
    for m in (model, model.blocks[0], model.blocks[1]):
        m.set_requires_gradient_sync(True)
        m.set_reshard_after_backward(True)
        m.set_is_last_backward(True)
        m.set_gradient_divide_factor(2.0)
        m.set_reduce_scatter_unused_params(False)
        m.set_unshard_in_backward(True)
        m.set_modules_to_forward_prefetch([])
        m.set_modules_to_backward_prefetch([])
        m.set_reduce_scatter_max_input_buffers(1)
        m.set_force_sum_reduction_for_comms(True)
        m.unshard()
        m.reshard()
        m.unshard(async_op=True).wait()
        m.reshard()
    model.reset_iter_state()
    model.state_dict()
    model.to(torch.float32)
    nn.Sequential(*model.blocks)[0:1]
    try:
        copy.deepcopy(model)
    except AssertionError as e:
        if "tripped" in str(e) or "ran on an fsdp_ref module" in str(e):
            raise
