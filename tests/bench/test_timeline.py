"""The committed timeline figure is what ``python -m fsdp_ref.timeline`` draws today."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from fsdp_ref.timeline import STREAMS, record_step, render_svg

COMMITTED = Path(__file__).resolve().parents[2] / "docs" / "assets" / "timeline.svg"
TITLE = ("One training step of a 4-block GPT under fsdp_ref.fully_shard "
         "(default settings), per stream, in issue order")


def test_timeline_is_deterministic_and_committed():
    events = record_step(4)
    svg = render_svg(events, TITLE)
    assert svg == render_svg(record_step(4), TITLE)
    root = ET.fromstring(svg)
    texts = {t.text for t in root.iter("{http://www.w3.org/2000/svg}text")}
    assert set(STREAMS) <= texts
    assert {"AG", "RS", "CI", "CO", "F", "B"} <= texts
    assert svg == COMMITTED.read_text(), (
        "docs/assets/timeline.svg is stale: run python -m fsdp_ref.timeline"
    )
