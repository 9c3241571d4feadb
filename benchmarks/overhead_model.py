"""What the host-overhead benchmark's three scripts share: the model, one step, the areas.

``overhead.py`` times steps, ``overhead_profile.py`` samples them under py-spy and
``overhead_plot.py`` draws both; all three import this module and none imports another at
module level, so there is no import circle among them. Here: the tower of residual blocks
(each its own ``fully_shard`` group), how a contender builds it, one training step with
its phase clock, the contenders, where results go, and the profile's areas (which the
figure colours in a fixed order).
"""

from __future__ import annotations

import time
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
from phases import PhaseClock

__all__ = ["AREAS", "AREA_NAMES", "CONTENDERS", "FSDP_CONTENDERS", "RESULTS", "WORLD_SIZE",
           "Block", "Tower", "build", "optimizer_step", "step"]

CONTENDERS = ("fsdp_ref", "torch_fsdp", "plain")
FSDP_CONTENDERS = ("fsdp_ref", "torch_fsdp")
RESULTS = Path(__file__).resolve().parent / "results"
WORLD_SIZE = 8


class Block(nn.Module):
    """One residual block: ``x + fc2(relu(fc1(norm(x))))``."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc2(torch.relu(self.fc1(self.norm(x))))


class Tower(nn.Module):
    """``blocks`` residual blocks and a final LayerNorm."""

    def __init__(self, blocks: int, width: int) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(Block(width) for _ in range(blocks))
        self.norm = nn.LayerNorm(width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return self.norm(x)


def build(contender: str, blocks: int, width: int, clock: PhaseClock | None = None):
    """The tower (seed 0) sharded by ``contender`` (or not), its hooks timed by ``clock``
    if given, and its SGD optimizer."""
    torch.manual_seed(0)
    model = Tower(blocks, width)
    if contender != "plain":
        if contender == "fsdp_ref":
            from fsdp_ref import fully_shard
        else:
            from torch.distributed.fsdp import fully_shard
        for block in model.blocks:
            fully_shard(block)
        fully_shard(model)
    if clock is not None:
        clock.attach(model)
    return model, torch.optim.SGD(model.parameters(), lr=1e-3)


def optimizer_step(optim) -> None:
    """``optim.step()`` and ``zero_grad()``: the optimizer phase (a named frame for
    profilers)."""
    optim.step()
    optim.zero_grad(set_to_none=True)


def step(model, optim, x, target, clock: PhaseClock) -> dict[str, float]:
    """One training step; its seconds (``step``: by ``clock``, ``wall``: wall clock) and
    the seconds of each phase."""
    clock.reset()
    wall, start = time.perf_counter(), clock.now()
    loss = F.mse_loss(model(x), target)
    loss.backward()
    opt_start = clock.now()
    optimizer_step(optim)
    end = clock.now()
    return {"step": end - start, "wall": time.perf_counter() - wall, **clock.seconds,
            "optimizer": end - opt_start}


# (area, path fragment): the first fragment found in a frame's file names its area. py-spy
# prints files relative to their sys.path entry (``fsdp_ref/param.py``, ``phases.py``).
AREAS = (
    ("benchmark wrapper", "phases.py"),
    ("FSDP code + its tensor ops", "fsdp_ref/"),
    ("FSDP code + its tensor ops", "torch/distributed/fsdp/"),
    ("DTensor", "torch/distributed/tensor/"),
    ("DTensor", "torch/distributed/device_mesh"),
    ("c10d Python", "torch/distributed/distributed_c10d"),
    ("c10d Python", "torch/distributed/c10d_logger"),
    ("torch.ops calls", "torch/_ops.py"),
    ("dynamo disable", "torch/_dynamo/"),
    ("dynamo disable", "torch/_compile.py"),
    ("pytree", "torch/utils/_pytree"),
    ("profiler ranges", "torch/autograd/profiler"),
    ("autograd", "torch/autograd/"),
    ("autograd", "torch/utils/hooks"),
    ("nn.Module / Parameter", "torch/nn/modules/module.py"),
    ("nn.Module / Parameter", "torch/nn/parameter.py"),
    ("optimizer", "torch/optim/"),
    ("model compute", "overhead_model.py"),
    ("model compute", "torch/nn/"),
)
AREA_NAMES = tuple(dict.fromkeys([a for a, _ in AREAS] + ["other torch", "other"]))
"""Every area, in a fixed order (the figure's colours follow it)."""
