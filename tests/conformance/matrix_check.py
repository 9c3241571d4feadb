"""What a case of the pairwise matrix must show, as a list of problems (empty: it passes).

Three kinds of case (:func:`problems` picks by the case):

* torch ran: fsdp_ref ran too and every record of
  :func:`tests.conformance.scenarios_matrix.train` is **bitwise** equal to torch's;
* torch refused: fsdp_ref refused too, with an exception of torch's type (or a subclass)
  whose message starts with torch's whole message;
* torch 2.13 is not the truth (:data:`~tests.conformance.matrix_options.TORCH_LIMITS`:
  it cannot run the case on gloo, or computes something else): torch still fails with
  the message the limit names (or still differs from one process beyond
  :func:`tolerance`), and fsdp_ref equals one-process training on the global batch
  within :func:`tolerance`.
"""

from __future__ import annotations

from typing import Any

import torch

from tests.conformance import harness
from tests.conformance.matrix_options import STEPS, TorchLimit, torch_limit
from tests.conformance.scenarios_matrix import DEPTH, ROWS_PER_DP_RANK, SGD_LR, WORLD_DP


def libs_of(case: dict[str, Any]) -> tuple[str, ...]:
    """The implementations a case runs: plus one-process training where torch cannot."""
    limit = torch_limit(case)
    if limit is None:
        return ("torch", "fsdp_ref")
    return ("torch", "fsdp_ref", "plain") if limit.runs else ("fsdp_ref", "plain")


def problems(case: dict[str, Any], per_rank: list[dict[str, tuple[str, Any]]]) -> list[str]:
    """Why ``case``'s outcomes (one dict per rank, implementation -> (status, value)) do
    not show fsdp_ref behaving as torch does."""
    limit = torch_limit(case)
    if limit is not None and not _refused(per_rank, limit):
        return _against_plain(case, per_rank, limit)
    try:
        if per_rank[0]["torch"][0] == "raised":
            harness.assert_same_refusal(per_rank)
        else:
            harness.assert_same_results(per_rank)  # bitwise
    except AssertionError as e:
        return [str(e)]
    return []


def _refused(per_rank: list[dict], limit: TorchLimit) -> bool:
    """torch refused the case for a reason of its own, not the limit's."""
    if not limit.runs:
        return False
    status, value = per_rank[0]["torch"]
    return status == "raised" and (limit.raises is None or limit.raises not in value["msg"])


def _against_plain(case: dict[str, Any], per_rank: list[dict], limit: TorchLimit) -> list[str]:
    found = []
    for rank, outcome in enumerate(per_rank):
        try:
            truth = harness.result_of(outcome["plain"], "plain", rank)
            ours = harness.result_of(outcome["fsdp_ref"], "fsdp_ref", rank)
        except AssertionError as e:
            found.append(str(e))
            continue
        found += [f"rank {rank}: fsdp_ref vs one process: {d}"
                  for d in _tolerated_differences(case, truth, ours)]
        if not limit.runs:
            continue
        status, theirs = outcome["torch"]
        if limit.raises is not None:
            still = status == "raised" and limit.raises in theirs["msg"]
        else:
            still = status == "ok" and bool(_tolerated_differences(case, truth, theirs))
        if not still:
            found.append(f"rank {rank}: torch no longer shows the limit ({limit.why}): "
                         f"{status}: {str(theirs)[:300]}; compare with torch bitwise again")
    return found


def unit_roundoff(dtype: torch.dtype) -> float:
    """Half the gap between 1 and the next number of ``dtype``: 2**-24 for float32, 2**-8
    for bfloat16."""
    return 2.0 ** -(torch.finfo(dtype).nmant + 1)


def lowest_precision(case: dict[str, Any]) -> torch.dtype:
    """The least precise dtype the case computes or reduces in (float32 without mixed
    precision)."""
    dtypes = [getattr(torch, n) for n in (case["param_dtype"], case["reduce_dtype"],
                                          case["output_dtype"]) if n is not None]
    return min([torch.float32, *dtypes], key=lambda d: torch.finfo(d).nmant)


def tolerance(case: dict[str, Any], magnitude: float, step: int = 0) -> float:
    """How far a loss or gradient of fsdp_ref may be from one process's after ``step``
    earlier steps, for a value whose largest entry (in one process) is ``magnitude``.

    Every operation rounds to within a relative ``u`` (the unit roundoff of the least
    precise dtype of the case). A value passes through ``DEPTH`` rounded layers forward
    and as many backward; the gradient sums the rows of the global batch (its size: the
    data-parallel world size times the rows per rank) in an order of its own (per rank,
    then over ranks), which moves a sum of ``n`` terms by at most ``(n - 1) u`` times the
    largest term (the recursive-summation bound, with the terms no larger than the
    value's magnitude). Each earlier SGD step leaves the parameters that far apart again,
    times the learning rate, so the bound grows by one such term per step.
    """
    rows = ROWS_PER_DP_RANK * WORLD_DP[case["mesh"]]
    per_value = (2 * DEPTH + rows - 1) * unit_roundoff(lowest_precision(case))
    return per_value * magnitude * (1 + step * (1 + SGD_LR))


def _tolerated_differences(case: dict[str, Any], truth: dict, ours: dict) -> list[str]:
    found = []
    micro = case["microbatches"]
    for i, (want, got) in enumerate(zip(truth["losses"], ours["losses"])):
        tol = tolerance(case, abs(want), step=i // micro)
        if abs(got - want) > tol:
            found.append(f"loss {i}: {got!r} (expected {want!r} within {tol:.3g})")
    for step in range(STEPS):  # the gradients the optimizer step uses: the last backward's
        grads_t, grads_o = truth["grads"][step * micro + micro - 1], ours["grads"][
            step * micro + micro - 1]
        found += _tensors(case, grads_t, grads_o, f"step {step} gradient", step)
        bound = {n: SGD_LR * sum(tolerance(case, _max(truth["grads"][s * micro + micro - 1][n]),
                                           step=s) for s in range(step + 1))
                 for n in truth["params"][step]}
        for name, want in truth["params"][step].items():
            got = ours["params"][step][name]
            diff = (got.double() - want.double()).abs().max().item()
            if diff > bound[name]:
                found.append(f"step {step} parameter {name}: max abs diff {diff:.3g} "
                             f"(tolerance {bound[name]:.3g})")
    return found


def _max(t: torch.Tensor | None) -> float:
    return 0.0 if t is None else t.double().abs().max().item()


def _tensors(case: dict[str, Any], want: dict, got: dict, what: str, step: int) -> list[str]:
    """Gradients within tolerance; None (no gradient) counts as zeros: an unused
    parameter has none in one process and zeros where FSDP reduces unused ones."""
    found = []
    for name, w in want.items():
        g = got.get(name)
        if w is None and g is None:
            continue
        ref = torch.zeros_like(g) if w is None else w
        mine = torch.zeros_like(ref) if g is None else g
        tol = tolerance(case, _max(ref), step)
        diff = (mine.double() - ref.double()).abs().max().item()
        if diff > tol:
            found.append(f"{what} {name}: max abs diff {diff:.3g} (tolerance {tol:.3g})")
    return found
