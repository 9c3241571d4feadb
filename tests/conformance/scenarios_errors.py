"""Issue 23 item 7: the inputs torch refuses, refused the same way.

:data:`CASES` is the error table: each :class:`Case` is a situation, the function that
creates it (``case(lib)`` raises on a correct implementation), and, while fsdp_ref
differs from torch, the gap. :func:`refusals` runs every case in one call (one worker
round trip for the whole table) and returns what each raised. ``tests/conformance/
test_errors.py`` holds fsdp_ref to torch's exception type and message for the cases
without a gap (``pending.py`` for the others), and checks that ``docs/design/errors.md``
shows what the two libraries raise today (``python -m tests.conformance.errors_doc``
regenerates its table).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import torch
import torch.nn as nn
from torch.distributed.tensor import Shard

from tests.conformance.harness import mask_quoted
from tests.fsdp.common import exc_info


def _mesh(lib, shape=None, names=None):
    return lib.mesh(shape, names)


class _Scalar(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.z = nn.Parameter(torch.tensor(1.0))


class _Transposed(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 6).t())


def zero_dim(lib):
    lib.fully_shard(_Scalar(), mesh=_mesh(lib))


def non_contiguous(lib):
    lib.fully_shard(_Transposed(), mesh=_mesh(lib))


def mesh_3d(lib):
    lib.fully_shard(nn.Linear(4, 4), mesh=_mesh(lib, (lib.world_size, 1, 1), ("a", "b", "c")))


def mesh_2d_unnamed(lib):
    lib.fully_shard(nn.Linear(4, 4), mesh=_mesh(lib, (1, lib.world_size)))


def list_without_forward(lib):
    lib.fully_shard(nn.ModuleList([nn.Linear(4, 4)]), mesh=_mesh(lib))


def dict_without_forward(lib):
    lib.fully_shard(nn.ModuleDict({"a": nn.Linear(4, 4)}), mesh=_mesh(lib))


def replicate_list_without_forward(lib):
    lib.replicate(nn.ModuleList([nn.Linear(4, 4)]), mesh=_mesh(lib))


def meta_at_first_forward(lib):
    with torch.device("meta"):
        model = nn.Linear(4, 4)
    lib.fully_shard(model, mesh=_mesh(lib))
    model(torch.randn(2, 4))


def shard_dim_out_of_range(lib):
    lib.fully_shard(nn.Linear(4, 4), mesh=_mesh(lib), shard_placement_fn=lambda p: Shard(5))


def uneven_nonzero_dim(lib):
    lib.fully_shard(nn.Linear(3, 3), mesh=_mesh(lib),
                    shard_placement_fn=lambda p: Shard(p.ndim - 1))


def invalid_placement_result(lib):
    lib.fully_shard(nn.Linear(4, 4), mesh=_mesh(lib), shard_placement_fn=lambda p: "Shard(0)")


def stream_under_hsdp(lib):
    model = nn.Linear(4, 4)
    lib.fully_shard(model, mesh=_mesh(lib, (lib.world_size, 1), ("rep", "shard")))
    model.set_all_reduce_hook(lambda grad: None, stream=object())


def _applied_twice(lib, first: str, then: str):
    """``lib.<first>(model)`` then ``lib.<then>(model)`` on the same module."""
    model = nn.Linear(4, 4)
    getattr(lib, first)(model, mesh=_mesh(lib))
    getattr(lib, then)(model, mesh=_mesh(lib))


def deepcopy_sharded(lib):
    model = nn.Linear(4, 4)
    lib.fully_shard(model, mesh=_mesh(lib))
    copy.deepcopy(model)


def param_in_two_groups(lib):
    a, b = nn.Linear(4, 4), nn.Linear(4, 4)
    b.weight = a.weight
    root = nn.Sequential(a, b)
    mesh = _mesh(lib)
    lib.fully_shard(a, mesh=mesh)
    lib.fully_shard(b, mesh=mesh)
    lib.fully_shard(root, mesh=mesh)
    root(torch.randn(2, 4))


def reshard_not_a_divisor(lib):
    lib.fully_shard(nn.Linear(4, 4), mesh=_mesh(lib), reshard_after_forward=3)


def reshard_not_an_int(lib):
    lib.fully_shard(nn.Linear(4, 4), mesh=_mesh(lib), reshard_after_forward="yes")


def dp_mesh_dims_unknown_name(lib):
    lib.fully_shard(nn.Linear(4, 4), mesh=_mesh(lib, names=("dp",)),
                    dp_mesh_dims=lib.DataParallelMeshDims(shard="fsdp"))


def dp_mesh_dims_unnamed_mesh(lib):
    lib.fully_shard(nn.Linear(4, 4), mesh=_mesh(lib),
                    dp_mesh_dims=lib.DataParallelMeshDims(shard="dp"))


def replicate_2d_mesh(lib):
    lib.replicate(nn.Linear(4, 4), mesh=_mesh(lib, (1, lib.world_size), ("rep", "x")))


def replicate_dp_mesh_dims_shard(lib):
    lib.replicate(nn.Linear(4, 4), mesh=_mesh(lib, names=("dp",)),
                  dp_mesh_dims=lib.DataParallelMeshDims(shard="dp"))


def load_wrong_shape(lib):
    """The model's own (sharded) weight and a bias of the wrong length."""
    model = nn.Linear(4, 4)
    lib.fully_shard(model, mesh=_mesh(lib))
    model.load_state_dict({"weight": model.state_dict()["weight"], "bias": torch.zeros(3)})


