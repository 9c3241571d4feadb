"""The committed timeline figure is what ``python -m fsdp_ref.tools.timeline`` draws today, with
the streams named as the library names them."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from fsdp_ref.recorder import TraceEvent
from fsdp_ref.streams import CommStreams, Stream
from fsdp_ref.tools.timeline import STREAMS, record_step, render_svg

COMMITTED = Path(__file__).resolve().parents[2] / "docs" / "assets" / "timeline.svg"
TITLE = ("One training step of a 4-block GPT under fsdp_ref.fully_shard "
         "(default settings), per stream, in issue order")
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def events() -> list[TraceEvent]:
    return record_step(4)


def test_stream_vocabulary_is_comm_contexts_attribute_names():
    ctx = CommStreams()
    side = {name: value for name, value in vars(ctx).items() if isinstance(value, Stream)}
    assert side, "CommStreams has no Stream attributes"
    # one vocabulary: a stream's name is the attribute that holds it
    assert all(stream.name == name for name, stream in side.items())
    assert STREAMS[0] == ctx.current().name == "compute"
    assert list(STREAMS[1:]) == list(side)


def test_timeline_is_deterministic_and_committed(events):
    assert {ev.stream for ev in events} <= set(STREAMS)
    svg = render_svg(events, TITLE)
    assert svg == render_svg(record_step(4), TITLE)
    root = ET.fromstring(svg)
    texts = {(t.text or "").strip() for t in root.iter(f"{SVG}text")}
    assert {ev.stream for ev in events} <= texts  # one row per stream used, named as logged
    assert {"AG", "RS", "CI", "CO", "F", "B", "x"} <= texts
    assert set(g for g in {ev.group for ev in events} if g) <= texts  # legend names groups
    assert svg == COMMITTED.read_text(), (
        "docs/assets/timeline.svg is stale: run python -m fsdp_ref.tools.timeline"
    )


def test_strips_keep_issue_order_and_split_forward_from_backward(events):
    root = ET.fromstring(render_svg(events, TITLE))
    titles = [t.text for t in root.iter(f"{SVG}text") if t.text and f" of {len(events)}" in t.text]
    assert len(titles) >= 2
    spans = []
    for title in titles:
        phase, steps = title.split(": steps ")
        first, last = steps.split(" of ")[0].split("–")
        spans.append((phase, int(first), int(last)))
    # consecutive, covering every event once, in order
    assert spans[0][1] == 1 and spans[-1][2] == len(events)
    assert all(b[1] == a[2] + 1 for a, b in zip(spans, spans[1:]))
    first_backward = next(i for i, ev in enumerate(events) if ev.kind == "backward") + 1
    assert any(start == first_backward for _, start, _ in spans)
    assert all(phase == "forward" for phase, start, _ in spans if start < first_backward)


def test_unknown_stream_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown streams.*'copy_engine'"):
        render_svg([TraceEvent("copy_in", "copy_engine", "x", "g")])
