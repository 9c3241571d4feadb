"""fsdp_ref-specific validation: errors raised at ``fully_shard`` time with the fix named.

(Upstream checks the mixed-dtype case later, at lazy init, with an assertion; the shared
misuse cases live in ``test_misuse.py`` and run against both implementations.)
"""

from __future__ import annotations


def test_group_mixing_dtypes_needs_a_policy(pool2):
    for res in pool2.run("tests.fsdp.scenarios_validation:mixed_dtypes"):
        err = res["err"]
        assert err is not None and err["type"] == "ValueError", err
        assert "mixes parameter dtypes" in err["msg"]
        assert "MixedPrecisionPolicy(param_dtype" in err["msg"]
        # With a policy the group trains; gradients land in each parameter's own dtype.
        assert res["grad_dtypes"] == ["torch.float32", "torch.float64"]
        assert res["max_diff"] < 1e-5
