"""The Mixture-of-Experts example (:mod:`fsdp_ref.examples.moe`) and its sharding.

* one process: the expert-parallel path with ``ep=1`` (DTensor experts, all-to-alls over a
  one-rank group) computes what the local path computes;
* 4 gloo ranks, world mesh ``(ep, efsdp)``: torch's ``fully_shard`` in torchtitan's layout
  trains exactly like one process on the global batch (this proves the example, the
  layout and the gradient scale), issuing one all-gather and one reduce-scatter per mesh
  per block;
* 4 gloo ranks: fsdp_ref's ``fully_shard`` trains exactly like torch's in that layout.
"""

from __future__ import annotations

import copy

import pytest
import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor

from fsdp_ref.examples.moe import apply_expert_parallel
from tests.examples.scenarios_moe import CFG, SEQ, build
from tests.fsdp.common import assert_reports_ok, global_batch

SC = "tests.examples.scenarios_moe:"
WS = 4


@pytest.fixture
def one_rank():
    """A one-rank gloo process group in this process (for the ep mesh and its DTensors)."""
    owned = not dist.is_initialized()
    if owned:
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    yield
    if owned:
        dist.destroy_process_group()


def test_ep1_path_equals_local(one_rank):
    local = build()
    ep = copy.deepcopy(local)
    apply_expert_parallel(ep, init_device_mesh("cpu", (1,), mesh_dim_names=("ep",)))
    assert isinstance(ep.blocks[0].moe.experts.w1, DTensor) and ep.blocks[0].moe.ep_group
    assert local.blocks[0].moe.ep_group is None
    x, y = global_batch("gpt", 0, 4, vocab=CFG["vocab_size"], seq_len=SEQ)
    losses = [m.loss(x, y) for m in (local, ep)]
    for loss in losses:
        loss.backward()
    # the same tokens reach the same experts in the same order: bitwise
    torch.testing.assert_close(losses[1], losses[0], rtol=0, atol=0)
    for (name, p), q in zip(ep.named_parameters(), local.parameters()):
        grad = p.grad.full_tensor() if isinstance(p.grad, DTensor) else p.grad
        torch.testing.assert_close(grad, q.grad, rtol=0, atol=0, msg=name)


@pytest.mark.parametrize("ep", [1, 2, 4])
def test_torch_layout_equals_one_process(dist_pools, ep):
    """fp32 SGD, 3 steps: losses, gradients and parameters within the bound of
    ``tests.tolerance`` of one process (no routing decision near a tie: checked);
    expert weights all-gathered and reduce-scattered over their efsdp group, the rest
    over all ranks (backward all-gathers again: blocks reshard after forward). ep=1 is
    plain FSDP; ep=4 leaves one rank per efsdp group (experts not FSDP-sharded)."""
    results = dist_pools.get(WS).run(SC + "vs_one_process", impl="torch", ep=ep)
    assert_reports_ok(results)
    efsdp, layers = WS // ep, CFG["n_layers"]
    for res in results:
        rank = res["rank"]
        expected = {f"AG {list(range(WS))}": 2 * layers + 1, f"RS {list(range(WS))}": layers + 1}
        if ep > 1:  # the token counts' all-to-all, once per MoE forward
            expected[f"A2A {list(range(rank % efsdp, WS, efsdp))}"] = layers
        if 1 < efsdp < WS:  # a one-rank group needs no collective
            experts = list(range(rank // efsdp * efsdp, (rank // efsdp + 1) * efsdp))
            expected.update({f"AG {experts}": 2 * layers, f"RS {experts}": layers})
        assert res["info"]["collectives"] == expected, res["info"]["collectives"]


@pytest.mark.parametrize("ep", [1, 2, 4])
def test_fsdp_ref_equals_upstream(dist_pools, ep):
    """Same layout, same data: fsdp_ref's losses and parameters equal torch's bitwise and
    it issues the same collectives on the same groups."""
    results = dist_pools.get(WS).run(SC + "vs_torch", ep=ep)
    refused = results[0]["info"]["refused"]
    assert refused is None, refused
    assert_reports_ok(results)


def test_ep_must_divide_experts(dist_pools):
    for err in dist_pools.get(WS).run(SC + "uneven_experts"):
        assert err and err["type"] == "ValueError", err
        assert "num_experts=6" in err["msg"] and "ep mesh size 4" in err["msg"], err
