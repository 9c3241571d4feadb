"""fsdp_ref-specific validation: errors raised at ``fully_shard`` time with the fix named.

(The shared misuse cases live in ``test_misuse.py`` and run against both implementations.
A group of mixed dtypes, which upstream refuses at lazy init, trains here: see
``tests/extensions/test_mixed_dtypes.py``.)
"""

from __future__ import annotations

import pytest
import torch


@pytest.mark.parametrize("param_dtype", [None, torch.float64], ids=["own_dtypes", "policy"])
def test_group_mixing_dtypes_trains(pool2, param_dtype):
    """fp32 beside fp64 in one group (torch's fully_shard refuses it): each parameter is
    gathered in its own dtype (bytes on the wire) or in the policy's, and trains like the
    reference (within the bound of ``tests.tolerance``); gradients land in each parameter's
    own dtype."""
    results = pool2.run("tests.fsdp.scenarios_validation:mixed_dtypes", param_dtype=param_dtype)
    for res in results:
        assert res["grad_dtypes"] == ["torch.float32", "torch.float64"]
        assert res["excess"] <= 1, f"gradients {res['excess']:.3g}x the bound of tests.tolerance"
