"""One case of the pairwise conformance matrix, trained in a rank (issue 30 item 2).

:func:`train` builds a two-block model with the case's options
(:func:`tests.conformance.matrix_build.build`), trains it with AdamW for :data:`~tests.conformance.matrix_options.STEPS` steps and
records everything a difference could show in:

* ``losses``: every microbatch's loss, averaged over ranks;
* ``grads``: after every backward, each parameter's full gradient (None when it has
  none: the sharded parameters of a backward without gradient sync);
* ``layout``: after the first forward and after every backward, what each module holds
  as its parameter (type, local shape, dtype, placements): where resharding after forward
  or backward, offload and mixed precision decide what memory is held;
* ``params``: after every optimizer step, each parameter's full value;
* ``optim``: the optimizer state (full ``exp_avg``, ``exp_avg_sq``, ``step``);
* ``state_dict``: the model's state dict at the end, full values and placements.

:func:`run_batch` runs many cases in one pool call, each side by side on every
implementation it names (:func:`tests.conformance.harness.side_by_side`), with the CPU
seconds each took.
"""

from __future__ import annotations

import contextlib
import re
import time
from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.tensor import DTensor

from tests.conformance.harness import batch, full, side_by_side
from tests.conformance.matrix_build import DIN, DOUT, WORLD_DP, build
from tests.conformance.matrix_options import STEPS

SCENARIO = "tests.conformance.scenarios_matrix:train"
#: plain SGD where one process is the truth (AdamW's first steps are about the sign of
#: each gradient element: a rounding difference in a near-zero one is a whole step)
SGD_LR = 0.1
ROWS_PER_DP_RANK = 4  # rows of the step's batch each data-parallel rank trains on


# ---- recording -------------------------------------------------------------------------


def _name(name: str) -> str:
    """A parameter's name without the wrappers' parts (``torch.compile``'s
    ``_orig_mod``, ``checkpoint_wrapper``'s ``_checkpoint_wrapped_module``), which one
    process, training the bare model, does not have."""
    return re.sub(r"(_orig_mod|_checkpoint_wrapped_module)\.", "", name)


def _params(model: nn.Module) -> dict[str, Any]:
    return {_name(n): full(p).detach().clone() for n, p in model.named_parameters()}


def _grads(model: nn.Module) -> dict[str, Any]:
    return {_name(n): None if p.grad is None else full(p.grad).detach().clone()
            for n, p in model.named_parameters()}


def _layout(model: nn.Module) -> dict[str, tuple]:
    """What each module holds as each parameter now (not its value)."""
    out = {}
    for module_name, module in model.named_modules():
        for name, p in module._parameters.items():
            if p is None:
                continue
            local = p.to_local() if isinstance(p, DTensor) else p
            placements = str(p.placements) if isinstance(p, DTensor) else None
            out[_name(f"{module_name}.{name}")] = (type(p).__name__, tuple(local.shape),
                                            str(p.dtype), placements, p.device.type)
    return out


def _placed(t: torch.Tensor) -> Any:
    if isinstance(t, DTensor):
        return {"full": t.full_tensor().detach().clone(), "placements": str(t.placements),
                "mesh": t.device_mesh.mesh.tolist()}
    return t.detach().clone()


def _optim_state(opt: torch.optim.Optimizer) -> dict[str, Any]:
    state = opt.state_dict()["state"]
    return {str(i): {k: _placed(v) if isinstance(v, torch.Tensor) else v
                     for k, v in sorted(s.items())} for i, s in sorted(state.items())}


# ---- training --------------------------------------------------------------------------


def train(lib, case: dict[str, Any], optimizer: str = "adamw",
          premul_sum_on_gloo: bool = False) -> dict[str, Any]:
    """Train ``case``'s model for STEPS steps with ``optimizer`` (``"adamw"``, or
    ``"sgd"`` where one process is the truth); what every step computed and held.
    ``premul_sum_on_gloo``: torch's reduce-scatter emulates ``PREMUL_SUM``
    (:func:`_premul_sum_on_gloo`, a stand-in where gloo refuses it)."""
    with contextlib.ExitStack() as stack:
        if case["compile"]:  # every case's blocks compile the same code: keep each variant
            import torch._dynamo

            stack.enter_context(torch._dynamo.config.patch(recompile_limit=64,
                                                           accumulated_recompile_limit=512))
        if premul_sum_on_gloo:
            stack.enter_context(_premul_sum_on_gloo())
        return _train(lib, case, optimizer)


