"""A tiny stream scheduler: the model behind the design pages' figures.

The figures are not drawings: they are the output of a discrete-event
scheduler that replays the order in which FSDP2 issues work on its streams.
Each :class:`Op` is placed on one stream; a stream runs its ops in issue
order (FIFO, like a CUDA stream) and an op additionally waits for the ops in
``deps`` to finish (like ``stream.wait_event(event)`` on an event recorded
after them). :func:`schedule` turns the ops into timed :class:`Span` objects;
:mod:`docs_site.figures` draws them.

The default workload (:func:`fsdp2_iteration`) models one training iteration
of a model whose layers were each wrapped with ``fully_shard`` and whose root
keeps its parameters after forward (``reshard_after_forward=False`` at the
root). Durations are illustrative units, not measurements; the *shape* of
the schedule (which stream waits on which, what overlaps with what, how many
layers are unsharded at once) is the point. Streams are named as the library
names them (:data:`fsdp_ref.tools.timeline.STREAMS`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "Op",
    "Span",
    "fsdp2_iteration",
    "group_name",
    "schedule",
    "split_phases",
    "unsharded_layers",
]


@dataclass(frozen=True)
class Op:
    """One unit of work issued on a stream.

    Attributes:
        name: Unique name, also used as the label drawn on the figure.
        stream: Name of the stream the op runs on, one of
            :data:`fsdp_ref.tools.timeline.STREAMS`.
        kind: Kind of work; selects the colour (see
            :data:`docs_site.figures.COLORS`).
        duration: Run time in arbitrary units.
        deps: Names of earlier ops this op waits for (event waits).
        layer: Layer the op belongs to, or ``None`` for whole-model ops.
    """

    name: str
    stream: str
    kind: str
    duration: float
    deps: tuple[str, ...] = ()
    layer: int | None = None


@dataclass(frozen=True)
class Span:
    """An op placed in time by :func:`schedule`.

    Attributes:
        op: The scheduled op.
        start: Start time.
        end: End time (``start + op.duration``).
        waited_on: Names of the deps that actually delayed the start (the
            arrows drawn on the stream diagram).
    """

    op: Op
    start: float
    end: float
    waited_on: tuple[str, ...] = field(default=())


def schedule(ops: list[Op]) -> list[Span]:
    """Place ops in time: FIFO per stream plus cross-stream event waits.

    Args:
        ops: Ops in CPU issue order. Every name in ``deps`` must refer to an
            op earlier in the list.

    Returns:
        One span per op, in the same order.

    Raises:
        ValueError: If an op depends on an unknown or later op, or names are
            not unique.
    """
    stream_free: dict[str, float] = {}
    ends: dict[str, float] = {}
    spans: list[Span] = []
    for op in ops:
        if op.name in ends:
            raise ValueError(f"duplicate op name {op.name!r}")
        missing = [d for d in op.deps if d not in ends]
        if missing:
            raise ValueError(f"{op.name!r} depends on unknown or later ops {missing}")
        ready = stream_free.get(op.stream, 0.0)
        start = max([ready] + [ends[d] for d in op.deps])
        waited = tuple(d for d in op.deps if ends[d] > ready and ends[d] == start)
        end = start + op.duration
        stream_free[op.stream] = end
        ends[op.name] = end
        spans.append(Span(op, start, end, waited))
    return spans


def fsdp2_iteration(
    num_layers: int = 4,
    forward: float = 1.0,
    backward: float = 2.0,
    copy_in: float = 0.15,
    copy_out: float = 0.15,
    all_gather: float = 0.8,
    reduce_scatter: float = 0.9,
    all_reduce: float = 0.6,
    optimizer: float = 0.8,
    hsdp: bool = False,
) -> list[Op]:
    """Ops of one FSDP2 iteration in the order FSDP2 issues them.

    Layer ``0`` is the root's own parameter group (e.g. embeddings); the root
    does not reshard after forward, so it is not all-gathered again in
    backward. Layers ``1..num_layers`` reshard after forward.

    Forward, per layer (``pre_forward``): copy-in of the ``Shard(0)`` shards
    into the flat all-gather input on the copy-in stream, the all-gather on
    the all-gather stream, then the compute stream waits for it, copies out
    into the unsharded (``Replicate()``) parameters and runs the forward.
    Because the CPU runs ahead of the GPU, layer ``i+1``'s all-gather runs
    while layer ``i`` computes (implicit forward prefetching); the copy-in of
    layer ``i+1`` waits for the copy-out of layer ``i-1``, which bounds how
    far ahead the all-gathers can run.

    Backward, per layer in reverse (``pre_backward``): copy-out of the
    layer's all-gather (already issued as a prefetch), then the all-gather of
    the previous layer is prefetched, then the backward compute. In
    ``post_backward`` the compute stream waits for the previous
    reduce-scatter (one reduce-scatter input buffer in flight by default),
    copies the unsharded ``Partial()`` gradients into the flat reduce-scatter
    input, and the reduce-scatter stream reduces them to ``Shard(0)``; with
    HSDP an all-reduce across replicas follows on its own stream. The
    optimizer step waits for the last reduction (``finalize_backward``).

    Args:
        num_layers: Number of ``fully_shard``-ed layers below the root.
        forward: Forward compute time of one layer.
        backward: Backward compute time of one layer.
        copy_in: Time to copy shards into the all-gather input buffer.
        copy_out: Time to copy the all-gather output into the parameters.
        all_gather: All-gather time of one layer.
        reduce_scatter: Reduce-scatter time of one layer.
        all_reduce: HSDP all-reduce time of one layer.
        optimizer: Optimizer step time (whole model, on shards).
        hsdp: Whether to add the replica all-reduce (2-D mesh).

    Returns:
        Ops in issue order, ready for :func:`schedule`.

    Raises:
        ValueError: If ``num_layers`` is smaller than 1.
    """
    if num_layers < 1:
        raise ValueError("num_layers must be >= 1")
    ops: list[Op] = []
    layers = list(range(num_layers + 1))

    def gather(layer: int, tag: str, *after: str) -> None:
        deps = tuple(after)
        ops.append(Op(f"CI{layer}{tag}", "all_gather_copy_in", "copy_in", copy_in, deps, layer))
        ops.append(Op(f"AG{layer}{tag}", "all_gather", "all_gather", all_gather,
                      (f"CI{layer}{tag}",), layer))

    def copy_out_op(layer: int, tag: str) -> None:
        ops.append(Op(f"CO{layer}{tag}", "compute", "copy_out", copy_out,
                      (f"AG{layer}{tag}",), layer))

    # Forward.
    for layer in layers:
        gather(layer, "", *([f"CO{layer - 2}"] if layer >= 2 else []))
        copy_out_op(layer, "")
        ops.append(Op(f"F{layer}", "compute", "forward", forward, (), layer))

    # Backward: reverse order; the root (layer 0) kept its unsharded parameters.
    last = layers[-1]
    # The all-gather streams wait for the reshard-after-forward event.
    gather(last, "b", f"F{last}")
    reductions: list[str] = []
    prev_rs: str | None = None
    for layer in reversed(layers):
        if layer >= 1:
            copy_out_op(layer, "b")
        if layer - 1 >= 1:
            gather(layer - 1, "b", f"F{layer - 1}", f"CO{layer}b")
        ops.append(Op(f"B{layer}", "compute", "backward", backward, (), layer))
        ops.append(Op(f"RC{layer}", "compute", "rs_copy_in", copy_in,
                      (prev_rs,) if prev_rs else (), layer))
        ops.append(Op(f"RS{layer}", "reduce_scatter", "reduce_scatter", reduce_scatter,
                      (f"RC{layer}",), layer))
        prev_rs = f"RS{layer}"
        reductions.append(prev_rs)
        if hsdp:
            ops.append(Op(f"AR{layer}", "all_reduce", "all_reduce", all_reduce,
                          (f"RS{layer}",), layer))
            reductions.append(f"AR{layer}")
    ops.append(Op("optim", "compute", "optimizer", optimizer, tuple(reductions[-2:]), None))
    return ops


def unsharded_layers(spans: list[Span]) -> list[tuple[float, int]]:
    """Step function of how many layers hold unsharded parameters.

    A layer's unsharded buffer is allocated when its copy-in starts and freed
    when the compute that used it ends (forward for resharding layers,
    backward otherwise). The root (layer 0) is freed only after its backward.

    Args:
        spans: Output of :func:`schedule` for :func:`fsdp2_iteration` ops.

    Returns:
        ``(time, count)`` points, sorted by time; the count holds until the
        next point.
    """
    deltas: list[tuple[float, int]] = []
    for span in spans:
        op = span.op
        if op.kind == "copy_in":
            deltas.append((span.start, +1))
        elif op.kind == "forward" and op.layer not in (None, 0):
            deltas.append((span.end, -1))
        elif op.kind == "backward":
            deltas.append((span.end, -1))
    deltas.sort(key=lambda d: (d[0], d[1]))
    points: list[tuple[float, int]] = [(0.0, 0)]
    count = 0
    for time, delta in deltas:
        count += delta
        if points and points[-1][0] == time:
            points[-1] = (time, count)
        else:
            points.append((time, count))
    return points


def group_name(layer: int | None) -> str:
    """Name of a layer's parameter group as the lifecycle page writes it.

    Layer 0 is the root's own group ``R``; layers ``1..n`` are the blocks ``B0..B(n-1)``.
    """
    if layer is None:
        return "model"
    return "R (root)" if layer == 0 else f"B{layer - 1}"


def split_phases(spans: list[Span]) -> tuple[list[Span], list[Span]]:
    """Spans of forward and of backward (without the optimizer step), in issue order.

    Backward starts with the first op that belongs to it: a backward compute or an
    all-gather issued for backward (names ending in ``b``, see :func:`fsdp2_iteration`).
    """
    start = next((i for i, s in enumerate(spans)
                  if s.op.kind == "backward" or s.op.name.endswith("b")), len(spans))
    return spans[:start], [s for s in spans[start:] if s.op.layer is not None]
