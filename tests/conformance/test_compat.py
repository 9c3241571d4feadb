"""Code written for torch's FSDP2 sees fsdp_ref (issue 23 item 8): torch's ``isinstance``
checks, ``fsdp_ref.install()``, torch's argument objects, and the proof that torch's
classes, which fsdp_ref's module classes derive from, contribute nothing but the
``isinstance`` answer."""

from __future__ import annotations

import importlib

import pytest
import torch
import torch.nn as nn
from torch.distributed._composable.replicate_with_fsdp import ReplicateModule
from torch.distributed.fsdp import FSDPModule

import fsdp_ref
from fsdp_ref import compat
from tests.conformance import harness

S = "tests.conformance.scenarios_compat:"
#: Attributes every class has, which say nothing about behaviour.
_METADATA = {"__module__", "__doc__", "__dict__", "__weakref__", "__qualname__",
             "__firstlineno__", "__static_attributes__", "__annotations__", "__orig_bases__",
             "__parameters__"}


@pytest.mark.parametrize("ws", [2], ids=["ws2"])
def test_torch_isinstance_sees_fsdp_ref_modules(pool):
    """Both import paths of torch's FSDPModule, and ReplicateModule for replicate: the
    same answers as for torch's own modules (and the same class names)."""
    harness.assert_same_results(harness.run(pool, S + "kinds"), "torch", "fsdp_ref")


@pytest.mark.parametrize("ws", [2, 4], ids=["ws2", "ws4"])
@pytest.mark.parametrize("offload", [False, True], ids=["no_offload", "offload"])
def test_framework_written_for_torch_trains_on_fsdp_ref(pool, offload):
    """The third-party helper, imported after install(), configures every FSDP module it
    finds (summed gradients) and trains like the unsharded model, also with
    ``CPUOffloadPolicy()``; torch's own fully_shard cannot run that configuration on gloo
    (PREMUL_SUM; without an accelerator, offload's default pin_memory=True fails first)."""
    results = harness.run(pool, S + "framework", libs=("torch", "fsdp_ref", "plain"),
                          offload=offload)
    harness.assert_same_results(results, "plain", "fsdp_ref", keys=("losses", "params"))
    torch_fails_with = "PREMUL_SUM"
    if offload and not torch.accelerator.is_available():
        torch_fails_with = "Cannot access accelerator device when none is available"
    for per_lib in results:
        assert harness.result_of(per_lib["fsdp_ref"], "fsdp_ref", 0)["configured"] == 3
        status, info = per_lib["torch"]
        assert status == "raised" and torch_fails_with in info["msg"], per_lib["torch"]


@pytest.mark.parametrize("ws", [2], ids=["ws2"])
def test_gradient_carries_the_parameters_spec(pool):
    """Like torch's, every sharded gradient is built on its parameter's own spec object,
    every step."""
    results = harness.run(pool, S + "grad_spec")
    harness.assert_same_results(results, "torch", "fsdp_ref")
    for per_lib in results:
        seen = harness.result_of(per_lib["fsdp_ref"], "fsdp_ref", 0)["seen"]
        assert seen and all(same and equal for step in seen for _, same, equal in step), seen


@pytest.mark.parametrize("ws", [1], ids=["ws1"])
def test_no_torch_fsdp_code_runs_on_fsdp_ref_modules(pool):
    """Every function of torch's FSDPModule and ReplicateModule is a tripwire while
    fsdp_ref's modules train and answer their public methods: none trips."""
    (res,) = harness.run(pool, S + "torch_class_inert", libs=("fsdp_ref",))
    out = harness.result_of(res["fsdp_ref"], "fsdp_ref", 0)
    assert out["wired"] >= 25 and out["tripped"] == [], out


@pytest.mark.parametrize(("ours", "theirs", "api"), [
    (fsdp_ref.FSDPModule, FSDPModule, "fully_shard"),
    (fsdp_ref.ReplicateModule, ReplicateModule, "replicate"),
])
def test_every_torch_attribute_resolves_to_fsdp_ref(ours, theirs, api):
    """For each attribute torch's class (and its torch bases) define, the first class of
    the MRO that defines it is fsdp_ref's or the user's, never torch's; torch's
    ``_orig_cls_mro_index`` names the user's class."""
    cls = compat.wrapper_class(nn.Sequential, ours, api)
    torch_classes = [c for c in theirs.__mro__ if c is not object]
    assert cls.__mro__[-len(torch_classes) - 1:-1] == tuple(torch_classes)
    names = {n for c in torch_classes for n in vars(c)} - _METADATA
    assert len(names) > 25
    owners = {n: next(c for c in cls.__mro__ if n in vars(c)) for n in names}
    leaked = {n: c.__qualname__ for n, c in owners.items() if c in torch_classes}
    assert not leaked, f"torch's attributes reachable on fsdp_ref modules: {leaked}"
    assert cls.__mro__[cls._orig_cls_mro_index] is nn.Sequential


def test_sliced_container_is_the_users_class():
    """Slicing an FSDP nn.Sequential builds a plain nn.Sequential (fsdp_ref's __new__)."""
    cls = compat.wrapper_class(nn.Sequential, fsdp_ref.ReplicateModule, "replicate")
    seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    seq.__class__ = cls
    assert type(seq[0:1]) is nn.Sequential


def test_install_points_torch_names_at_fsdp_ref_and_back():
    import torch.distributed._composable.fsdp as composable
    import torch.distributed.fsdp as tfsdp
    from torch.distributed._composable import replicate_with_fsdp

    originals = (tfsdp.fully_shard, composable.fully_shard, replicate_with_fsdp.replicate,
                 tfsdp.MixedPrecisionPolicy, tfsdp.FSDPModule)
    with fsdp_ref.installed():
        assert fsdp_ref.compat.is_installed()
        assert tfsdp.fully_shard is fsdp_ref.fully_shard
        assert composable.fully_shard is fsdp_ref.fully_shard
        module = importlib.import_module("torch.distributed._composable.fsdp.fully_shard")
        assert module.fully_shard is fsdp_ref.fully_shard
        assert replicate_with_fsdp.replicate is fsdp_ref.replicate
        assert tfsdp.MixedPrecisionPolicy is fsdp_ref.MixedPrecisionPolicy
        assert tfsdp.FSDPModule is originals[-1]  # isinstance works through the MRO
    assert not fsdp_ref.compat.is_installed()
    assert (tfsdp.fully_shard, composable.fully_shard, replicate_with_fsdp.replicate,
            tfsdp.MixedPrecisionPolicy, tfsdp.FSDPModule) == originals


def test_torch_argument_objects_become_fsdp_refs():
    from torch.distributed import fsdp as tfsdp

    mp = compat.from_torch(tfsdp.MixedPrecisionPolicy(param_dtype=torch.bfloat16,
                                                      cast_forward_inputs=False))
    assert mp == fsdp_ref.MixedPrecisionPolicy(param_dtype=torch.bfloat16,
                                               cast_forward_inputs=False)
    offload = compat.from_torch(tfsdp.CPUOffloadPolicy(pin_memory=False))
    assert isinstance(offload, fsdp_ref.CPUOffloadPolicy) and offload.pin_memory is False
    assert type(compat.from_torch(tfsdp.OffloadPolicy())) is fsdp_ref.OffloadPolicy
    dims = compat.from_torch(tfsdp.DataParallelMeshDims(shard=("a", "b"), replicate="r"))
    assert dims == fsdp_ref.DataParallelMeshDims(shard=("a", "b"), replicate="r")