def _train(lib, case: dict[str, Any], optimizer: str) -> dict[str, Any]:
    model, blocks, (dp_index, dp_size) = build(lib, case)
    opt = (torch.optim.SGD(model.parameters(), lr=SGD_LR) if optimizer == "sgd"
           else torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1))
    scale = loss_scale(case, lib.distributed)
    micro = case["microbatches"]
    rec: dict[str, list] = {"losses": [], "grads": [], "layout": [], "params": []}
    for step in range(STEPS):
        x, y = batch(step, ROWS_PER_DP_RANK * WORLD_DP[case["mesh"]], DIN, DOUT)
        opt.zero_grad(set_to_none=True)
        for m in range(micro):
            last = m == micro - 1
            if lib.distributed:
                _before_microbatch(model, blocks, case, last)
            xm, ym = (_rows(t, case, dp_index, dp_size, m) for t in (x, y))
            out = model(xm)
            if step == 0 and m == 0:
                rec["layout"].append(("after forward", _layout(model)))
            loss = F.mse_loss(out.float(), ym) / micro
            (loss * scale if scale != 1 else loss).backward()
            rec["losses"].append(lib.mean(loss))
            rec["grads"].append(_grads(model))
            rec["layout"].append((f"step {step} after backward {m}", _layout(model)))
        opt.step()
        rec["params"].append(_params(model))
    rec["optim"] = _optim_state(opt)
    rec["state_dict"] = {_name(k): _placed(v) for k, v in model.state_dict().items()}
    return rec


def _rows(t: torch.Tensor, case: dict[str, Any], dp_index: int, dp_size: int,
          m: int) -> torch.Tensor:
    """Microbatch ``m`` of this data-parallel rank's slice of the step's batch ``t``; for
    one process (dp_size 1) the same rows of every rank's slice, so that each
    microbatch's loss is the mean over ranks of the sharded runs' losses."""
    micro = case["microbatches"]
    if dp_size > 1:
        return t.chunk(dp_size)[dp_index].chunk(micro)[m]
    return torch.cat([part.chunk(micro)[m] for part in t.chunk(WORLD_DP[case["mesh"]])])


def loss_scale(case: dict[str, Any], distributed: bool) -> float:
    """What one process multiplies its loss by to get the gradients FSDP reduces: FSDP
    sums the data-parallel ranks' gradients of their mean losses and divides by the
    gradient divide factor (default: the data-parallel size, which makes the mean)."""
    factor = case["gradient_divide_factor"]
    if distributed or factor is None:
        return 1.0
    return WORLD_DP[case["mesh"]] / factor


def _before_microbatch(model, blocks, case: dict[str, Any], last: bool) -> None:
    """The per-microbatch calls of the case: sync, last-backward and all-reduce flags,
    resharding after backward, and asynchronous unshards."""
    if case["gradient_sync_off"]:
        model.set_requires_gradient_sync(last)
    if case["is_last_backward"]:
        model.set_is_last_backward(last)
    if case["all_reduce_off"]:
        model.set_requires_all_reduce(last)
    if not case["reshard_after_backward"]:
        model.set_reshard_after_backward(last)
    if case["unshard_async"]:
        model.unshard(async_op=True)
        handle = blocks[0].unshard(async_op=True)
        if handle is not None:
            handle.wait()


@contextlib.contextmanager
def _premul_sum_on_gloo():
    """Within: torch's default reduce-scatter does what NCCL's ``ReduceOp.PREMUL_SUM(s)``
    does and gloo refuses: multiply the input by ``s``, then sum (other ops unchanged).
    (A custom ``ReduceScatter`` cannot do it: torch refuses one where a module has
    several parameter groups, as per-parameter meshes make.)"""
    import torch.distributed as dist
    from torch.distributed.fsdp._fully_shard import _fsdp_collectives as collectives

    default = collectives.DefaultReduceScatter.__call__

    def premul_then_sum(self, output_tensor, input_tensor, group, op, async_op=False):
        if op == dist.ReduceOp.PREMUL_SUM:
            input_tensor.mul_(op.factor)
            op = dist.ReduceOp.SUM
        return default(self, output_tensor, input_tensor, group, op, async_op)

    collectives.DefaultReduceScatter.__call__ = premul_then_sum
    try:
        yield
    finally:
        collectives.DefaultReduceScatter.__call__ = default


# ---- batches ---------------------------------------------------------------------------


def run_batch(rank: int, world_size: int,
              runs: list[list[tuple[str, str, dict[str, Any]]]]) -> list[dict[str, Any]]:
    """Many cases, each a list of runs ``(label, implementation, train's kwargs)`` made one after
    the other in this rank (:func:`~tests.conformance.harness.side_by_side`, one
    implementation at a time, so that the rank's log says where it is); per case the
    outcomes by label and this rank's CPU seconds."""
    results = []
    for k, case_runs in enumerate(runs):
        start = time.process_time()
        outcome = {}
        for label, lib, kwargs in case_runs:
            print(f"case {k}: {label}", flush=True)
            lib_start = time.process_time()
            status, value = side_by_side(rank, world_size, SCENARIO, (lib,), kwargs)[lib]
            outcome[label] = (status, value)
            print(f"case {k}: {label} {status} in {time.process_time() - lib_start:.2f} CPU s"
                  + (f": {value['type']}: {value['msg'][:200]}" if status == "raised" else ""),
                  flush=True)
        results.append({"outcome": outcome, "cpu_s": time.process_time() - start})
    return results
