"""GPU scenarios, run as a script in a fresh process by ``tests/cuda/test_cuda.py``.

A fresh process per run, because CSAN (``TORCH_CUDA_SANITIZER=1``) must be on before the
first CUDA call, and because a detected race may leave a process in any state. One GPU,
NCCL with world size 1: the collectives are trivial, the streams, events, buffer lifetimes
and CUDA kernels are real. fsdp_ref issues no collective on a one-rank mesh (as torch
2.13), which would leave the waits around the collectives unexercised: every mode but
``one_rank`` therefore makes fsdp_ref issue them anyway (``collectives.has_peers`` patched
to count this rank as a peer), and ``one_rank --count-collectives`` checks that unpatched
fsdp_ref issues none (c10d and NCCL events in torch's profiler; ``default`` is the
control that counts some). ``meshes`` puts each module's matrices on a mesh of their own
(HSDP, per-parameter meshes as a Mixture-of-Experts model uses them). The same model trains under fsdp_ref's and torch's
``fully_shard`` (or ``replicate``) side by side; the script prints one JSON line::

    python -m tests.cuda.cuda_scenarios default
    python -m tests.cuda.cuda_scenarios bf16 --detector          # fsdp_ref under detect()
    python -m tests.cuda.cuda_scenarios default --mutation compute_after_all_gather
"""

from __future__ import annotations

import argparse
import contextlib
import json

import torch
import torch.distributed as dist

MODES = ("default", "no_reshard", "prefetch", "bf16", "offload", "reset", "unshard_async",
         "hook_stream", "replicate", "one_rank", "meshes")


def _scale_half(shard: torch.Tensor) -> None:
    shard.mul_(0.5)  # a kernel that reads and writes the reduced shard


def _shard(model, impl: str, mode: str) -> None:
    if impl == "fsdp_ref":
        import fsdp_ref as api
    else:
        import torch.distributed.fsdp as api
    if mode == "replicate":
        if impl == "fsdp_ref":
            replicate = api.replicate
        else:
            from torch.distributed._composable.replicate_with_fsdp import replicate
        for block in model.blocks:
            replicate(block)
        replicate(model)
        return
    kw = {}
    if mode == "no_reshard":
        kw["reshard_after_forward"] = False
    if mode == "bf16":
        kw["mp_policy"] = api.MixedPrecisionPolicy(param_dtype=torch.bfloat16,
                                                   reduce_dtype=torch.float32)
    if mode == "offload":
        kw["offload_policy"] = api.CPUOffloadPolicy(pin_memory=True)
    if mode == "meshes" and impl == "fsdp_ref":
        kw["shard_placement_fn"] = _weights_on_hsdp_mesh()
    for block in model.blocks:
        api.fully_shard(block, **kw)
    api.fully_shard(model, **kw)
    if mode == "prefetch":
        blocks = list(model.blocks)
        for i, block in enumerate(blocks):
            block.set_modules_to_forward_prefetch(blocks[i + 1 : i + 2])
            block.set_modules_to_backward_prefetch(blocks[max(0, i - 1) : i])
    if mode == "hook_stream":
        side = torch.cuda.Stream()
        for module in (*model.blocks, model):
            module.set_all_reduce_hook(_scale_half, stream=side)


def _weights_on_hsdp_mesh():
    """Per-parameter meshes: every matrix on a 2-D (replicate, shard) mesh, HSDP with its
    all-reduce, every vector on ``fully_shard``'s 1-D mesh; two groups per module, each
    with its own collectives. torch 2.11 (on the GPU machines) has no per-parameter
    meshes; on one GPU every layout trains the same numbers, so torch's run of the same
    model with its default layout is the reference."""
    from torch.distributed.device_mesh import init_device_mesh

    import fsdp_ref

    hsdp = init_device_mesh("cuda", (1, 1), mesh_dim_names=("replicate", "shard"))
    return lambda p: fsdp_ref.ShardPlacementResult(None, hsdp) if p.dim() == 2 else None


def train(impl: str, mode: str, steps: int = 3) -> tuple[list[float], dict[str, torch.Tensor]]:
    """Train the Stack test model; per-step losses and final full parameters (on CPU)."""
    from tests.fsdp.common import build_model, global_batch, loss_fn

    model = build_model("stack", n_blocks=3).cuda()
    _shard(model, impl, mode)
    optim = torch.optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    for step in range(steps):
        x, y = (t.cuda() for t in global_batch("stack", step, 8))
        # torch's run of ``reset`` never fails: a reset iteration must leave no trace, and
        # torch 2.11 (on the GPU machines) has no reset_iter_state to compare with.
        if mode == "reset" and step == 1 and impl == "fsdp_ref":
            model.blocks[1].fail_next = True
            with contextlib.suppress(RuntimeError):
                model(x)
            model.reset_iter_state()
        if mode == "unshard_async" and step > 0:
            model.blocks[0].unshard(async_op=True)
        loss = loss_fn("stack", model(x).float(), y)
        loss.backward()
        optim.step()
        optim.zero_grad()
        losses.append(loss.item())
    params = {n: p.full_tensor().detach().float().cpu() for n, p in model.named_parameters()}
    return losses, params


def _profile():
    from torch.profiler import ProfilerActivity, profile

    return profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=MODES)
    parser.add_argument("--detector", action="store_true",
                        help="run fsdp_ref under fsdp_ref.sanitizer.detect on CUDA streams")
    parser.add_argument("--mutation", help="a wait site to remove (tests/sanitizer/scenarios.py)")
    parser.add_argument("--count-collectives", action="store_true",
                        help="count the c10d/NCCL events of fsdp_ref's run (torch's profiler)")
    args = parser.parse_args()
    from fsdp_ref import collectives

    if args.mode != "one_rank":  # see the module docstring
        collectives.has_peers = lambda group: group is not None
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", store=dist.HashStore(), rank=0, world_size=1)
    from fsdp_ref.sanitizer import detect
    from tests.sanitizer.scenarios import _mutated

    result = {"mode": args.mode, "torch": torch.__version__}
    counting = _profile() if args.count_collectives else contextlib.nullcontext()
    with _mutated(args.mutation) as hits, counting as prof:
        if args.detector:
            with detect(device_module=torch.cuda, raise_on_race=False) as det:
                losses, params = train("fsdp_ref", args.mode)
            result["races"] = [r.summary() for r in det.races]
            result["reports"] = [str(r) for r in det.races[:2]]
        else:
            losses, params = train("fsdp_ref", args.mode)
    result["mutated"] = len(hits)
    if prof is not None:
        names = [event.name for event in prof.events()]
        result["collectives"] = sum("nccl" in n.lower() or n.startswith("c10d::") for n in names)
    torch.cuda.synchronize()
    ref_losses, ref_params = train("torch", args.mode)
    result["losses"], result["torch_losses"] = losses, ref_losses
    result["max_param_diff"] = max(
        float((params[n] - ref_params[n]).abs().max()) for n in ref_params
    )
    result["max_loss_diff"] = max(abs(a - b) for a, b in zip(losses, ref_losses))
    dist.destroy_process_group()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
