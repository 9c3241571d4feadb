"""The figures: the stream model (``docs_site.stream_model``) behind the design pages'
pictures, and every SVG the site shows (generated at build time or committed) being
readable in the page column, deterministic, and in step with its data."""

from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from docs_site import figures, stream_model

from fsdp_ref.tools.timeline import FIGURE_WIDTH_IN, STREAMS

REPO = Path(__file__).resolve().parents[2]
SVG = "{http://www.w3.org/2000/svg}"
#: Smallest font size in points: at the figures' natural width (1 pt = 4/3 px) 7 pt
#: shows at 9.3 px, above the browser test's 9 px floor.
MIN_PT = 7.0


@pytest.fixture(scope="module")
def site_figures() -> dict[str, str]:
    return figures.all_figures()


def _plot():
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import plot
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    return plot


def readable(svg: str) -> list[str]:
    """What keeps ``svg`` from being readable in the article column ([] when nothing)."""
    root = ET.fromstring(svg)
    problems = []
    width = root.get("width", "")
    if not width.endswith("pt") or float(width[:-2]) > FIGURE_WIDTH_IN * 72 + 0.01:
        problems.append(f"width {width!r} is not at most {FIGURE_WIDTH_IN} in")
    if root.find(f"{SVG}title") is None:
        problems.append("no <title>")
    texts = [t for t in root.iter(f"{SVG}text") if (t.text or "").strip()]
    if not texts:
        problems.append("no <text>: labels drawn as paths")
    for t in texts:
        size = re.search(r"font-size:\s*([\d.]+)px", t.get("style", ""))
        if size is None or float(size.group(1)) < MIN_PT:
            problems.append(f"text {t.text!r} at {size and size.group(1)} (< {MIN_PT} pt)")
    return problems


# ---------------------------------------------------------------- the stream model

def test_schedule_is_fifo_per_stream_and_honours_waits():
    ops = [stream_model.Op("a", "s1", "forward", 2.0), stream_model.Op("b", "s2", "all_gather", 1.0),
           stream_model.Op("c", "s2", "all_gather", 1.0, ("a",)), stream_model.Op("d", "s1", "forward", 1.0)]
    spans = {s.op.name: s for s in stream_model.schedule(ops)}
    assert (spans["b"].start, spans["b"].end) == (0.0, 1.0)
    assert spans["c"].start == 2.0 and spans["c"].waited_on == ("a",)
    assert spans["d"].start == 2.0 and spans["d"].waited_on == ()


def test_schedule_rejects_unknown_dependencies():
    with pytest.raises(ValueError):
        stream_model.schedule([stream_model.Op("a", "s", "forward", 1.0, ("later",))])


def test_iteration_model_overlaps_and_bounds_memory():
    spans = stream_model.schedule(stream_model.fsdp2_iteration(num_layers=6))
    by_name = {s.op.name: s for s in spans}
    # the all-gather of layer 2 overlaps the forward of layer 1
    assert by_name["AG2"].start < by_name["F1"].end
    # every compute op starts after the all-gather it needs
    for layer in range(1, 7):
        assert by_name[f"F{layer}"].start >= by_name[f"AG{layer}"].end
        assert by_name[f"B{layer}"].start >= by_name[f"AG{layer}b"].end
        assert by_name[f"RS{layer}"].start >= by_name[f"B{layer}"].end
    assert by_name["optim"].start >= max(s.end for s in spans if s.op.kind == "reduce_scatter")
    # unsharded layers stay bounded however deep the model is
    peak = max(count for _, count in stream_model.unsharded_layers(spans))
    assert peak <= 4
    assert stream_model.unsharded_layers(spans)[-1][1] == 0


def test_hsdp_adds_all_reduce_after_each_reduce_scatter():
    spans = {s.op.name: s for s in stream_model.schedule(stream_model.fsdp2_iteration(2, hsdp=True))}
    for layer in range(3):
        assert spans[f"AR{layer}"].start >= spans[f"RS{layer}"].end
        assert spans[f"AR{layer}"].op.stream == "all_reduce"


def test_model_uses_the_librarys_stream_names():
    ops = stream_model.fsdp2_iteration(2, hsdp=True)
    assert {op.stream for op in ops} == set(STREAMS)


def test_rendering_rejects_a_stream_the_library_does_not_have():
    spans = stream_model.schedule([stream_model.Op("a", "ag_copy_in", "copy_in", 1.0)])
    with pytest.raises(ValueError, match="unknown streams.*'ag_copy_in'"):
        figures.render_timeline(spans)


