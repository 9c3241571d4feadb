"""The communication protocol, observed: how many collectives run, and in which order
streams wait for each other.

Collective counts run against both implementations (upstream proves the numbers). The
stream-order invariants read ``fsdp_ref``'s recorder; each invariant is one function that
walks the event list, so a violation names the event where it broke.
"""

from __future__ import annotations

import pytest

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


# ---- stream-order invariants (fsdp_ref's recorder) -------------------------------------


def compute_reads_after_all_gather_wait(trace):
    """Every copy-out (compute reading the all-gather output) of a group comes after the
    compute stream waited on that group's most recent all-gather event; and every
    forward/backward of a group runs while the group is unsharded."""
    last_ag_event, waited, unsharded = {}, set(), set()
    for i, (kind, stream, detail, group, eid) in enumerate(trace):
        if kind == "record_event" and stream == "all_gather":
            last_ag_event[group] = eid
        elif kind == "wait_event" and stream == "compute":
            waited.add(eid)
        elif kind == "copy_out":
            assert last_ag_event.get(group) in waited, f"event {i}: copy-out of {group} before wait"
            unsharded.add(group)
        elif kind == "free" and detail == "unsharded_params":
            unsharded.discard(group)
        elif kind in ("forward", "backward"):
            assert group in unsharded, f"event {i}: {kind} of {group} while sharded"


def all_gather_output_freed_after_compute(trace):
    """An all-gather output is dropped only after the copy-in stream waited on the
    compute event recorded right after that output was copied out."""
    copy_out_events, waited_by_copy_in = {}, set()
    for i, (kind, stream, detail, group, eid) in enumerate(trace):
        if kind == "record_event" and detail == "copy_out_done":
            copy_out_events.setdefault(group, []).append(eid)
        elif kind == "wait_event" and stream == "all_gather_copy_in":
            waited_by_copy_in.add(eid)
        elif kind == "free" and detail == "all_gather_output":
            assert copy_out_events.get(group), f"event {i}: free before any copy-out of {group}"
            assert copy_out_events[group][-1] in waited_by_copy_in, (
                f"event {i}: all-gather output of {group} freed before compute finished"
            )


def reduce_scatter_input_kept_until_done(trace):
    """A reduce-scatter input is released only after compute waited on the event that
    follows that reduce-scatter; the reduce-scatter itself runs after its stream waited
    for compute (the gradients were written there)."""
    rs_wait_compute = False
    in_flight: dict[str, int | None] = {}
    waited = set()
    for i, (kind, stream, detail, group, eid) in enumerate(trace):
        if kind == "wait_stream" and stream == "reduce_scatter" and detail == "compute":
            rs_wait_compute = True
        elif kind == "collective" and detail == "reduce_scatter":
            assert rs_wait_compute, (
                f"event {i}: reduce-scatter of {group} not ordered after compute"
            )
            rs_wait_compute = False
            in_flight[group] = None
        elif kind == "record_event" and detail == "reduction_done":
            in_flight[group] = eid
        elif kind == "wait_event" and stream == "compute":
            waited.add(eid)
        elif kind == "free" and detail == "reduce_scatter_input":
            assert in_flight.get(group) in waited, (
                f"event {i}: reduce-scatter input of {group} released before its reduction ended"
            )
            del in_flight[group]
    assert not in_flight, f"reduce-scatter inputs never released: {sorted(in_flight)}"


def optimizer_before_next_all_gather(trace):
    """After each optimizer step, the first all-gather copy-in happens only after the
    copy-in stream waited on the compute stream (or on a post-optimizer event)."""
    pending_optim, ordered = False, False
    for i, (kind, stream, detail, _group, _eid) in enumerate(trace):
        if kind == "optim_step":
            pending_optim, ordered = True, False
        elif stream == "all_gather_copy_in" and (
            (kind == "wait_stream" and detail == "compute")
            or (kind == "wait_event" and detail == "post_optim")
        ):
            ordered = True
        elif kind == "copy_in" and detail == "all_gather_input" and pending_optim:
            assert ordered, f"event {i}: all-gather read shards before the optimizer's writes"
            pending_optim = False


INVARIANTS = [
    compute_reads_after_all_gather_wait,
    all_gather_output_freed_after_compute,
    reduce_scatter_input_kept_until_done,
    optimizer_before_next_all_gather,
]


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"reshard_after_forward": False}, {"prefetch": True}],
    ids=["default", "no_reshard", "explicit_prefetch"],
)
def test_stream_protocol_invariants(pool2, kwargs):
    results = pool2.run(f"{PROTO}:protocol_trace", **kwargs)
    for res in results:
        trace = res["trace"]
        kinds = {k for k, *_ in trace}
        assert {"copy_in", "copy_out", "collective", "free", "wait_event"} <= kinds
        for invariant in INVARIANTS:
            invariant(trace)
        assert res["unsharded_left"] == [], "unsharded parameters alive after the step"


def _broken(trace, drop):
    return [e for e in trace if not drop(e)]


def test_invariants_catch_violations(pool2):
    """Each invariant fails on a trace with the corresponding wait removed, so a passing
    check above means something."""
    trace = pool2.run(f"{PROTO}:protocol_trace")[0]["trace"]
    cases = [
        (
            compute_reads_after_all_gather_wait,
            lambda e: e[0] == "wait_event" and e[1] == "compute" and e[2] == "all_gather_done",
        ),
        (
            all_gather_output_freed_after_compute,
            lambda e: e[0] == "wait_event" and e[1] == "all_gather_copy_in",
        ),
        (
            reduce_scatter_input_kept_until_done,
            lambda e: e[0] == "wait_event" and e[2] == "reduction_done",
        ),
        (
            optimizer_before_next_all_gather,
            lambda e: e[0] == "wait_stream" and e[1] == "all_gather_copy_in",
        ),
    ]
    for invariant, drop in cases:
        with pytest.raises(AssertionError):
            invariant(_broken(trace, drop))
