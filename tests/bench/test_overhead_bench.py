"""The host-overhead benchmark's phase attribution and a smoke run (no timings asserted).

A counting clock (each read returns the next integer) turns :class:`PhaseClock`'s seconds
into call counts, so the attribution is checked exactly: every callback lands in its
phase, once per call, and nothing is left patched afterwards.
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import torch
import torch.nn as nn
from torch.autograd.variable import Variable

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import overhead  # noqa: E402
from overhead_profile import analyse, area_of, parse_raw  # noqa: E402
from phases import HOOK_PHASES, PhaseClock  # noqa: E402

from fsdp_ref.tools.simulate import fake_process_group  # noqa: E402


class _Identity(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return grad


def _toy_fsdp_like(n: int) -> nn.Module:
    """``n`` Linear layers with the hooks an FSDP2-style implementation registers: the
    pre-hook puts a Function on the input, the post-hook a tensor hook on the output,
    and the first tensor hook of a backward queues an engine callback."""
    model = nn.Sequential(*(nn.Linear(4, 4) for _ in range(n)))
    queued = [False]

    def on_grad(grad):
        if not queued[0]:
            queued[0] = True
            Variable._execution_engine.queue_callback(lambda: queued.__setitem__(0, False))
        return grad

    def pre(module, args):
        return (_Identity.apply(args[0]),)

    def post(module, args, out):
        out.register_hook(on_grad)
        return out

    for layer in model:
        layer.register_forward_pre_hook(pre)
        layer.register_forward_hook(post)
    return model


def _counting_clock() -> PhaseClock:
    return PhaseClock(now=itertools.count().__next__)


def _counts(clock: PhaseClock) -> dict[str, int]:
    return {phase: int(clock.seconds[phase]) for phase in HOOK_PHASES}


def test_phase_clock_sees_every_callback_once_and_restores_torch():
    register_hook, engine = torch.Tensor.register_hook, Variable._execution_engine
    backward = _Identity.__dict__["backward"]
    clock = _counting_clock()
    model = _toy_fsdp_like(3)
    x = torch.randn(2, 4, requires_grad=True)
    with clock.installed():
        assert clock.attach(model) == 6
        for _ in range(2):  # the first step adopts the Function; the second reuses it
            clock.reset()
            model(x).sum().backward()
            assert _counts(clock) == {"pre_forward": 3, "post_forward": 3, "pre_backward": 3,
                                      "post_backward": 3, "final_callback": 1}
    assert torch.Tensor.register_hook is register_hook
    assert Variable._execution_engine is engine
    assert _Identity.__dict__["backward"] is backward


def test_nested_phase_counts_for_the_outer_one_and_off_clock_counts_nothing():
    clock = _counting_clock()
    inner = clock.timed("post_forward", lambda: None)
    clock.timed("pre_forward", inner)()
    assert _counts(clock)["pre_forward"] == 1 and _counts(clock)["post_forward"] == 0
    clock.enabled = False
    clock.timed("pre_forward", inner)()
    assert _counts(clock)["pre_forward"] == 1


def test_both_implementations_are_attributed_alike():
    # 3 blocks + the root: 4 groups, each with one forward pre-hook, one forward hook and
    # one pre-backward tensor hook on its output per step. The post-backward Function
    # goes on inputs that require grad: blocks 1 and 2 only (block 0 and the root get the
    # raw input); the others are reduced in the one final callback.
    expected = {"pre_forward": 4, "post_forward": 4, "pre_backward": 4, "post_backward": 2,
                "final_callback": 1}
    torch.set_num_threads(1)
    x, target = torch.randn(4, 8), torch.randn(4, 8)
    with fake_process_group(overhead.WORLD_SIZE):
        clock = _counting_clock()
        with clock.installed():
            for contender in overhead.FSDP_CONTENDERS:
                model, optim = overhead.build(contender, 3, 8, clock)
                for _ in range(2):
                    overhead.step(model, optim, x, target, clock)
                    assert _counts(clock) == expected, contender


def test_smoke_run_writes_a_result_with_every_phase(tmp_path):
    result = overhead.main(["--groups", "2", "--rounds", "1", "--steps", "1", "--warmup", "1",
                            "--out", str(tmp_path), "--no-plot"])
    assert json.loads((tmp_path / "overhead.json").read_text()) == result
    entry = result["sizes"]["2"]
    assert set(entry["step_ms"]) == {"fsdp_ref", "torch_fsdp", "plain"}
    for contender in overhead.FSDP_CONTENDERS:
        phases = entry["overhead_per_group_ms"][contender]
        for phase in HOOK_PHASES:
            assert phases[phase]["median"] > 0, (contender, phase)
        parts = sum(phases[k]["median"] for k in (*HOOK_PHASES, "optimizer", "other"))
        assert abs(parts - phases["total"]["median"]) < 1e-9
    tables = overhead.markdown(result)
    assert tables.count("\n| 2 |") == 1 and "| post backward |" in tables


RAW = """\
<module> (bench.py:1);profiled_steps (overhead_profile.py:5);phase_pre_forward (phases.py:9);_pre_forward (/x/src/fsdp_ref/state.py:3);from_local (/y/site-packages/torch/distributed/tensor/_api.py:7) 3
<module> (bench.py:1);profiled_steps (overhead_profile.py:5);phase_pre_forward (phases.py:9);_pre_forward (/x/src/fsdp_ref/state.py:4) 1
<module> (bench.py:1);profiled_steps (overhead_profile.py:5);optimizer_step (overhead.py:2);step (/y/site-packages/torch/optim/sgd.py:8) 2
<module> (bench.py:1);profiled_steps (overhead_profile.py:5);forward (/y/site-packages/torch/nn/modules/linear.py:1) 4
<module> (bench.py:1);build (overhead.py:3) 50
"""


def test_profile_analysis_splits_samples_by_phase_and_function():
    stacks = parse_raw(RAW)
    assert stacks[1] == ([("<module>", "bench.py"), ("profiled_steps", "overhead_profile.py"),
                          ("phase_pre_forward", "phases.py"),
                          ("_pre_forward", "/x/src/fsdp_ref/state.py")], 1)
    result = analyse(stacks, step_ms=20.0)
    assert result["samples"] == 10  # the 50 samples outside profiled_steps are dropped
    pre = result["phases"]["pre_forward"]
    assert pre["share_of_step"] == 0.4 and pre["ms_per_step"] == 8.0
    assert pre["areas"] == {"DTensor": 0.75, "FSDP code + its tensor ops": 0.25}
    assert pre["inclusive"]["_pre_forward (fsdp_ref/state.py)"] == 1.0
    assert pre["self"]["from_local (torch/distributed/tensor/_api.py)"] == 0.75
    assert result["phases"]["optimizer"]["share_of_step"] == 0.2
    assert result["phases"]["compute"]["areas"] == {"model compute": 1.0}
    assert set(result["phases"]) == {"pre_forward", "optimizer", "compute"}
    assert area_of("/z/torch/_tensor.py") == "other torch" and area_of("abc.py") == "other"
