"""Conformance tests fsdp_ref fails today: run ``pytest tests/conformance/pending.py``.

pytest does not collect this module on its own (its name does not start with ``test_``),
so the suite stays green while the features are built; each test holds fsdp_ref to what
torch (or the unsharded model) does, and says the gap above it. When a feature lands,
move its tests into the matching ``test_*.py`` module. Nothing here is weakened to pass:
these are the comparisons the finished feature must meet.
"""

from __future__ import annotations

import pytest

from tests.conformance import harness
from tests.conformance.scenarios_errors import CASES
from tests.conformance.test_errors import outcomes  # noqa: F401 (fixture)

INIT = "tests.conformance.scenarios_init:"


# Gap (item 5): broadcast_from_rank0 writes into the live shards inside torch's
# set_model_state_dict before load_state_dict's all-or-nothing check runs, so a bad entry
# is refused after the good ones were written.
@pytest.mark.parametrize("ws", [2, 4], ids=["ws2", "ws4"])
def test_broadcast_from_rank0_is_all_or_nothing(pool):
    for per_lib in harness.run(pool, INIT + "broadcast_load", libs=("fsdp_ref",), bad=True):
        out = harness.result_of(per_lib["fsdp_ref"], "fsdp_ref", 0)
        changed = [k for k, v in out["state"].items() if v.abs().sum() > 0]
        assert out["raised"] and not changed, f"refused after writing {changed}"


# Gaps (item 7): see each case's ``gap`` in scenarios_errors.CASES.
@pytest.mark.parametrize("case", [name for name, case in CASES.items() if case.gap])
def test_refused_like_torch(outcomes, case):  # noqa: F811 (the fixture)
    harness.assert_same_refusal(outcomes[case], normalize=CASES[case].normalize)
