"""Issue 23 items 3, 4 and 9: one rank, containers with a forward, in-place ops on outputs.

* **World size 1** (item 3): on a one-rank mesh nothing needs communicating; torch's
  ``CommDebugMode`` counts the collectives a training run issues, and training must equal
  the unsharded model.
* **Containers** (item 4): an ``nn.ModuleList`` / ``nn.ModuleDict`` subclass that defines
  ``forward`` is a module like any other (torch shards it); one without is refused (see
  :mod:`tests.conformance.scenarios_errors`).
* **In-place ops on outputs** (item 9): ``y = block(x); y += 1`` on an output that is a
  view drops a pre-backward hook registered on that tensor; fsdp_ref must still unshard
  the block for backward and train like the plain model (torch 2.13 fails there).
* **A group's parameter order** (issue 30): a module's own parameter declared before a
  child's; torch 2.13 lays out the group's buffers children first, and gloo sums a
  4-rank reduce-scatter in segments that cut across the ranks' chunks, so another layout
  gives gradients ulps apart.
* **inference_mode first** (issue 30): forwards under ``torch.inference_mode()`` equal
  torch's; fsdp_ref's unsharded parameters are normal tensors even when made there, so
  training afterwards works (in torch 2.13 the training forward raises).
"""

from __future__ import annotations

import torch
import torch.nn as nn

from tests.conformance.harness import batch, fit, full
from tests.conformance.models import Layers, NamedLayers, ViewOut
from tests.fsdp.models import Stack


def _mesh(lib):
    return lib.mesh()


def one_rank(lib, reshard_after_forward=None, steps: int = 3):
    """Shard a Stack block by block on a one-rank mesh and train under ``CommDebugMode``:
    the losses, parameters, and the number of collectives the run issued."""
    from torch.distributed.tensor.debug import CommDebugMode

    assert lib.world_size == 1, "a one-rank scenario"
    mesh = lib.mesh()
    model = Stack(dim=16, hidden=32, n_blocks=2, out=8)
    kw = {} if reshard_after_forward is None else {"reshard_after_forward": reshard_after_forward}
    for block in model.blocks:
        lib.fully_shard(block, mesh=mesh, **kw)
    lib.fully_shard(model, mesh=mesh, **kw)
    modes: list[CommDebugMode] = []  # one per step: its module tracker spans one forward

    def counting():
        modes.append(CommDebugMode())
        return modes[-1]

    out = fit(lib, model, din=16, dout=8, steps=steps, step_context=counting)
    by_op: dict[str, int] = {}
    for mode in modes:
        for op, n in mode.get_comm_counts().items():
            by_op[str(op)] = by_op.get(str(op), 0) + n
    return {**out, "collectives": sum(by_op.values()), "by_op": by_op}


def container(lib, kind: str = "list", steps: int = 2):
    """A Linear, then a container subclass with a forward holding three Linear layers,
    then a Linear; the container gets its own ``fully_shard`` call (``kind``: ``"list"``
    or ``"dict"``). Returns losses, parameters and the container's class name."""
    mesh = _mesh(lib)
    layers = [nn.Linear(8, 8) for _ in range(3)]
    body = (Layers(layers) if kind == "list"
            else NamedLayers({f"l{i}": layer for i, layer in enumerate(layers)}))
    model = nn.Sequential(nn.Linear(6, 8), body, nn.Linear(8, 4))
    lib.fully_shard(model[1], mesh=mesh)
    lib.fully_shard(model, mesh=mesh)
    return {**fit(lib, model, din=6, dout=4, steps=steps), "cls": type(model[1]).__name__}


