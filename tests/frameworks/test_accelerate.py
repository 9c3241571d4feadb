"""accelerate + FSDP2: fsdp_ref after ``install()`` against torch's ``fully_shard``, bitwise
(losses, parameters after every step, ``get_state_dict``). See scenarios_accelerate.py."""

from __future__ import annotations

import pytest

from tests.frameworks.common import run_both

TARGET = "tests.frameworks.scenarios_accelerate:train"


@pytest.mark.parametrize("bf16,accumulation", [(False, 1), (True, 2)],
                         ids=["fp32", "bf16-reduce-fp32-accum2"])
def test_accelerate_matches_torch(pools, bf16, accumulation):
    out = run_both(pools, TARGET, bf16=bf16, accumulation=accumulation)
    for rank, r in enumerate(out["fsdp_ref"]):
        assert r["fsdp_modules"] == ["", "blocks.0", "blocks.1"]
        assert len(r["params"]) == 3 and len(r["losses"]) == 3 * accumulation
        # sync off for all but the last microbatch of each step: the accumulation path ran
        assert r["reduced"] == ([False] * (accumulation - 1) + [True]) * 3
        # FULL_STATE_DICT: the full tensors on rank 0 (offloaded), nothing on the others
        assert r["state_dict"].keys() == (r["params"][-1].keys() if rank == 0 else set())
