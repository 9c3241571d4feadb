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
* Every matmul sums ``fan_in`` products per output in forward and ``fan_out`` in
  backward (a weight's last two dims). The terms are the same, but the BLAS kernel chosen
  for a batch of ``rows / world_size`` rows may block them differently than for ``rows``
  rows (the vector width of the CPU decides: on AVX-512 and AVX2 machines the same test
  differs by different amounts). Tensor parallelism splits the same sums across ranks and
  adds the partial sums: another order of the same terms, covered by the same bound.
* ``clip_grad_norm_`` sums the squares of every gradient element, per tensor and shard,
  then over tensors and ranks: positive terms, :func:`squares`.

**Carried through the model.** The gradient of a weight is the reordered row sum of
products of the layer's input, which went through the matmuls below it, and of the loss
gradient at its output, which came from the model's output (every forward matmul) back
through the matmuls above it. Each matmul on the way adds at most ``reordered_sum`` of
its own width relative difference: ``fan_in`` in forward, ``fan_out`` in backward. To
first order differences add, and a stable layer does not amplify a relative difference of
its input (the assumption of this whole derivation; a bound that compounded it layer by
layer would allow anything). So one step's gradients differ relatively by at most
``reordered_sum(rows)`` plus, over every weight of the model,
``reordered_sum(fan_in) + reordered_sum(fan_out)`` (:func:`matmul_sums`); the loss by
less. Over ``steps`` SGD steps the parameters differ by the learning rate times the sum of
the gradients' differences, and a gradient sees the earlier steps' parameter differences
through the (stable, ``lr * curvature < 1``) steps: to first order the bounds add up,
``steps`` times the step's: :func:`training`.

**Normwise, and at which scale.** A reordered sum's error is relative to the sum of the
magnitudes of its terms, not to each result, so every tensor is compared *normwise*: an
element may be off by the bound times the largest magnitude of its tensor. For a loss
(about 1 here) and for parameters (which start equal and move by small updates) the scale
is at least 1, the scale of these models' parameters, so that a tensor near zero is not
held to a bound relative to nothing. A gradient is compared at its own scale
(:meth:`Tolerance.gradients`): its terms are of its size, and these models' gradients are
0.015 to 2 (largest element per tensor), so a floor of 1 would loosen a bound up to 65-fold.

**Copies are exact.** Parameters just sharded, all-gathered, saved and loaded, offloaded to
the CPU and back, or computed by the same kernel on the same rows (a replicated batch, the
local gradient of an ignored parameter) are compared bitwise: :data:`EXACT`. A gradient
reduced from ``world_size`` identical per-rank gradients (every rank ran the same batch)
is the exact one up to the rounding of that sum of same-sign terms: :func:`replicated_sum`.

**Mixed precision** against fp32 training: :func:`mixed_precision` (bf16 or fp16 rounding
of inputs, weights and outputs, and of the reduction when it runs in low precision:
:func:`low_precision_reduction`). That bound is percents (bf16 keeps 8 bits), far above a
0.1% bug: every such comparison in the suite sits beside a bitwise one with torch running
the same policy (or, where torch cannot run it, with torch running a stand-in that
computes the same numbers), which catches it.

**Discontinuous steps.** A quantizer (round to a grid) or a top-k router amplifies any
difference near one of its boundaries into a full step, so the bounds here hold only while
every value stays farther from a boundary than the bound. Over several steps the bound
grows past the margins real data leave (the MoE example's routers choose some token's
second expert by 7e-4 in probability, within the 3-step bound), so such a test compares
one step at a time from equal weights: a quantizer then sees equal weights on both sides,
and a router sees logits apart by no more than one forward's reordered sums
(:func:`forward`), which the test checks is less than half every token's top-k margin
(:func:`clear_of_boundaries`).

The bound is what the math allows, not what one CPU shows: over the 1,008 reports that
tests/fsdp, policies, examples and extensions check, the closest comparison came to 3% of
its bound on the machine they were written on, 5% with the kernels forced to others
(``MKL_CBWR=COMPATIBLE ATEN_CPU_CAPABILITY=default``, as the portability test does). A
real bug is off by a fraction of the value, orders of magnitude beyond it: every reduced
gradient divided by 1.001 too much fails 74 of the 83 fsdp_ref tests of test_parity,
test_mesh_placement, test_compose and conformance/test_init (``test_mlp``: by 8.7 to 18
times the bound).

``TOLERANCE_LOG=path`` (read by :func:`tests.fsdp.common.assert_reports_ok`) appends, for
every report a test checks, the comparison that came closest to its bound and how close
(``excess``: the largest difference over the bound): the evidence for the margins.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import torch

__all__ = [
    "EXACT",
    "Tolerance",
    "clear_of_boundaries",
    "forward",
    "gamma",
    "low_precision_reduction",
    "matmul_sums",
    "mixed_precision",
    "of_model",
    "of_result",
    "reordered_sum",
    "replicated_sum",
    "squares",
    "training",
]


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
    """A normwise comparison: ``|actual - expected| <= rtol * max(max|expected|, floor)``
    element by element (and for a float, ``<= rtol * max(|expected|, floor)``)."""

    rtol: float
    floor: float = 1.0

    def atol_for(self, expected: torch.Tensor | float) -> float:
        """The absolute slack for ``expected``: ``rtol`` times its largest magnitude (at
        least ``floor``)."""
        if isinstance(expected, torch.Tensor):
            scale = expected.detach().abs().max().item() if expected.numel() else 0.0
        else:
            scale = abs(expected)
        return self.rtol * max(scale, self.floor)

    def plus(self, other: Tolerance) -> Tolerance:
        """Both differences at once: to first order their bounds add."""
        return replace(self, rtol=self.rtol + other.rtol)

    def gradients(self) -> Tolerance:
        """The same bound for gradients: relative to each gradient's own largest
        magnitude, without the floor of 1 (see the module docstring)."""
        return replace(self, floor=0.0)

    def excess(self, actual: torch.Tensor | float, expected: torch.Tensor | float) -> float:
        """``max|actual - expected|`` over the allowed slack: above 1 the comparison fails
        (``inf`` where a difference is not allowed at all, 0 where there is none)."""
        a = torch.as_tensor(actual).detach().double()
        e = torch.as_tensor(expected).detach().double()
        diff = (a - e).abs().max().item() if e.numel() else 0.0
        if diff != diff:  # NaN on either side
            return math.inf
        slack = self.atol_for(e)
        if slack == 0:
            return 0.0 if diff == 0 else math.inf
        return diff / slack


#: Values that are copies, or the same kernel on the same data: bitwise.
EXACT = Tolerance(0.0)


def _weights(shapes: Iterable[Sequence[int]]) -> list[tuple[int, int]]:
    """``(fan_out, fan_in)`` of every weight among ``shapes`` (two or more dims)."""
    return [(int(s[-2]), int(s[-1])) for s in shapes if len(s) >= 2]


def matmul_sums(shapes: Iterable[Sequence[int]], dtype: torch.dtype = torch.float32) -> float:
    """The relative difference the matmuls of a model's weights (``shapes``) add to every
    gradient in one step: each weight's forward sum over ``fan_in`` and backward sum over
    ``fan_out`` (see the module docstring)."""
    return sum(reordered_sum(fan_in, dtype) + reordered_sum(fan_out, dtype)
               for fan_out, fan_in in _weights(shapes))


def forward(shapes: Iterable[Sequence[int]], dtype: torch.dtype = torch.float32) -> Tolerance:
    """The normwise bound on any activation (a router's logits, the output) of two forwards
    of a model whose weights have ``shapes``, from equal weights on a batch split
    differently: each weight's forward sum over ``fan_in``, no gradient, no step."""
    return Tolerance(rtol=sum(reordered_sum(fan_in, dtype) for _, fan_in in _weights(shapes)),
                     floor=0.0)


def training(*, rows: int, shapes: Iterable[Sequence[int]], steps: int,
             dtype: torch.dtype = torch.float32) -> Tolerance:
    """The normwise bound after ``steps`` SGD steps of a model whose weights have
    ``shapes`` (every parameter's shape will do: vectors are skipped), on a global batch
    of ``rows`` rows (see the module docstring for the derivation). ``steps`` counts
    backwards: a step that compares gradients before its update counts itself."""
    per_step = reordered_sum(rows, dtype) + matmul_sums(shapes, dtype)
    return Tolerance(rtol=max(steps, 1) * per_step)


def replicated_sum(world_size: int, dtype: torch.dtype = torch.float32) -> Tolerance:
    """The bound for a gradient averaged over ``world_size`` ranks that all computed the
    same gradient: ``world_size`` equal terms summed in any order (same sign, so
    ``sum|x_i|`` is the sum itself) have relative error ``gamma(world_size - 1)``, and the
    division rounds once more unless ``world_size`` is a power of two."""
    return Tolerance(rtol=gamma(world_size, dtype)).gradients()


def squares(params: Iterable[torch.Tensor], world_size: int,
            dtype: torch.dtype = torch.float32) -> Tolerance:
    """The bound for a norm over ``params`` (``clip_grad_norm_``'s total norm) on
    ``world_size`` ranks: a sum of squares, each tensor's then the tensors' (each rank its
    shard's, then the ranks'). Every square passes through at most ``n`` additions, ``n``
    the largest tensor's size plus the number of tensors and of ranks, and squares are
    positive (``sum|x_i|`` is the sum), so two orders differ by ``2 * gamma(n)``, which the
    square root halves."""
    sizes = [p.numel() for p in params]
    return Tolerance(rtol=gamma(max(sizes, default=1) + len(sizes) + world_size, dtype))


def low_precision_reduction(world_size: int, dtype: torch.dtype) -> float:
    """The relative difference a reduction in ``dtype`` (bf16, fp16) adds to a gradient
    against the fp32 reference: each of the ``world_size`` partial gradients is rounded to
    ``dtype`` (one rounding each), summed (``world_size - 1`` roundings) and divided (one
    more), so the result is off by at most ``gamma(world_size + 1)`` times the sum of the
    partial gradients' magnitudes, about ``sqrt(world_size)`` times the result for terms of
    random sign (as :func:`reordered_sum`; one-sided: the reference's sum is fp32)."""
    return gamma(world_size + 1, dtype) * math.sqrt(world_size)


def mixed_precision(*, depth: int, steps: int, dtype: torch.dtype = torch.bfloat16,
                    reduce_dtype: torch.dtype | None = None, world_size: int = 1) -> Tolerance:
    """The normwise bound between training that computes in ``dtype`` (parameters and
    activations rounded to it, sums in fp32) and fp32 training of the same model: each
    layer rounds its input, its weight and its output once (relative ``u`` each), in
    forward and again in backward, so one step's gradients differ relatively by about
    ``6 * depth * u``; a reduction in a low-precision ``reduce_dtype`` over ``world_size``
    ranks adds :func:`low_precision_reduction`; over ``steps`` steps these add up to first
    order."""
    u = torch.finfo(dtype).eps / 2
    per_step = 6 * depth * u
    if reduce_dtype is not None and torch.finfo(reduce_dtype).eps > torch.finfo(torch.float32).eps:
        per_step += low_precision_reduction(world_size, reduce_dtype)
    return Tolerance(rtol=max(steps, 1) * per_step)


def of_model(model: torch.nn.Module, *, rows: int, steps: int, repeat: int = 1,
             mixed: torch.dtype | None = None, reduce_dtype: torch.dtype | None = None,
             world_size: int = 1) -> Tolerance:
    """The bound for training ``model`` (the one-process reference: full shapes) on a
    global batch of ``rows`` rows (tokens, for a sequence model) for ``steps`` steps;
    ``repeat``: how many times a forward applies each layer (a generation loop).
    ``mixed``: the compute dtype of a mixed-precision run compared with fp32 training
    (``reduce_dtype`` and ``world_size`` as :func:`mixed_precision`)."""
    return _of_shapes([p.shape for p in model.parameters()] * repeat, rows, steps, mixed,
                      reduce_dtype=reduce_dtype, world_size=world_size)


def of_result(result: dict, *, rows: int, mixed: torch.dtype | None = None) -> Tolerance:
    """The bound for a scenario's ``result`` (``{"losses": [...], "params": {name:
    tensor}}``): ``steps`` from its losses, the layers from its parameters' shapes;
    ``rows`` is the global batch. ``mixed``: the compute dtype of a mixed-precision run
    compared with fp32 training."""
    return _of_shapes([t.shape for t in result.get("params", {}).values()], rows,
                      len(result.get("losses", ())) or 1, mixed)


def _of_shapes(shapes: list, rows: int, steps: int, mixed: torch.dtype | None,
               **reduction: Any) -> Tolerance:
    if mixed is not None:
        return mixed_precision(depth=max(len(_weights(shapes)), 1), steps=steps, dtype=mixed,
                               **reduction)
    return training(rows=rows, shapes=shapes, steps=steps)


def clear_of_boundaries(distance: torch.Tensor, slack: float) -> bool:
    """Whether every value is farther than ``slack`` from a boundary of a discontinuous
    step (``distance``: each value's distance to its nearest boundary), so that values
    within ``slack`` of each other land on the same side (see the module docstring)."""
    return bool(distance.numel() == 0 or distance.min().item() > slack)
