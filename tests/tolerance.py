"""How far sharded training may drift from one-process training: a bound from the math.

Against torch's ``fully_shard`` the suite compares bitwise (the same ops on the same data
in the same order). Against one-process training (the ``plain`` model, DDP, a reference
copy) it cannot: the same numbers are summed in another order, and floating-point addition
is not associative. This module says how large that difference may be, from the sizes of
the training run, so that no test carries a constant that happens to pass on one CPU.

**One reordered sum.** A sum of ``n`` floats computed in any order has
``|computed - exact| <= gamma(n - 1) * sum|x_i|`` with ``gamma(k) = k*u / (1 - k*u)`` and
``u`` the unit roundoff (half the dtype's machine epsilon; Higham, *Accuracy and Stability
of Numerical Algorithms*, 2nd ed., section 4.2); two orders of the same sum therefore differ
by at most ``2 * gamma(n - 1) * sum|x_i|``. For terms of random sign, ``sum|x_i|`` is about
``sqrt(n)`` times ``|sum x_i|`` (the terms' magnitudes add, their sum grows as a random
walk), so relative to the result the difference is at most about
``2 * gamma(n - 1) * sqrt(n)``: :func:`reordered_sum`.

**Which sums are reordered in one step.**

* Every weight gradient sums the global batch's ``rows`` per-row products. One process
  does it in one kernel; FSDP sums ``rows / world_size`` rows on each rank, then the
  ``world_size`` partial sums in the reduce-scatter (or all-reduce), then divides.
* Every forward matmul sums ``width`` products per output. The terms are the same, but the
  BLAS kernel chosen for a batch of ``rows / world_size`` rows may block them differently
  than for ``rows`` rows (the vector width of the CPU decides: on AVX-512 and AVX2 machines
  the same test differs by different amounts).

So one step's gradients differ relatively by at most ``reordered_sum(rows)`` plus, carried
through each of ``depth`` layers, ``reordered_sum(width)``. To first order these add up over
``steps`` SGD steps (a stable step does not amplify a perturbation of the parameters), and
every loss, gradient and parameter is compared *normwise*: an element may be off by the
bound times the largest magnitude of its tensor (or 1, the scale of these models'
parameters, for a tensor near zero), because a reordered sum's error is relative to the sum
of the magnitudes, not to each result.

The bound is what the math allows, not what one CPU shows: on this machine the largest
difference seen in the conformance suite is a few ulps; a CPU with another vector width
(or ``MKL_CBWR=COMPATIBLE``, which the portability test sets) shows several times more.
A real bug (a missing division, a rank's gradient dropped, a stale shard) is off by a
fraction of the value, orders of magnitude beyond it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

__all__ = ["Tolerance", "gamma", "mixed_precision", "of_result", "reordered_sum", "training"]


def gamma(k: int, dtype: torch.dtype = torch.float32) -> float:
    """Higham's ``gamma(k) = k*u / (1 - k*u)``: the relative error bound of ``k`` roundings."""
    u = torch.finfo(dtype).eps / 2
    if k * u >= 1:
        raise ValueError(f"{k} roundings in {dtype} have no error bound (k*u >= 1)")
    return k * u / (1 - k * u)


def reordered_sum(n: int, dtype: torch.dtype = torch.float32) -> float:
    """Relative difference between two orders of a sum of ``n`` random-sign terms."""
    if n <= 1:
        return 0.0
    return 2 * gamma(n - 1, dtype) * math.sqrt(n)


@dataclass(frozen=True)
class Tolerance:
    """A normwise comparison: ``|actual - expected| <= rtol * max(max|expected|, 1)``
    element by element (and for a float, ``<= rtol * max(|expected|, 1)``)."""

    rtol: float

    def atol_for(self, expected: torch.Tensor | float) -> float:
        """The absolute slack for ``expected``: ``rtol`` times its largest magnitude."""
        if isinstance(expected, torch.Tensor):
            scale = expected.detach().abs().max().item() if expected.numel() else 0.0
        else:
            scale = abs(expected)
        return self.rtol * max(scale, 1.0)


def training(*, rows: int, width: int, depth: int, steps: int,
             dtype: torch.dtype = torch.float32) -> Tolerance:
    """The normwise bound after ``steps`` SGD steps of a model ``depth`` layers deep whose
    widest layer sums ``width`` inputs, on a global batch of ``rows`` rows (see the module
    docstring for the derivation). ``steps`` counts backwards: a step that compares
    gradients before its update counts itself."""
    per_step = reordered_sum(rows, dtype) + depth * reordered_sum(width, dtype)
    return Tolerance(rtol=max(steps, 1) * (depth + 1) * per_step)


def mixed_precision(*, depth: int, steps: int, dtype: torch.dtype = torch.bfloat16) -> Tolerance:
    """The normwise bound between training that computes in ``dtype`` (parameters and
    activations rounded to it, sums in fp32) and fp32 training of the same model: each
    layer rounds its input, its weight and its output once (relative ``u`` each), in
    forward and again in backward, so one step's gradients differ relatively by about
    ``6 * depth * u``; over ``steps`` steps these add up to first order."""
    u = torch.finfo(dtype).eps / 2
    return Tolerance(rtol=max(steps, 1) * 6 * depth * u)


def of_result(result: dict, *, rows: int, mixed: torch.dtype | None = None) -> Tolerance:
    """The bound for a scenario's ``result`` (``{"losses": [...], "params": {name:
    tensor}}``): ``steps`` from its losses, ``depth`` from its weight matrices (parameters
    with two or more dims), ``width`` from their widest input; ``rows`` is the global batch.
    ``mixed``: the compute dtype of a mixed-precision run compared with fp32 training."""
    weights = [t for t in result.get("params", {}).values() if t.dim() >= 2]
    depth = max(len(weights), 1)
    width = max((t.shape[-1] for t in weights), default=1)
    steps = len(result.get("losses", ())) or 1
    if mixed is not None:
        return mixed_precision(depth=depth, steps=steps, dtype=mixed)
    return training(rows=rows, width=width, depth=depth, steps=steps)