@dataclass(frozen=True)
class Case:
    """One row of the error table.

    Attributes:
        situation: what the user did, as the docs say it.
        make: the function that does it (``make(lib)``).
        normalize: applied to both messages before comparing (names that legitimately
            differ), or ``None``.
        gap: how fsdp_ref differs today and which file must change; ``None`` when it
            raises torch's type with torch's message.
        exact: the message must be torch's whole message, not only start with it (where
            torch's own tests compare the text).
    """

    situation: str
    make: Callable
    normalize: Callable | None = None
    gap: str | None = None
    exact: bool = False


CASES: dict[str, Case] = {
    "zero_dim": Case("a 0-dim (scalar) parameter", zero_dim),
    "non_contiguous": Case("a non-contiguous parameter", non_contiguous),
    "mesh_3d": Case("a mesh with three dims", mesh_3d),
    "mesh_2d_unnamed": Case("a 2-D mesh without dim names", mesh_2d_unnamed),
    "list_without_forward": Case("an nn.ModuleList without forward", list_without_forward),
    "dict_without_forward": Case("an nn.ModuleDict without forward", dict_without_forward),
    "replicate_list_without_forward": Case("replicate of an nn.ModuleList without forward",
                                           replicate_list_without_forward),
    "meta_at_first_forward": Case("parameters still on the meta device at the first forward",
                                  meta_at_first_forward),
    "shard_dim_out_of_range": Case("shard_placement_fn returns a dim the parameter lacks",
                                   shard_dim_out_of_range),
    "uneven_nonzero_dim": Case("shard_placement_fn's dim > 0 does not divide evenly",
                               uneven_nonzero_dim),
    "invalid_placement_result": Case("shard_placement_fn returns something else",
                                     invalid_placement_result),
    "stream_under_hsdp": Case(
        "a stream given to set_all_reduce_hook under HSDP", stream_under_hsdp, exact=True),
    "fully_shard_twice": Case("fully_shard applied twice to one module",
                              partial(_applied_twice, first="fully_shard", then="fully_shard")),
    "deepcopy_sharded": Case("copy.deepcopy of a sharded module", deepcopy_sharded),
    "param_in_two_groups": Case(
        "a parameter shared by two fully_shard groups", param_in_two_groups,
        normalize=mask_quoted),
    "reshard_not_a_divisor": Case("reshard_after_forward=3 on 2 ranks", reshard_not_a_divisor),
    "reshard_not_an_int": Case("reshard_after_forward='yes'", reshard_not_an_int),
    "dp_mesh_dims_unknown_name": Case("dp_mesh_dims names a dim the mesh lacks",
                                      dp_mesh_dims_unknown_name),
    "dp_mesh_dims_unnamed_mesh": Case("dp_mesh_dims with a mesh without dim names",
                                      dp_mesh_dims_unnamed_mesh),
    "replicate_twice": Case("replicate applied twice to one module",
                            partial(_applied_twice, first="replicate", then="replicate")),
    "replicate_after_fully_shard": Case(
        "replicate of a module given to fully_shard",
        partial(_applied_twice, first="fully_shard", then="replicate")),
    "fully_shard_after_replicate": Case(
        "fully_shard of a replicated module",
        partial(_applied_twice, first="replicate", then="fully_shard")),
    "replicate_2d_mesh": Case("replicate on a 2-D mesh", replicate_2d_mesh),
    "replicate_dp_mesh_dims_shard": Case("replicate with a shard dim in dp_mesh_dims",
                                         replicate_dp_mesh_dims_shard),
    "load_wrong_shape": Case("load_state_dict with a wrong shape", load_wrong_shape),
}


def refusals(lib, names: tuple[str, ...] | None = None) -> dict[str, dict | None]:
    """Run each case (all of :data:`CASES` by default); what each raised (``None``: it
    was accepted)."""
    out = {}
    for name in names or tuple(CASES):
        torch.manual_seed(0)
        try:
            CASES[name].make(lib)
            out[name] = None
        except Exception as e:  # noqa: BLE001 (the refusal is the result)
            out[name] = exc_info(e)
    return out
