"""The communication protocol, observed: how many collectives run per step.

Collective counts run against both implementations (upstream proves the numbers). The
order between streams is checked access by access by the race detector
(``tests/sanitizer/``), which replaced the recorder-log invariants that used to live here.
"""

from __future__ import annotations

PROTO = "tests.fsdp.scenarios_protocol"
N_BLOCKS = 3
GROUPS = N_BLOCKS + 1  # every block, plus the root (Stack's own input/output layers)


def test_collective_counts_default(pool2, impl):
    """Default: blocks reshard after forward (gathered again in backward); the root does
    not (reshard_after_forward=None means False for the root)."""
    for res in pool2.run(f"{PROTO}:collective_counts", impl=impl, n_blocks=N_BLOCKS):
        assert res["forward"].get("all_gather_single", 0) == GROUPS
        assert res["forward"].get("reduce_scatter_single", 0) == 0
        assert res["backward"].get("all_gather_single", 0) == N_BLOCKS
        assert res["backward"].get("reduce_scatter_single", 0) == GROUPS
        assert res["backward"].get("all_reduce", 0) == 0


def test_collective_counts_no_reshard(pool2, impl):
    """reshard_after_forward=False: one all-gather per group per step, none in backward."""
    results = pool2.run(
        f"{PROTO}:collective_counts", impl=impl, n_blocks=N_BLOCKS, reshard_after_forward=False
    )
    for res in results:
        assert res["forward"].get("all_gather_single", 0) == GROUPS
        assert res["backward"].get("all_gather_single", 0) == 0
        assert res["backward"].get("reduce_scatter_single", 0) == GROUPS


def test_older_torch_without_single_collectives(pool2):
    """torch 2.11 (found on GPU machines) lacks all_gather_single/reduce_scatter_single."""
    for res in pool2.run(f"{PROTO}:older_torch_collectives"):
        assert res["report"]["errors"] == []
        assert res["calls"]["all_gather_into_tensor"] > 0
        assert res["calls"]["reduce_scatter_tensor"] > 0
