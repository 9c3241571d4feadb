"""A small Mixture-of-Experts transformer in torchtitan's layout, with expert parallelism.

Each block is ``x + moe(norm(x))``. The MoE part holds a router (``nn.Linear(dim,
num_experts)``, softmax then top-k), :class:`GroupedExperts` whose weights are
``[num_experts, dim, hidden]`` / ``[num_experts, hidden, dim]`` parameters (SwiGLU, run
expert by expert), and a dense SwiGLU beside them that every token goes through.

Two ways to run the experts, one math:

* **local** (no expert-parallel group): every expert lives in this process; the routed
  tokens, sorted by expert, go through them in turn. A one-process model is the truth
  the sharded runs are compared with.
* **expert parallel** (:func:`apply_expert_parallel`): each expert weight becomes a
  DTensor ``Shard(0)`` on the ``ep`` mesh, so each ep rank holds ``num_experts / ep``
  experts (torchtitan's ``ExpertParallel``). Tokens travel to the rank that owns their
  expert with an all-to-all over ``ep`` and come back with a second one
  (:func:`dispatch_to_experts`); ``torch.distributed.nn.functional.all_to_all_single``
  is differentiable, so backward runs the same two all-to-alls in reverse.

:func:`parallelize_moe` then applies FSDP the way torchtitan does on a world mesh with
dims ``("ep", "efsdp")``: one ``fully_shard`` per block on the whole data-parallel mesh,
whose ``shard_placement_fn`` puts the expert weights on the ``efsdp`` dim instead (a
``ShardPlacementResult``), then the root. It takes ``fully_shard`` and the two placement
classes as arguments so the same code drives torch's FSDP2 and fsdp_ref. The design page
``docs/design/moe.md`` draws the meshes and says which collective runs on which group.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.tensor import DTensor, Shard, distribute_tensor

__all__ = [
    "GroupedExperts",
    "MoE",
    "MoEBlock",
    "MoEConfig",
    "MoETransformer",
    "apply_expert_parallel",
    "dispatch_to_experts",
    "parallelize_moe",
]


@dataclass(frozen=True)
class MoEConfig:
    """Model shape.

    Attributes:
        vocab_size: tokens in the embedding and the head.
        dim: hidden size.
        n_layers: number of blocks.
        num_experts: routed experts per block (a multiple of the ep size).
        hidden: hidden size of each expert and of the dense SwiGLU.
        top_k: experts each token is routed to.
    """

    vocab_size: int = 64
    dim: int = 16
    n_layers: int = 2
    num_experts: int = 4
    hidden: int = 32
    top_k: int = 2


def _local(t: torch.Tensor) -> torch.Tensor:
    """The tensor this rank computes with: a DTensor's local shard, a plain tensor as is."""
    return t.to_local() if isinstance(t, DTensor) else t


class GroupedExperts(nn.Module):
    """``num_experts`` SwiGLU MLPs stored as three stacked weights (expert dim first).

    ``w1``/``w3``: ``[num_experts, dim, hidden]``, ``w2``: ``[num_experts, hidden, dim]``:
    the layout that lets expert parallelism shard the experts by ``Shard(0)`` and FSDP
    shard them again on top. Under expert parallelism the weights are DTensors and the
    forward uses their local experts only.
    """

    def __init__(self, dim: int, hidden: int, num_experts: int) -> None:
        super().__init__()
        self.num_experts = num_experts
        self.w1 = nn.Parameter(torch.empty(num_experts, dim, hidden))
        self.w2 = nn.Parameter(torch.empty(num_experts, hidden, dim))
        self.w3 = nn.Parameter(torch.empty(num_experts, dim, hidden))

    def forward(self, x: torch.Tensor, counts: list[int]) -> torch.Tensor:
        """``x`` holds the tokens of this rank's experts back to back, ``counts[e]`` of
        them for local expert ``e``; returns each token's expert output, in that order."""
        w1, w2, w3 = _local(self.w1), _local(self.w2), _local(self.w3)
        outs = [
            (F.silu(chunk @ w1[e]) * (chunk @ w3[e])) @ w2[e]
            for e, chunk in enumerate(x.split(counts))
        ]
        return torch.cat(outs)


def _all_to_all(x: torch.Tensor, out_splits: list[int], in_splits: list[int], group: Any):
    """Differentiable all-to-all of rows: ``in_splits[r]`` rows of ``x`` go to rank ``r``,
    ``out_splits[r]`` rows come from it; backward is the reverse exchange."""
    return funcol.wait_tensor(funcol.all_to_all_single(x, out_splits, in_splits, group))


