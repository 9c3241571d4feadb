"""Training parity at 2 and 4 gloo ranks.

Each rank trains on its slice of every batch; the result must match a single-process
model trained on the full batch (SGD unless noted, fp32), within the bound that
``tests.tolerance`` derives from the model's sizes, the batch and the step: per-step loss
(averaged over ranks), every gradient (``full_tensor()``) and the final parameters.
The AdamW tests compare against upstream ``fully_shard`` run in the same rank process,
bitwise.
"""

from __future__ import annotations

import pytest

from tests.fsdp.common import assert_reports_ok

REF = "tests.fsdp.scenarios_parity:vs_reference"
UPSTREAM = "tests.fsdp.scenarios_parity:vs_torch"


def run_ok(pool, target, **kwargs):
    results = pool.run(target, **kwargs)
    assert_reports_ok(results)
    return results


@pytest.mark.parametrize("nested", [False, True], ids=["root_only", "nested"])
def test_mlp(pool, impl, nested):
    run_ok(pool, REF, impl=impl, model="mlp", nested=nested)


def test_nested_blocks(pool, impl):
    run_ok(pool, REF, impl=impl, model="stack", steps=4)


def test_uneven_shapes(pool, impl):
    """Linear(7, 13), Linear(13, 5), a bias of 5 and a (3, 13) weight: no dim divides
    the world size."""
    run_ok(pool, REF, impl=impl, model="uneven", steps=4)


def test_gpt_tied_embedding(pool, impl):
    """Tiny GPT: embedding, causal attention, MLP, LayerNorm, lm-head tied to the
    embedding; each block sharded, then the root."""
    run_ok(pool, REF, impl=impl, model="gpt")


@pytest.mark.parametrize("model", ["gpt", "stack"])
def test_activation_checkpointing(pool, impl, model):
    run_ok(pool, REF, impl=impl, model=model, model_kwargs={"checkpoint": True})


RESHARD_CASES = [
    pytest.param(2, True, id="ws2-true"),
    pytest.param(2, False, id="ws2-false"),
    pytest.param(2, None, id="ws2-none"),
    pytest.param(2, 1, id="ws2-int1"),
    pytest.param(2, 2, id="ws2-int2_world"),
    pytest.param(4, True, id="ws4-true"),
    pytest.param(4, False, id="ws4-false"),
    pytest.param(4, None, id="ws4-none"),
    pytest.param(4, 2, id="ws4-int2"),
    pytest.param(4, 1, id="ws4-int1"),
    pytest.param(4, 4, id="ws4-int4_world"),
]


@pytest.mark.parametrize(("ws", "reshard_after_forward"), RESHARD_CASES)
def test_reshard_after_forward(pool, impl, reshard_after_forward):
    """Every mode, on every block and the root. Upstream accepts the ints 1 (warns,
    behaves as False) and the world size (behaves as True)."""
    run_ok(pool, REF, impl=impl, model="stack", reshard_after_forward=reshard_after_forward)


@pytest.mark.parametrize("nested", [False, True], ids=["root_only", "nested"])
def test_parameter_unused_in_a_step(pool, impl, nested):
    """A branch (its own group when nested) is skipped on odd steps: its grads stay None
    and the other parameters still match."""
    run_ok(pool, REF, impl=impl, model="unused", nested=nested, alternate_unused=True, steps=4)


@pytest.mark.parametrize("model", ["stack", "gpt"])
def test_two_forwards_one_backward(pool, impl, model):
    run_ok(pool, REF, impl=impl, model=model, two_forwards=True)


@pytest.mark.parametrize(
    ("accum", "microbatches"),
    [("sync", 2), ("no_sync", 3), ("no_sync_last", 2)],
    ids=["sync_every_micro", "requires_gradient_sync_false", "plus_is_last_backward_false"],
)
def test_gradient_accumulation(pool, impl, accum, microbatches):
    run_ok(pool, REF, impl=impl, model="stack", accum=accum, microbatches=microbatches)


def test_explicit_prefetch(pool, impl):
    """set_modules_to_forward_prefetch (two modules ahead) and
    set_modules_to_backward_prefetch on every block and the root."""
    run_ok(pool, REF, impl=impl, model="stack", prefetch=True, steps=3)


@pytest.mark.parametrize("fail_at_step", [0, 2])
def test_recovery_after_exception(pool, impl, fail_at_step):
    """A block raises mid-forward; reset_iter_state() on the root; the step is redone
    and training still matches the reference."""
    run_ok(pool, REF, impl=impl, model="stack", fail_at_step=fail_at_step, steps=4)


def test_clip_grad_norm(pool, impl):
    run_ok(pool, REF, impl=impl, model="stack", clip=0.05)


def test_list_group_training(pool, impl):
    """fully_shard([block0, block1]) as one group, then the rest; trains like the reference."""
    run_ok(pool, REF, impl=impl, model="stack", list_group=True)


OPTIMIZERS = (
    "sgd_momentum",
    "adam",
    "adamw",
    "adagrad",
    "rmsprop",
    "adamax",
    "nadam",
    "radam",
    "adadelta",
)


def test_any_optimizer(pool):
    """Each optimizer trains fsdp_ref's sharded MLP exactly like torch's ``fully_shard``
    does (scenarios_parity.optimizers says why not against one process; torch against
    itself would prove nothing)."""
    results = pool.run(
        "tests.fsdp.scenarios_parity:optimizers", impl="fsdp_ref", names=OPTIMIZERS, steps=2
    )
    assert_reports_ok([r for per_rank in results for r in per_rank])


@pytest.mark.parametrize(
    ("model", "kwargs"),
    [
        ("gpt", {}),
        ("gpt", {"model_kwargs": {"checkpoint": True}, "reshard_after_forward": False}),
        ("stack", {}),
        ("uneven", {"nested": True}),
        ("mlp", {"nested": False}),
    ],
    ids=["gpt", "gpt_ckpt_no_reshard", "stack", "uneven", "mlp_root_only"],
)
def test_adamw_matches_upstream_fully_shard(pool, impl, model, kwargs):
    run_ok(pool, UPSTREAM, impl=impl, model=model, **kwargs)
