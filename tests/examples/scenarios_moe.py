"""Scenarios of the Mixture-of-Experts example (run on every rank by the harness).

The model is :class:`fsdp_ref.examples.moe.MoETransformer`, sharded by
:func:`fsdp_ref.examples.moe.parallelize_moe` on a world mesh ``(ep, efsdp)`` and a 1-D
data-parallel mesh over the same ranks. Both implementations get torch's own
``ShardPlacementResult`` and ``FSDPMeshInfo``, as torchtitan builds them: what code
written for torch hands to a drop-in.
"""

from __future__ import annotations

import copy
from typing import Any

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor

from tests import tolerance
from tests.collective_spy import KINDS, spy_on
from tests.fsdp.common import Report, exc_info, get_impl, global_batch, mean_over_ranks, run_with
from tests.fsdp.common import rank_slice as dp_slice
from tests.tolerance import EXACT, Tolerance

#: Small enough to run in a second, big enough that every rank routes to every expert.
CFG = {"vocab_size": 64, "dim": 16, "n_layers": 2, "num_experts": 4, "hidden": 32, "top_k": 2}
SEQ = 8
LR = 0.5


def build(cfg: dict[str, Any] | None = None) -> nn.Module:
    """The unsharded model, identical on every rank (seeded)."""
    from fsdp_ref.examples.moe import MoEConfig, MoETransformer

    torch.manual_seed(0)
    return MoETransformer(MoEConfig(**(cfg or CFG)))


