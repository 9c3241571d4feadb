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


# Gaps (item 7): see each case's ``gap`` in scenarios_errors.CASES.
@pytest.mark.parametrize("case", [name for name, case in CASES.items() if case.gap])
def test_refused_like_torch(outcomes, case):  # noqa: F811 (the fixture)
    harness.assert_same_refusal(outcomes[case], normalize=CASES[case].normalize)