def dispatch_to_experts(
    tokens: torch.Tensor, counts: torch.Tensor, experts: GroupedExperts, group: Any
) -> torch.Tensor:
    """Send ``tokens`` (sorted by global expert id, ``counts[e]`` for expert ``e``) to the
    ranks of the ep ``group`` that own their experts, run them there, bring the outputs home.

    1. an all-to-all of the counts tells each rank how many tokens it gets from whom;
    2. an all-to-all of the tokens sends each one to the rank owning its expert (rank
       ``r`` owns experts ``r * n_local ... (r + 1) * n_local - 1``);
    3. the received tokens, ordered (source rank, local expert), are regrouped by local
       expert, run, and put back in arrival order;
    4. the inverse all-to-all returns the outputs, in the order ``tokens`` came in.

    Both token all-to-alls are differentiable: in backward the gradients of the outputs
    travel to the experts' ranks and the gradients of the inputs travel back.
    """
    ep = dist.get_world_size(group)
    n_local = experts.num_experts // ep
    received_counts = torch.empty_like(counts)
    dist.all_to_all_single(received_counts, counts, group=group)
    send_splits = counts.view(ep, n_local).sum(1).tolist()
    recv_splits = received_counts.view(ep, n_local).sum(1).tolist()
    arrived = _all_to_all(tokens, recv_splits, send_splits, group)
    # (source, expert) -> (expert, source): each local expert's tokens back to back
    sizes = received_counts.tolist()
    by_source = arrived.split(sizes)
    order = [s * n_local + e for e in range(n_local) for s in range(ep)]
    grouped = torch.cat([by_source[i] for i in order])
    out = experts(grouped, received_counts.view(ep, n_local).sum(0).tolist())
    back: list[torch.Tensor] = [torch.Tensor()] * len(order)
    for i, chunk in zip(order, out.split([sizes[i] for i in order])):
        back[i] = chunk
    out = torch.cat(back)
    return _all_to_all(out, send_splits, recv_splits, group)


class SwiGLU(nn.Module):
    """The dense feed-forward beside the experts (a shared expert every token uses)."""

    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``w2(silu(w1 x) * w3 x)``."""
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class MoE(nn.Module):
    """Token-choice top-k routing over :class:`GroupedExperts`, plus a dense SwiGLU.

    ``ep_group`` (set by :func:`apply_expert_parallel`) is the process group whose ranks
    share the experts; ``None`` runs every expert here.
    """

    def __init__(self, cfg: MoEConfig) -> None:
        super().__init__()
        self.top_k = cfg.top_k
        self.router = nn.Linear(cfg.dim, cfg.num_experts, bias=False)
        self.experts = GroupedExperts(cfg.dim, cfg.hidden, cfg.num_experts)
        self.shared = SwiGLU(cfg.dim, cfg.hidden)
        self.ep_group: Any = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Each token's output is the gate-weighted sum of its top-k experts' outputs plus
        the dense SwiGLU's."""
        flat = x.reshape(-1, x.shape[-1])
        gates, chosen = self.router(flat).softmax(dim=-1).topk(self.top_k, dim=-1)
        # one row per (token, choice), sorted by expert so each expert's rows are adjacent
        order = chosen.flatten().argsort(stable=True)
        token_of = order // self.top_k
        counts = torch.bincount(chosen.flatten(), minlength=self.experts.num_experts)
        routed = flat[token_of]
        if self.ep_group is None:
            out = self.experts(routed, counts.tolist())
        else:
            out = dispatch_to_experts(routed, counts, self.experts, self.ep_group)
        out = out * gates.flatten()[order].unsqueeze(-1)
        combined = torch.zeros_like(flat).index_add(0, token_of, out)
        return (combined + self.shared(flat)).view_as(x)


class MoEBlock(nn.Module):
    """``x + moe(norm(x))``: the unit ``fully_shard`` wraps."""

    def __init__(self, cfg: MoEConfig) -> None:
        super().__init__()
        self.norm = nn.RMSNorm(cfg.dim)
        self.moe = MoE(cfg)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """One pre-norm residual MoE step."""
        return x + self.moe(self.norm(x))


