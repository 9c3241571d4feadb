"""What a case of the pairwise matrix must show, as a list of problems (empty: it passes).

Three kinds of case (:func:`problems` picks by the case):

* torch ran: fsdp_ref ran too and every record of
  :func:`tests.conformance.scenarios_matrix.train` is **bitwise** equal to torch's;
* torch refused: fsdp_ref refused too, with an exception of torch's type (or a subclass)
  whose message starts with torch's whole message;
* torch 2.13 is not the truth (:data:`~tests.conformance.matrix_options.TORCH_LIMITS`:
  it cannot run the case on gloo, or computes something else): torch still fails with
  the message the limit names (or still differs from fsdp_ref: a fixed torch would
  not), and fsdp_ref equals one-process training on the global batch
  within :func:`bound`.
"""

from __future__ import annotations

from typing import Any

import torch

from tests import tolerance
from tests.conformance import harness
from tests.conformance.matrix_build import WEIGHT_SHAPES, WORLD_DP
from tests.conformance.matrix_options import STEPS, TorchLimit, torch_limit
from tests.conformance.scenarios_matrix import ROWS_PER_DP_RANK


def runs_of(case: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """The runs a case makes, ``(label, implementation, train's kwargs)``: torch and
    fsdp_ref; where torch is not the truth, one-process training too and torch with the
    limit's stand-in options (labelled ``"torch stand-in"``), all with SGD."""
    limit = torch_limit(case)
    if limit is None:
        return [("torch", "torch", {"case": case}), ("fsdp_ref", "fsdp_ref", {"case": case})]
    sgd = {"case": case, "optimizer": "sgd"}
    runs = [("torch", "torch", sgd)] if limit.runs else []
    runs += [("fsdp_ref", "fsdp_ref", sgd), ("plain", "plain", sgd)]
    if limit.stand_in is not None:
        options = {k: v for k, v in limit.stand_in.items() if k in case}
        extra = {k: v for k, v in limit.stand_in.items() if k not in case}
        runs.append(("torch stand-in", "torch", {**sgd, **extra, "case": {**case, **options}}))
    return runs


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
        if limit.stand_in is not None:
            try:
                stand_in = harness.result_of(outcome["torch stand-in"], "torch stand-in", rank)
            except AssertionError as e:
                found.append(str(e))
            else:
                keys = [k for k in ours if k not in limit.stand_in_skips]
                found += [f"rank {rank}: fsdp_ref vs torch with {limit.stand_in}{d}"
                          for d in harness.differences({k: stand_in[k] for k in keys},
                                                       {k: ours[k] for k in keys}, "",
                                                       rtol=0.0, atol=0.0)]
        if not limit.runs:
            continue
        status, theirs = outcome["torch"]
        if limit.raises is not None:
            still = status == "raised" and limit.raises in theirs["msg"]
        else:  # a fixed torch would compute what fsdp_ref does
            still = status == "ok" and bool(harness.differences(ours, theirs, rtol=0.0,
                                                                atol=0.0))
        if not still:
            found.append(f"rank {rank}: torch no longer shows the limit ({limit.why}): "
                         f"{status}: {str(theirs)[:300]}; compare with torch bitwise again")
    return found


def _dtype(name: str | None) -> torch.dtype:
    return torch.float32 if name is None else getattr(torch, name)


def bound(case: dict[str, Any], backwards: int) -> tolerance.Tolerance:
    """The normwise bound between fsdp_ref and one process after ``backwards``
    backwards, from :mod:`tests.tolerance`: the global batch's rows and the model's
    weights summed in another order (:func:`~tests.tolerance.training`); where the model
    computes in a low-precision dtype (``param_dtype`` or ``output_dtype``) or the ranks'
    sum runs in one (``reduce_dtype``, by default ``param_dtype``), the rounding of every
    layer and of the reduction over the data-parallel ranks
    (:func:`~tests.tolerance.mixed_precision`)."""
    dp = WORLD_DP[case["mesh"]]
    tol = tolerance.training(rows=ROWS_PER_DP_RANK * dp, shapes=WEIGHT_SHAPES, steps=backwards)
    reduce = _dtype(case["reduce_dtype"] or case["param_dtype"])
    compute = max((_dtype(case[k]) for k in ("param_dtype", "output_dtype")),
                  key=lambda d: torch.finfo(d).eps)
    if reduce == compute == torch.float32:
        return tol
    return tol.plus(tolerance.mixed_precision(depth=len(WEIGHT_SHAPES), steps=backwards,
                                              dtype=compute, reduce_dtype=reduce,
                                              world_size=dp))


def _tolerated_differences(case: dict[str, Any], truth: dict, ours: dict) -> list[str]:
    """Losses after every backward, gradients before every step and parameters after
    it, each within :func:`bound` of one process's. A gradient of None (no gradient)
    counts as zeros: an unused parameter has none in one process and zeros where FSDP
    reduces unused ones."""
    found = []
    micro = case["microbatches"]
    for i, (want, got) in enumerate(zip(truth["losses"], ours["losses"])):
        slack = bound(case, i + 1).atol_for(want)
        if abs(got - want) > slack:
            found.append(f"loss {i}: {got!r} (expected {want!r} within {slack:.3g})")
    for step in range(STEPS):
        backwards = (step + 1) * micro
        tol = bound(case, backwards)
        grads = zip(truth["grads"][backwards - 1].items(), ours["grads"][backwards - 1].values())
        for (name, want), got in grads:  # at each gradient's own scale
            if want is None and got is None:
                continue
            want = torch.zeros_like(got) if want is None else want
            found += _differs(f"step {step} gradient {name}", want, got, tol.gradients())
        for name, want in truth["params"][step].items():
            found += _differs(f"step {step} parameter {name}", want, ours["params"][step][name],
                              tol)
    return found


def _differs(what: str, want: torch.Tensor, got: torch.Tensor | None,
             tol: tolerance.Tolerance) -> list[str]:
    got = torch.zeros_like(want) if got is None else got
    diff = (got.double() - want.double()).abs().max().item()
    slack = tol.atol_for(want)
    return [] if diff <= slack else [f"{what}: max abs diff {diff:.3g} (bound {slack:.3g})"]