class _InPlaceNet(nn.Module):
    """Two :class:`ViewOut` blocks; ``+= 1`` on the first one's output (a view)."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([ViewOut(8), ViewOut(8)])
        self.head = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.blocks[0](x)
        y += 1
        return self.head(torch.tanh(self.blocks[1](torch.tanh(y))))


def in_place_on_output(lib, steps: int = 2):
    """Shard both blocks (resharded after forward) and the root, train: the pre-backward
    unshard of the first block must survive the in-place op on its output."""
    import warnings

    mesh = _mesh(lib)
    model = _InPlaceNet()
    for block in model.blocks:
        lib.fully_shard(block, mesh=mesh, reshard_after_forward=True)
    lib.fully_shard(model, mesh=mesh)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns about the view before it fails
        return fit(lib, model, din=8, dout=4, steps=steps)



def in_place_on_root_output(lib, steps: int = 2):
    """A single sharded module resharded after forward, ``out += 1`` on its output (a
    view) outside it: no later module's backward prefetches it, so only a pre-backward
    unshard that survives the in-place op gives the right gradients. Returns the losses
    and parameters."""
    import warnings

    model = ViewOut(8)
    lib.fully_shard(model, mesh=_mesh(lib), reshard_after_forward=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for step in range(steps):
        x, y = batch(step, 2 * lib.world_size, 8, 8)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = model(lib.local(x))
        out += 1
        loss = ((out - lib.local(y)) ** 2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(lib.mean(loss))
    return {"losses": losses, "params": lib.state(model)}


class _ParentFirst(nn.Module):
    """A parameter of its own (registered first) and a child's: in ``named_modules``
    order the root's ``bias`` comes first, in torch 2.13's (children first) last. Per rank
    the group holds 2 + 13 elements, so gloo's 16-element segments cut across chunks."""

    def __init__(self) -> None:
        super().__init__()
        self.bias = nn.Parameter(torch.randn(5) * 0.1)
        self.side = nn.Linear(13, 3, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.side(x).sum(-1, keepdim=True) + self.bias


def parent_parameter_first(lib, steps: int = 3):
    """Shard :class:`_ParentFirst` as one group and train with SGD; every step's full
    gradients, the losses and the final parameters."""
    model = _ParentFirst()
    lib.fully_shard(model, mesh=_mesh(lib))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    losses, grads = [], []
    for step in range(steps):
        x, y = batch(step, 4 * lib.world_size, 13, 5)
        loss = ((model(lib.local(x)) - lib.local(y)) ** 2).mean()
        loss.backward()
        grads.append({n: full(p.grad).clone() for n, p in model.named_parameters()})
        opt.step()
        opt.zero_grad()
        losses.append(lib.mean(loss))
    return {"losses": losses, "grads": grads, "params": lib.state(model)}


def inference_mode_first(lib, train: bool = True, steps: int = 2):
    """A model's first two forwards under ``torch.inference_mode()`` (the second refills
    the unsharded parameters the first made), then, with ``train``, SGD training: the
    inference outputs, and the losses and parameters of the training."""
    mesh = _mesh(lib)
    model = Stack(dim=16, hidden=32, n_blocks=2, out=8)
    for block in model.blocks:
        lib.fully_shard(block, mesh=mesh)
    lib.fully_shard(model, mesh=mesh)
    outputs = []
    for step in range(2):
        x, _ = batch(step, 4 * lib.world_size, 16, 8)
        with torch.inference_mode():
            outputs.append(model(lib.local(x)))
    assert all(y.is_inference() for y in outputs)
    if hasattr(model, "reshard"):  # the root stays gathered: free it before the optimizer
        model.reshard()             # takes the parameters (as after any forward, Q40)
    return {"outputs": outputs, **(fit(lib, model, din=16, dout=8, steps=steps) if train else {})}


def marked_managed(lib):
    """Which modules carry the marks torch.compile and transformers read after
    ``fully_shard`` on a block, a list of two modules, the root, and ``replicate`` on
    another model (torch marks only what ``fully_shard`` manages)."""
    model = Stack(dim=8, hidden=8, n_blocks=2, out=4)
    lib.fully_shard(model.blocks[0], mesh=_mesh(lib))
    lib.fully_shard([model.blocks[1].norm, model.blocks[1].mlp], mesh=_mesh(lib))
    lib.fully_shard(model, mesh=_mesh(lib))
    other = nn.Sequential(nn.Linear(4, 4))
    lib.replicate(other, mesh=_mesh(lib))
    return {name: [n for n, m in mod.named_modules()
                   if (getattr(m, "_is_fsdp_managed_module", False),
                       getattr(m, "_fsdp_use_orig_params", False)) == (True, True)]
            for name, mod in (("model", model), ("replicated", other))}