def test_phases_split_forward_from_backward():
    spans = stream_model.schedule(stream_model.fsdp2_iteration(num_layers=3))
    forward, backward = stream_model.split_phases(spans)
    assert {s.op.kind for s in forward} == {"copy_in", "all_gather", "copy_out", "forward"}
    assert {s.op.name for s in forward} >= {"F0", "F1", "F2", "F3", "AG3"}
    assert {"B0", "B3", "RS0", "RS3", "AG3b", "AG1b"} <= {s.op.name for s in backward}
    assert "optim" not in {s.op.name for s in backward}
    assert len(forward) + len(backward) == len(spans) - 1


def test_lifecycle_rows_are_the_groups_and_reshards_are_marked():
    spans = stream_model.schedule(stream_model.fsdp2_iteration(num_layers=3))
    forward, _ = stream_model.split_phases(spans)
    root = ET.fromstring(figures.render_lifecycle(forward, "t"))
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert {"R (root)", "B0", "B1", "B2"} <= set(texts)
    assert texts.count("kept") == 1  # only the root keeps its parameters after forward
    assert "fwd" in texts and "AG" in texts


def test_stream_waits_are_numbered_by_the_streams_page_table(site_figures):
    page = (REPO / "docs/design/streams.md").read_text()
    table = page[page.index("## Every wait"):]
    table = table[table.index("\n| "):].split("\n\n")[0]  # the first table only
    lines = [line for line in table.splitlines() if line.startswith("| ")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    cells = {int(row[0]): row for row in
             ([c.strip() for c in line.strip("|").split("|")] for line in lines[1:])}
    waiter_col = header.index("who waits for what")
    # the stream that waits in the model is the row's "waiter"
    stream_of = {op.kind: op.stream for op in stream_model.fsdp2_iteration(2, hsdp=True)}
    for (_, waiting_kind), number in figures.WAIT_ROWS.items():
        waiter = cells[number][waiter_col]
        assert waiter.startswith(f"`{stream_of[waiting_kind]}`"), (number, cells[number])
    svg = site_figures["figures/stream-waits.svg"]
    texts = {t.text for t in ET.fromstring(svg).iter(f"{SVG}text")}
    assert {str(n) for n in set(figures.WAIT_ROWS.values())} <= texts


# ---------------------------------------------------------------- every figure

def test_generated_figures_are_readable_deterministic_svg(site_figures):
    assert site_figures == figures.all_figures()
    for name, svg in site_figures.items():
        assert name.startswith("figures/") and name.endswith(".svg")
        assert readable(svg) == [], name


def test_stream_rows_are_named_as_the_library_names_them(site_figures):
    svg = site_figures["figures/streams.svg"]
    texts = {t.text for t in ET.fromstring(svg).iter(f"{SVG}text")}
    assert set(STREAMS) <= texts


@pytest.mark.parametrize("committed", ["docs/assets/timeline.svg", "docs/assets/benchmark.svg"])
def test_committed_figures_are_readable(committed):
    assert readable((REPO / committed).read_text()) == []


def test_benchmark_chart_is_drawn_from_the_committed_results():
    plot = _plot()
    results = plot.committed_results()
    assert len(results) >= 2
    svg = plot.render_comparison(results)
    assert svg == plot.render_comparison(results)
    texts = [t.text for t in ET.fromstring(svg).iter(f"{SVG}text")]
    # the median step time of every contender at every world size is written on its bar
    for r in results:
        for impl in ("fsdp_ref", "torch_fsdp"):
            assert f"{r['impls'][impl]['step_ms']['median']:.0f}" in texts
    stale = "stale: run python benchmarks/plot.py, then copy it to docs/assets/benchmark.svg"
    assert svg == (REPO / "benchmarks/results/compare.svg").read_text(), stale
    assert svg == (REPO / "docs/assets/benchmark.svg").read_text(), stale


def test_readable_flags_what_it_should():
    small = ('<svg xmlns="http://www.w3.org/2000/svg" width="900pt"><text '
             'style="font-size: 5px">a</text></svg>')
    problems = readable(small)
    assert any("width" in p for p in problems)
    assert any("no <title>" in p for p in problems)
    assert any("'a' at 5" in p for p in problems)
    assert any("no <text>" in p for p in readable('<svg xmlns="http://www.w3.org/2000/svg"/>'))