class MoETransformer(nn.Module):
    """Embedding, ``n_layers`` :class:`MoEBlock`, final norm and an (untied) head."""

    def __init__(self, cfg: MoEConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.tok = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.blocks = nn.ModuleList(MoEBlock(cfg) for _ in range(cfg.n_layers))
        self.norm = nn.RMSNorm(cfg.dim)
        self.head = nn.Linear(cfg.dim, cfg.vocab_size, bias=False)
        for name, p in self.named_parameters():
            if p.ndim > 1:  # weights; the norms keep their ones
                nn.init.normal_(p, std=0.3 if "router" in name or "experts" in name else 0.1)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits of shape ``(batch, seq, vocab)`` for integer ``tokens``."""
        x = self.tok(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))

    def loss(self, tokens: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Mean cross-entropy over this process's tokens."""
        return F.cross_entropy(self(tokens).flatten(0, 1), targets.flatten())


def apply_expert_parallel(model: MoETransformer, ep_mesh: Any) -> None:
    """Shard every block's experts over the 1-D ``ep_mesh`` (torchtitan's
    ``ExpertParallel``): each expert weight becomes a DTensor ``Shard(0)``, this rank
    keeping its own ``num_experts / ep`` experts (no communication: every rank starts
    from the same full weights), and the MoE dispatches over the mesh's process group.

    Raises:
        ValueError: if the ep size does not divide the number of experts.
    """
    ep = ep_mesh.size()
    if model.cfg.num_experts % ep:
        raise ValueError(
            f"num_experts={model.cfg.num_experts} is not divisible by the ep mesh size {ep}; "
            "choose an ep size that divides the number of experts"
        )
    for block in model.blocks:
        experts = block.moe.experts
        for name, p in list(experts.named_parameters(recurse=False)):
            shard = distribute_tensor(p.detach(), ep_mesh, [Shard(0)], src_data_rank=None)
            setattr(experts, name, nn.Parameter(shard, requires_grad=p.requires_grad))
        block.moe.ep_group = ep_mesh.get_group()


def parallelize_moe(
    model: MoETransformer,
    world_mesh: Any,
    dp_mesh: Any,
    *,
    fully_shard: Callable[..., Any],
    placement_result: Callable[..., Any],
    mesh_info: Callable[..., Any],
) -> MoETransformer:
    """Expert parallelism over ``world_mesh["ep"]``, then FSDP as torchtitan applies it.

    Args:
        model: an unsharded :class:`MoETransformer`, the same on every rank.
        world_mesh: a 2-D mesh with dims ``("ep", "efsdp")`` over all ranks.
        dp_mesh: the 1-D data-parallel mesh over the same ranks: each rank trains on its
            own slice of the batch.
        fully_shard: torch's ``fully_shard`` or fsdp_ref's.
        placement_result: the ``ShardPlacementResult`` class to return for experts.
        mesh_info: the ``FSDPMeshInfo`` class, called as ``mesh_info(mesh, shard_mesh_dim=0)``.

    Every block gets one ``fully_shard`` on ``dp_mesh``; its ``shard_placement_fn`` places
    the expert weights on ``efsdp`` instead (each ep rank's experts are FSDP-sharded over
    the ranks that hold the same experts), so the block issues one all-gather and one
    reduce-scatter per mesh. Then the root takes the embedding, final norm and head. With
    ``ep == 1`` there is no expert parallelism: the experts are sharded like the rest.

    Gradient scale: each rank's loss is the mean over its own tokens, so one-process
    training on the global batch has gradient ``sum(rank grads) / dp``. The non-expert
    gradients are reduce-scattered over all ``dp`` ranks: the default division is right.
    A local expert's gradient already sums the tokens of every ep rank (the backward
    all-to-all brought them home), and the reduce-scatter over ``efsdp`` adds the other
    ep groups': the sum again runs over all ``dp`` ranks, but FSDP's default would divide
    by the efsdp size, leaving expert gradients ``ep`` times too large. So each block
    divides by ``dp`` (``set_gradient_divide_factor``). Reducing over ``efsdp`` with a
    factor that is not its size takes ``ReduceOp.PREMUL_SUM``, which gloo lacks, so the
    blocks reduce by SUM and divide after (``set_force_sum_reduction_for_comms``); where
    ``efsdp`` has one rank no expert reduce-scatter runs, and that setting is left off
    (torch 2.13 would divide a one-rank group's gradients twice).
    """
    ep, efsdp, dp = world_mesh["ep"].size(), world_mesh["efsdp"].size(), dp_mesh.size()
    if ep * efsdp != dp:
        raise ValueError(
            f"the world mesh (ep={ep}, efsdp={efsdp}) and the dp mesh ({dp} ranks) must cover "
            "the same ranks; build both over every rank"
        )
    expert_ids: set[int] = set()
    if ep > 1:
        apply_expert_parallel(model, world_mesh["ep"])
        expert_ids = {id(p) for b in model.blocks for p in b.moe.experts.parameters()}
    on_efsdp = placement_result(
        placement=Shard(0), mesh_info=mesh_info(world_mesh["efsdp"], shard_mesh_dim=0)
    )

    def placement(param: nn.Parameter) -> Any:
        return on_efsdp if id(param) in expert_ids else None  # None: Shard(0) on dp

    for block in model.blocks:
        fully_shard(block, mesh=dp_mesh, shard_placement_fn=placement)
        block.set_gradient_divide_factor(float(dp))
        block.set_force_sum_reduction_for_comms(1 < efsdp < dp)
    fully_shard(model, mesh=dp_mesh)
    return model