def meshes(ws: int, ep: int):
    """World mesh ``(ep, efsdp)`` and the data-parallel mesh over all ``ws`` ranks."""
    world = init_device_mesh("cpu", (ep, ws // ep), mesh_dim_names=("ep", "efsdp"))
    return world, init_device_mesh("cpu", (ws,), mesh_dim_names=("dp",))


def shard(model: nn.Module, impl: str, ws: int, ep: int) -> nn.Module:
    """:func:`parallelize_moe` with ``impl``'s ``fully_shard`` and torch's placement classes."""
    from torch.distributed.fsdp._fully_shard._fsdp_common import FSDPMeshInfo, ShardPlacementResult

    from fsdp_ref.examples.moe import parallelize_moe

    world, dp = meshes(ws, ep)
    return parallelize_moe(
        model, world, dp, fully_shard=get_impl(impl).fully_shard,
        placement_result=ShardPlacementResult, mesh_info=FSDPMeshInfo,
    )


def max_diff(report: Report, model: nn.Module, other: nn.Module, what: str, tol: Tolerance,
             grads: bool = False) -> float:
    """Largest ``|a - b|`` over the full values of the parameters (or gradients) of two
    models with the same names; each tensor checked within ``tol`` (gradients at their
    own scale)."""
    if grads:
        tol = tol.gradients()
    theirs = dict(other.named_parameters())
    worst = 0.0
    for name, p in model.named_parameters():
        a, b = (p.grad, theirs[name].grad) if grads else (p, theirs[name])
        if not report.check(a is not None and b is not None, f"{what} {name}: no grad"):
            continue
        a, b = (t.full_tensor() if isinstance(t, DTensor) else t for t in (a, b))
        report.close(f"{what} {name}", a.detach(), b.detach(), tol)
        worst = max(worst, (a - b).abs().max().item())
    return worst


def train_step(model: nn.Module, x: torch.Tensor, y: torch.Tensor, rank: int, ws: int):
    """Forward and backward of this rank's slice; returns the mean loss over ranks and the
    collectives issued (see :func:`collectives`)."""
    box = {}

    def step():
        box["loss"] = model.loss(dp_slice(x, rank, ws), dp_slice(y, rank, ws))
        box["loss"].backward()

    comms = collectives(step)
    return mean_over_ranks(box["loss"]), comms


def collectives(step) -> dict[str, int]:
    """How many all-gathers / reduce-scatters / all-to-alls of counts ``step()`` issues,
    by kind and process group (its ranks)."""
    counts: dict[str, int] = {}

    def record(name, args, kwargs):
        group = kwargs.get("group") or dist.group.WORLD
        key = f"{KINDS.get(name, 'A2A')} {dist.get_process_group_ranks(group)}"
        counts[key] = counts.get(key, 0) + 1

    with spy_on([*KINDS, "all_to_all_single"], record):
        step()
    return counts


def _router_margins(model: nn.Module) -> list[tuple[torch.Tensor, float]]:
    """Hooks on every router of ``model``: each forward appends, per token, how far its
    last chosen expert's logit is above the first one left out, and the largest logit
    magnitude (top-k of the softmax is top-k of the logits)."""
    margins: list[tuple[torch.Tensor, float]] = []

    def record(module, args, logits, k=CFG["top_k"]):
        top = logits.detach().topk(k + 1, dim=-1).values
        margins.append((top[:, k - 1] - top[:, k], logits.detach().abs().max().item()))

    for block in model.blocks:
        block.moe.router.register_forward_hook(record)
    return margins


def _load_full(ref: nn.Module, model: nn.Module) -> None:
    """Copy ``model``'s parameters, whole, into the same-named parameters of ``ref``."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            ref.get_parameter(name).copy_(p.full_tensor() if isinstance(p, DTensor) else p)


def vs_one_process(rank: int, ws: int, impl: str, ep: int, steps: int = 3) -> dict[str, Any]:
    """Shard with ``impl`` and train on this rank's slice of each batch; a one-process
    model trains on the whole batch. Losses, gradients and parameters must match (fp32,
    SGD) within the one-step bound of :mod:`tests.tolerance`, each step from equal weights:
    top-k routing is discontinuous, and over several steps the bound grows past the margin
    by which some token picks its experts. From equal weights the routers' logits differ by
    at most one forward's reordered sums; every token's top-k margin must be wider than
    twice that (checked). Returns the largest differences and the first step's
    collectives."""
    report = Report(rank, f"moe {impl} ep={ep}")
    ref = build()
    model = shard(copy.deepcopy(ref), impl, ws, ep)
    margins = _router_margins(ref)
    logits = tolerance.forward([p.shape for p in ref.parameters()])
    # the rows of a weight's gradient: every token once, an expert's up to top_k times
    tol = tolerance.of_model(ref, rows=2 * ws * SEQ * CFG["top_k"], steps=1)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=LR)
    worst = {"loss": 0.0, "grad": 0.0, "param": 0.0}
    comms: dict[str, int] = {}
    for step in range(steps):
        if step:
            _load_full(ref, model)
        x, y = global_batch("gpt", step, 2 * ws, vocab=CFG["vocab_size"], seq_len=SEQ)
        ref_opt.zero_grad()
        margins.clear()
        ref_loss = ref.loss(x, y)
        ref_loss.backward()
        for i, (margin, scale) in enumerate(margins):
            slack = 2 * logits.rtol * scale
            report.check(tolerance.clear_of_boundaries(margin, slack),
                         f"step {step} router {i}: a token's top-{CFG['top_k']} experts are "
                         f"chosen by a logit margin of {margin.min().item():.3g}, within "
                         f"{slack:.3g} of a flip: the comparison would not hold")
        opt.zero_grad()
        loss, step_comms = train_step(model, x, y, rank, ws)
        comms = comms or step_comms
        report.close(f"step {step} loss", loss, ref_loss.item(), tol)
        worst["loss"] = max(worst["loss"], abs(loss - ref_loss.item()))
        g = max_diff(report, model, ref, f"step {step} grad", tol, grads=True)
        worst["grad"] = max(worst["grad"], g)
        opt.step()
        ref_opt.step()
        worst["param"] = max(worst["param"], max_diff(report, model, ref, f"step {step}", tol))
    return report.result(worst=worst, collectives=comms)


def vs_torch(rank: int, ws: int, ep: int, impl: str = "fsdp_ref", steps: int = 3
             ) -> dict[str, Any]:
    """``impl``'s ``fully_shard`` and torch's, same layout, same data, side by side:
    losses and parameters equal bitwise, and the same collectives on the same groups.
    Returns ``impl``'s exception instead if it refuses the layout."""
    report = Report(rank, f"moe {impl} vs torch ep={ep}")
    base = build()
    theirs = shard(copy.deepcopy(base), "torch", ws, ep)
    ours, err = run_with(lambda: shard(copy.deepcopy(base), impl, ws, ep))
    if err is not None:
        return report.result(refused=exc_info(err))
    opts = [torch.optim.SGD(m.parameters(), lr=LR) for m in (ours, theirs)]
    worst = {"loss": 0.0, "param": 0.0}
    comms = []
    for step in range(steps):
        x, y = global_batch("gpt", step, 2 * ws, vocab=CFG["vocab_size"], seq_len=SEQ)
        losses = []
        for model, opt in zip((ours, theirs), opts):
            opt.zero_grad()
            loss, step_comms = train_step(model, x, y, rank, ws)
            losses.append(loss)
            comms.append(step_comms)
            opt.step()
        report.close(f"step {step} loss", losses[0], losses[1], EXACT)
        worst["loss"] = max(worst["loss"], abs(losses[0] - losses[1]))
        worst["param"] = max(worst["param"], max_diff(report, ours, theirs, f"step {step}", EXACT))
    for step in range(steps):
        a, b = comms[2 * step], comms[2 * step + 1]
        report.check(a == b, f"step {step}: collectives differ: {a} vs {b}")
    return report.result(worst=worst, refused=None)


def uneven_experts(rank: int, ws: int) -> dict[str, Any] | None:
    """Expert parallelism over 4 ranks of a model with 6 experts: refused on every rank."""
    from fsdp_ref.examples.moe import apply_expert_parallel

    mesh = init_device_mesh("cpu", (ws,), mesh_dim_names=("ep",))
    _, err = run_with(lambda: apply_expert_parallel(build({**CFG, "num_experts": 6}), mesh))
    return exc_info(err)
