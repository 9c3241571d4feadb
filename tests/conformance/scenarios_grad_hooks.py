"""Post-accumulate-grad hooks on sharded parameters (issue 30 item 5).

torch 2.13 runs every ``register_post_accumulate_grad_hook`` hook of a sharded parameter
right after assigning (or adding) its reduced gradient, parameter by parameter in the
group's order (``foreach_reduce``). An optimizer stepped in backward through them
(torchtune's ``optimizer_in_bwd``: one optimizer per parameter, stepped and zeroed in its
hook) depends on it: without the hooks it silently never steps. The scenario trains that
way and returns the hooks' calls (which parameter, whether its gradient was there) with
the losses and parameters.
"""

from __future__ import annotations

import torch
import torch.nn as nn

from tests.conformance.harness import batch, full


def optimizer_in_backward(lib, steps: int = 3, offload: bool = False,
                          accumulate: int = 1) -> dict:
    """Two sharded layers and the root; one AdamW per parameter, stepped in its hook.
    With ``accumulate`` > 1, gradient sync is off for all but the last microbatch of a
    step: the hooks must run once per step, after the syncing backward."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8), nn.Linear(8, 4))
    kwargs = {"mesh": lib.mesh()}
    if offload:
        kwargs["offload_policy"] = lib.CPUOffloadPolicy(pin_memory=False)
    for layer in (model[0], model[2]):
        lib.fully_shard(layer, **kwargs)
    lib.fully_shard(model, **kwargs)
    names = {p: n for n, p in model.named_parameters()}
    calls: list[tuple[str, bool]] = []
    optims = {p: torch.optim.AdamW([p], lr=1e-2) for p in model.parameters()}

    def hook(p: torch.Tensor) -> None:
        calls.append((names[p], p.grad is not None))
        optims[p].step()
        optims[p].zero_grad(set_to_none=True)

    for p in model.parameters():
        p.register_post_accumulate_grad_hook(hook)
    losses = []
    for step in range(steps):
        for micro in range(accumulate):
            if lib.distributed:
                model.set_requires_gradient_sync(micro == accumulate - 1)
            x, y = batch(step * accumulate + micro, 2 * lib.world_size, 8, 4)
            loss = nn.functional.mse_loss(model(lib.local(x)), lib.local(y))
            loss.backward()
            losses.append(lib.mean(loss))
        calls.append(("end of step", False))
    grads_left = [n for n, p in model.named_parameters() if p.grad is not None]
    return {"losses": losses, "calls": calls, "grads_left": grads_left,
            "params": {n: full(p).detach().clone() for n, p in model.named_parameters()}}
