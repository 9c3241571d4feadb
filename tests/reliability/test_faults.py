"""Recovery after an exception in backward on every rank (2 gloo ranks, both impls).

fsdp_ref's ``reset_iter_state()`` completes the reductions already launched, drops the
unreduced gradients and reshards, so redoing the step gives parameters bit-identical to a
run that never failed. torch's ``fully_shard`` (2.13) trains on after the same calls but
ends on different parameters; the torch case asserts what the reliability page says.
"""

from __future__ import annotations

F = "tests.reliability.scenarios_faults:"


def test_backward_exception_then_reset_is_bit_identical(pool2):
    for res in pool2.run(F + "backward_exception", impl="fsdp_ref"):
        assert [c["msg"] for c in res["caught"]] == ["injected failure in backward"]
        assert res["differ"] == [], f"differs from the clean run: {res['differ']}"


def test_backward_exception_then_reset_with_torch_differs(pool2):
    for res in pool2.run(F + "backward_exception", impl="torch"):
        assert [c["msg"] for c in res["caught"]] == ["injected failure in backward"]
        assert len(res["differ"]) == res["n_keys"]
