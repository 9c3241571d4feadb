"""Where a gradient reduction divides by the data-parallel size: torch 2.13's rule.

Data-parallel gradients are averaged: each rank's gradient is summed over the ``N`` ranks
and divided by ``N`` (or by ``set_gradient_divide_factor``'s factor). *Where* the division
happens changes the numbers in the last bits, and what a user's all-reduce hook sees, so
fsdp_ref divides exactly where torch 2.13's collectives do (``_get_gradient_divide_factors``
in ``_fsdp_collectives.py``), while always issuing ``SUM`` collectives itself (gloo emulates
reduce-scatter, and its averaging has had silent correctness bugs):

=========================================  ================================================
torch 2.13                                 fsdp_ref (the same numbers)
=========================================  ================================================
fp32/bf16, no factor: ``AVG`` reduce-      ``SUM``, then divide by the reduce-scatter
scatter (and ``AVG`` HSDP all-reduce)      group's size (then the all-reduce's): gloo's
                                           ``AVG`` is exactly that; the hook sees averages
fp32/bf16, factor = the reduce-scatter     ``SUM``, then divide by it; the all-reduce sums
group's size: ``AVG`` reduce-scatter,
``SUM`` all-reduce
fp32/bf16, another factor:                 multiply the input by ``1/factor``, then ``SUM``
``PREMUL_SUM(1/factor)``                   (NCCL's premultiplied sum; gloo has none)
fp16, or ``set_force_sum_reduction_for_    divide the input by ``pre`` (fp16 only), ``SUM``,
comms(True)``: ``SUM`` with a pre- and a   run the hook, divide by ``post``
post-division
=========================================  ================================================

fp16's ``pre`` is torch's: starting from 1, doubled while it divides the factor and is
smaller than the factor divided by it (about its square root), so that neither the
summands nor the sum leave fp16's range. On one rank
torch issues no reduce-scatter and divides the copy by a given factor.

NCCL may compute ``AVG`` as a sum of premultiplied inputs (``x * (1/N)``), which equals a
sum divided by ``N`` when ``N`` is a power of two and can differ in the last bit otherwise;
on gloo, where the suite compares bitwise, ``AVG`` is a sum divided by ``N``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = ["Division", "division"]

_NO_OVERFLOW_RISK = (torch.float32, torch.bfloat16)


@dataclass(frozen=True)
class Division:
    """Where one reduction divides (1 and ``None`` mean nowhere).

    Attributes:
        pre: divide the reduce-scatter input by this before the sum.
        premul: multiply the reduce-scatter input by this before the sum.
        after_reduce_scatter: divide the reduce-scatter output by this at once (torch's
            averaging reduce-scatter), before any partial sum, all-reduce or hook.
        after_all_reduce: divide the all-reduce output by this at once (its ``AVG``).
        post: divide by this last, after the all-reduce hook.
    """

    pre: float = 1.0
    premul: float | None = None
    after_reduce_scatter: float = 1.0
    after_all_reduce: float = 1.0
    post: float = 1.0


def division(dtype: torch.dtype, reduce_scatter_size: int, all_reduce_size: int,
             factor: float | None, force_sum: bool) -> Division:
    """Torch 2.13's division for a reduction in ``dtype`` over a reduce-scatter group of
    ``reduce_scatter_size`` ranks and an all-reduce group of ``all_reduce_size`` (1 without
    HSDP), by ``factor`` (``None``: the data-parallel size), with forced sums or not."""
    world = reduce_scatter_size * all_reduce_size
    if reduce_scatter_size == 1 and factor is not None:
        return Division(after_reduce_scatter=factor)  # torch: the copy divided by it
    if dtype in _NO_OVERFLOW_RISK and not force_sum:
        if factor is None:
            return Division(after_reduce_scatter=reduce_scatter_size,
                            after_all_reduce=all_reduce_size)
        if factor == reduce_scatter_size:
            return Division(after_reduce_scatter=factor)
        return Division(premul=1 / factor)
    total = float(world if factor is None else factor)
    if dtype in _NO_OVERFLOW_RISK:
        return Division(post=total)
    pre = 1
    while total % pre == 0 and total / pre > pre:
        pre *= 2
    return Division(pre=float(pre), post=total / pre)
