"""The memory model of ``fully_shard``: the bytes one rank holds at each point of a step.

The model is the peak, over one steady-state step, of the bytes torch 2.13's
``fully_shard`` holds on one rank (default settings: every block its own group, resharded
after forward, the root not; one prefetch; one reduce-scatter in flight;
``zero_grad(set_to_none=True)``; mixed-precision AdamW, ``param_dtype=bfloat16``,
``reduce_dtype=float32``). Activations are not modelled. Per group ``g``, with ``s_g``
its padded shard elements on this rank:

======  ====================================================  ==============
``U``   unsharded parameters (``param_dtype``)                ``2 numel_g``
``A``   all-gather output, every rank's row (``0`` at N=1)    ``2 N s_g``
``Gu``  unsharded gradients (``param_dtype``)                 ``2 numel_g``
``I``   reduce-scatter input (``reduce_dtype``)               ``4 N s_g``
``O``   reduce-scatter output = the sharded gradient          ``4 s_g``
======  ====================================================  ==============

Always held: the fp32 sharded parameters ``4 S`` and AdamW's two moments ``8 S``
(``S = Σ s_g``). On top, at each point of the step (:meth:`MemoryReport.points`):

* **forward, the root's copy-out**: ``A_root + U_root``;
* **forward, a block's copy-out**: ``U_root + U_b + A_b`` (the previous block resharded;
  the next one's all-gather is issued after this copy-out, its output replacing ``A_b``);
* **backward, block i computing**: ``U_root`` + the gradients of the root's parameters used
  after the blocks (final norm, head) + ``U_i + Gu_i`` + ``A_{i-1}`` (the prefetched block,
  not yet copied out) + block ``i+1``'s reduction in flight (``I + O``) + the sharded
  gradients ``O`` of the blocks reduced before it. Two blocks' worth of parameters, not
  three: the prefetched block holds its all-gather output, not yet its unsharded
  parameters (the model before issue 33 counted both, one block too many);
* **backward, the root's embeddings**: ``U_root + Gu_root`` (+ a tied weight's second
  gradient, summed into the first) + block 0's reduction in flight + every block's ``O``;
* **the root's reduce-scatter copy-in**: ``Gu_root + I_root`` + every block's ``O``
  (torch reshards the root's parameters first, then packs; on CPU ``_chunk_cat`` converts
  each gradient through a temporary of its size: the largest one is added there);
* **the optimizer step**: every sharded gradient ``4 S`` + AdamW's temporaries: ``4 S``
  with ``foreach`` (torch's default on CUDA: ``_foreach_sqrt`` of every ``exp_avg_sq`` at
  once), two of the largest shard with the per-parameter loop (CPU).

:attr:`MemoryReport.total_bytes` is the largest point. The sharded state with every
gradient is ZeRO-3's ``16 Ψ / N`` plus padding: FSDP shards dim 0 of each parameter into
``ceil(dim0 / N)`` rows per rank (as ``torch.chunk`` does), so each rank holds
``S = Σ ceil(dim0 / N) · rest`` elements, which exceeds ``Ψ / N`` once ``N`` approaches
the size of the small dims. The rest is the *working set*: transient, not sharded, and
independent of ``N`` except for padding, so at large ``N`` it dominates.
``tests/bench/test_memory_model.py`` checks the model against the measured peak.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

__all__ = ["CATEGORY", "GroupMemory", "MemoryReport"]

CATEGORY: dict[str, str] = {
    "sharded params": "sharded state", "optimizer moments": "sharded state",
    "sharded grads": "sharded state", "root unsharded params": "unsharded params",
    "block unsharded params": "unsharded params", "root unsharded grads": "unsharded grads",
    "block unsharded grads": "unsharded grads", "tied second grad": "unsharded grads",
    "all-gather output": "comm buffers", "reduce-scatter input": "comm buffers",
    "reduce-scatter output": "comm buffers", "optimizer temporaries": "temporaries",
    "chunk_cat temporary": "temporaries",
}
"""The column of :func:`format_table` each term of a point is summed into."""


@dataclass(frozen=True)
class GroupMemory:
    """One ``fully_shard`` group as one rank sees it.

    Attributes:
        label: ``"root"`` or ``"layers.<i>"``.
        numel: unsharded elements of the group.
        shard_numel: elements of this rank's padded shards (what it allocates).
        local_numel: elements of real data in this rank's shards (``to_local().numel()``).
        param_bytes: bytes per element of the unsharded (compute) parameters.
        reduce_bytes: bytes per element of the gradient reduction.
        late_numel: elements of parameters used after the blocks (the root's final norm
            and head), whose gradients exist from the start of backward.
        tied_numel: elements of a parameter used twice (a head tied to the embedding),
            whose second gradient is summed into the first.
        largest_numel: elements of the group's largest parameter.
        largest_shard_numel: elements of this rank's largest padded parameter shard.
    """

    label: str
    numel: int
    shard_numel: int
    local_numel: int
    param_bytes: int
    reduce_bytes: int
    late_numel: int = 0
    tied_numel: int = 0
    largest_numel: int = 0
    largest_shard_numel: int = 0


@dataclass
class MemoryReport:
    """Per-rank bytes of one model at one world size (see the module docstring).

    Attributes:
        world_size: number of ranks ``N``.
        num_params: total parameters ``Ψ``.
        groups: the root group first, then each block's group, in forward order.
        state_bytes_per_elem: bytes of sharded state per element (fp32 param, fp32 grad,
            AdamW's two moments: 16).
        device: ``"cuda"`` (foreach AdamW) or ``"cpu"`` (per-parameter AdamW, ``_chunk_cat``
            temporaries).
    """

    world_size: int
    num_params: int
    groups: list[GroupMemory] = field(default_factory=list)
    state_bytes_per_elem: int = 16
    device: str = "cuda"

    @property
    def root(self) -> GroupMemory:
        """The root module's group (embedding, final norm, head)."""
        return self.groups[0]

    @property
    def blocks(self) -> list[GroupMemory]:
        """The blocks' groups, in forward order."""
        return self.groups[1:]

    @property
    def largest_block(self) -> GroupMemory:
        """The block group with the most elements."""
        return max(self.blocks, key=lambda g: g.numel)

    @property
    def shard_numel(self) -> int:
        """``S``: padded shard elements this rank holds, over all groups."""
        return sum(g.shard_numel for g in self.groups)

    @property
    def padding_numel(self) -> int:
        """Elements this rank holds beyond an exact ``Ψ / N`` split (may be fractional
        in the ideal, so this is ``S - ceil(Ψ / N)``)."""
        return self.shard_numel - math.ceil(self.num_params / self.world_size)

    @property
    def sharded_param_bytes(self) -> int:
        """fp32 sharded parameters: ``4 S``."""
        return 4 * self.shard_numel

    @property
    def sharded_grad_bytes(self) -> int:
        """fp32 sharded gradients: ``4 S``."""
        return 4 * self.shard_numel

    @property
    def optimizer_bytes(self) -> int:
        """AdamW moments: ``(state_bytes_per_elem - 8) S`` (``8 S``)."""
        return (self.state_bytes_per_elem - 8) * self.shard_numel

    @property
    def sharded_bytes(self) -> int:
        """Parameters, gradients and optimizer state: ``16 S``."""
        return self.sharded_param_bytes + self.sharded_grad_bytes + self.optimizer_bytes

    @property
    def zero3_bytes(self) -> float:
        """The ZeRO-3 formula ``16 Ψ / N`` (no padding)."""
        return self.state_bytes_per_elem * self.num_params / self.world_size

    # ---- the points of one step -----------------------------------------------------

    def _sizes(self, g: GroupMemory) -> dict[str, int]:
        n, s = self.world_size, g.shard_numel
        return {"U": g.param_bytes * g.numel, "A": g.param_bytes * n * s if n > 1 else 0,
                "I": g.reduce_bytes * n * s, "O": g.reduce_bytes * s}

    def points(self) -> dict[str, dict[str, int]]:
        """Bytes held at each point of a steady-state step, term by term (the module
        docstring's list); activations excluded."""
        state = {"sharded params": self.sharded_param_bytes,
                 "optimizer moments": self.optimizer_bytes}
        r, blocks = self._sizes(self.root), [self._sizes(b) for b in self.blocks]
        root_late = self.root.param_bytes * self.root.late_numel
        all_o = sum(b["O"] for b in blocks)
        out = {"forward, root copy-out": {"all-gather output": r["A"],
                                          "root unsharded params": r["U"]}}
        for i, b in enumerate(blocks):
            out[f"forward, block {i} copy-out"] = {
                "root unsharded params": r["U"], "block unsharded params": b["U"],
                "all-gather output": b["A"]}
        for i, b in enumerate(blocks):
            later = blocks[i + 1:]
            out[f"backward, block {i}"] = {
                "root unsharded params": r["U"], "root unsharded grads": root_late,
                "block unsharded params": b["U"], "block unsharded grads": b["U"],
                "all-gather output": blocks[i - 1]["A"] if i > 0 else 0,
                "reduce-scatter input": later[0]["I"] if later else 0,
                "reduce-scatter output": later[0]["O"] if later else 0,
                "sharded grads": sum(x["O"] for x in later[1:])}
        out["backward, root embeddings"] = {
            "root unsharded params": r["U"], "root unsharded grads": r["U"],
            "tied second grad": self.root.param_bytes * self.root.tied_numel,
            "reduce-scatter input": blocks[0]["I"], "reduce-scatter output": blocks[0]["O"],
            "sharded grads": all_o - blocks[0]["O"]}
        mixed = self.root.param_bytes != self.root.reduce_bytes
        out["root reduce-scatter copy-in"] = {
            "root unsharded grads": r["U"], "reduce-scatter input": r["I"],
            "sharded grads": all_o,
            "chunk_cat temporary": self.root.param_bytes * self.root.largest_numel
            if self.device == "cpu" and mixed else 0}
        largest = max(g.largest_shard_numel for g in self.groups)
        out["optimizer step"] = {
            "sharded grads": self.sharded_grad_bytes,
            "optimizer temporaries": 4 * (self.shard_numel if self.device != "cpu"
                                          else 2 * largest)}
        return {name: {**state, **terms} for name, terms in out.items()}

    @property
    def peak_point(self) -> str:
        """The point of the step where the most bytes are held."""
        return max(self.points().items(), key=lambda kv: sum(kv[1].values()))[0]

    @property
    def total_bytes(self) -> int:
        """The peak: the largest point's bytes (activations excluded)."""
        return sum(self.points()[self.peak_point].values())

    def breakdown(self) -> dict[str, int]:
        """The peak point's bytes by :data:`CATEGORY` (the table's columns)."""
        out = dict.fromkeys(dict.fromkeys(CATEGORY.values()), 0)
        for term, nbytes in self.points()[self.peak_point].items():
            out[CATEGORY[term]] += nbytes
        return out

    @property
    def working_set_bytes(self) -> int:
        """The peak's bytes beyond the sharded state (parameters, moments, gradients)."""
        return self.total_bytes - self.breakdown()["sharded state"]
