"""Per-parameter meshes with the rest of FSDP2 (issue 23 item 1): offload, accumulation,
explicit prefetch, recovery after an exception, and DCP state dicts across layouts.

Every scenario shards :class:`~tests.conformance.models.MoEModel` the way
:func:`tests.conformance.scenarios_moe.moe` does, with the expert weights HSDP over the
``(ep, efsdp)`` mesh (sharded over ``efsdp``, reduced over every rank), so that the
one-process model is the truth for each of them; torch's ``fully_shard`` runs beside it
where it can on gloo.
"""

from __future__ import annotations

import contextlib
from typing import Any

import torch
import torch.nn.functional as F

from tests.conformance.harness import batch, fit
from tests.conformance.models import MoEModel
from tests.conformance.scenarios_moe import expert_placement, meshes

DIN, DOUT = 8, 4


def sharded_moe(lib, layout: str = "hsdp", **kw: Any):
    """The MoE model with each block's expert weights placed by ``layout`` (``"hsdp"``,
    ``"efsdp"``: a mesh of their own; ``"dp"``: the block's mesh, no placement function),
    everything else over the whole data-parallel mesh, then the root."""
    dp, world = meshes(lib)
    model = MoEModel()
    fn = None
    if layout != "dp":
        result = expert_placement(lib, world, layout, "torch")
        fn = lambda p: result if p.ndim == 3 else None  # noqa: E731
    for block in model.blocks:
        lib.fully_shard(block, mesh=dp, shard_placement_fn=fn, **kw)
    lib.fully_shard(model, mesh=dp, **kw)
    return model


def with_feature(lib, feature: str, steps: int = 3) -> dict[str, Any]:
    """Train the sharded MoE model with one more FSDP2 feature on; losses and parameters.

    ``feature``: ``"offload"`` (CPUOffloadPolicy), ``"prefetch"`` (explicit forward and
    backward prefetch lists between the blocks, each block two groups), ``"accumulation"``
    (two microbatches per step, the first without gradient sync), ``"reset"`` (the first
    step fails in a block's forward; ``reset_iter_state()`` and train on).
    """
    kw = {"offload_policy": lib.CPUOffloadPolicy(pin_memory=False)} if feature == "offload" else {}
    model = sharded_moe(lib, **kw)
    blocks = list(model.blocks)
    if feature == "prefetch" and lib.distributed:
        for first, then in zip(blocks, blocks[1:]):
            first.set_modules_to_forward_prefetch([then])
            then.set_modules_to_backward_prefetch([first])
    if feature == "accumulation":
        return _accumulate(lib, model, steps)
    context = None
    if feature == "reset":
        failed = {"once": False}

        def fail_once(_module, _args):
            if not failed["once"]:
                failed["once"] = True
                raise RuntimeError("injected failure in forward")

        blocks[1].register_forward_pre_hook(fail_once)
        first = batch(0, 2 * lib.world_size, DIN, DOUT)
        with contextlib.suppress(RuntimeError):
            model(lib.local(first[0]))
        if lib.distributed:
            model.reset_iter_state()
    return fit(lib, model, din=DIN, dout=DOUT, steps=steps, step_context=context)


def _accumulate(lib, model, steps: int) -> dict[str, Any]:
    """SGD on two microbatches per step: the first backward keeps unsharded gradients
    (``set_requires_gradient_sync(False)``), the second reduces their sum."""
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for step in range(steps):
        x, y = batch(step, 4 * lib.world_size, DIN, DOUT)
        opt.zero_grad(set_to_none=True)
        total = 0.0
        for micro, (xm, ym) in enumerate(zip(lib.local(x).chunk(2), lib.local(y).chunk(2))):
            if lib.distributed:
                model.set_requires_gradient_sync(micro == 1)
            loss = F.mse_loss(model(xm), ym) / 2
            loss.backward()
            total += lib.mean(loss)
        opt.step()
        losses.append(total)
    return {"losses": losses, "params": lib.state(model)}


def dcp_across(lib, saver: str, save_layout: str, loader: str, load_layout: str,
               path: str) -> dict[str, Any]:
    """Train with ``saver`` (an implementation's name) in ``save_layout``, ``dcp.save``
    its state dict to ``path``; build the model anew with ``loader`` in ``load_layout``
    and ``dcp.load`` into it. Returns both models' full parameters (``lib`` only drives the
    call: both implementations run in this process)."""
    import torch.distributed.checkpoint as dcp

    from tests.conformance.harness import Lib

    first = Lib(saver, lib.rank, lib.world_size)
    torch.manual_seed(0)
    model = sharded_moe(first, save_layout)
    trained = fit(first, model, din=DIN, dout=DOUT, steps=2)["params"]
    dcp.save({"model": model.state_dict()}, checkpoint_id=path)
    second = Lib(loader, lib.rank, lib.world_size)
    torch.manual_seed(1)  # other initial values: only the load can make them equal
    other = sharded_moe(second, load_layout)
    state = {"model": other.state_dict()}
    dcp.load(state, checkpoint_id=path)
    other.load_state_dict(state["model"])
    return {"saved": trained, "loaded": second.state(other)}
