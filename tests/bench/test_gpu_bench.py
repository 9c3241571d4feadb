"""The GPU benchmark (``benchmarks/gpu.py``) without a GPU: the peak-site analysis on
hand-made traces, the schedule, the subprocess launcher, and a smoke run end to end on
CPU (toy shapes, both implementations, every case, JSON written, sites grouped).

The CUDA trace format read by ``peak_sites.cuda_events`` (``device_traces`` entries with
``action``, ``addr``, ``size`` and innermost-first ``frames``) is written here from
torch's memory-snapshot documentation; only a lent GPU checks it against the allocator.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import gpu  # noqa: E402
import peak_sites  # noqa: E402

REF, TORCH = "fsdp_ref/", "torch/distributed/fsdp/_fully_shard/"


def _frame(path: str, name: str) -> dict:
    return {"filename": f"/x/site-packages/{path}", "line": 1, "name": name}


def _snapshot(entries) -> dict:
    """A ``_snapshot()``-shaped dict: ``(action, addr, size, [(path, name), ...])``."""
    trace = [{"action": a, "addr": addr, "size": size, "stream": 0, "time_us": i,
              "frames": [_frame(p, n) for p, n in frames]}
             for i, (a, addr, size, frames) in enumerate(entries)]
    return {"segments": [], "device_traces": [trace]}


BEGIN = [("benchmarks/peak_sites.py", "mark_begin"), ("benchmarks/gpu_worker.py", "run")]
END = [("benchmarks/peak_sites.py", "mark_end"), ("benchmarks/gpu_worker.py", "run")]
AG = [(f"{REF}buffer_plan.py", "allocate"), (f"{REF}collectives.py", "all_gather_copy_in")]
TORCH_AG = [(f"{TORCH}_fsdp_collectives.py", "allocate"),
            (f"{TORCH}_fsdp_collectives.py", "foreach_all_gather")]
ADAM = [("torch/optim/adam.py", "_init_group")]


def test_the_peak_between_the_markers_and_what_is_alive_then():
    events = peak_sites.cuda_events(_snapshot([
        ("alloc", 1, 4096, ADAM),             # before the step: state
        ("alloc", 2, 9999, AG),               # before the step, freed before it: no part
        ("free_completed", 2, 9999, AG),
        ("alloc", 3, 512, BEGIN),
        ("alloc", 4, 1000, AG),
        ("alloc", 5, 3000, TORCH_AG),         # the peak: 4096 + 1000 + 3000 (+ marker)
        ("free_requested", 4, 1000, AG),      # requested is not completed
        ("free_completed", 4, 1000, AG),
        ("alloc", 6, 900, []),                # below the peak (C++ only: backward)
        ("alloc", 7, 512, END),
        ("alloc", 8, 10**6, ADAM),            # after the step: no part
    ]))
    peak, blocks = peak_sites.live_at_peak(events)
    assert peak == 4096 + 1000 + 3000
    assert sorted(size for size, _ in blocks) == [1000, 3000, 4096]
    grouped = peak_sites.group(blocks)
    assert grouped["categories"] == {"optimizer state": 4096, "all-gather output": 4000}
    sites = {s["site"]: (s["bytes"], s["count"]) for s in grouped["sites"]}
    assert sites == {"torch/optim/adam.py:1 _init_group": (4096, 1),
                     f"{REF}buffer_plan.py:1 allocate": (1000, 1),
                     f"{TORCH}_fsdp_collectives.py:1 allocate": (3000, 1)}


def test_markers_are_required():
    events = peak_sites.cuda_events(_snapshot([("alloc", 1, 512, ADAM)]))
    with pytest.raises(ValueError, match="markers not found"):
        peak_sites.live_at_peak(events)


@pytest.mark.parametrize(("frames", "kind"), [
    (AG, "all-gather output"), (TORCH_AG, "all-gather output"),
    ([(f"{TORCH}_fsdp_collectives.py", "foreach_all_gather_copy_out"),
      (f"{TORCH}_fsdp_param.py", "alloc_all_gather_outputs")], "unsharded parameters"),
    ([(f"{REF}param.py", "alloc_unsharded")], "unsharded parameters"),
    ([(f"{REF}collectives.py", "reduce_scatter_copy_in")],
     "reduce-scatter buffers and sharded gradients"),
    ([(f"{TORCH}_fsdp_collectives.py", "foreach_reduce")],
     "reduce-scatter buffers and sharded gradients"),
    ([(f"{REF}layout.py", "padded_shard"), (f"{REF}param.py", "_init_sharded")],
     "sharded parameters"),
    ([("torch/optim/adam.py", "_multi_tensor_adam")], "optimizer temporaries"),
    ([], "backward (gradients)"),
    ([("fsdp_ref/examples/gpt.py", "forward")], "forward (activations)"),
])
def test_kinds_by_the_functions_on_the_stack(frames, kind):
    (_, _, _, parsed), = peak_sites.cuda_events(_snapshot([("alloc", 1, 1, frames)]))
    assert peak_sites.category(parsed) == kind


def test_schedule_alternates_and_records_last():
    plan = gpu.schedule(["gpt_fake8", "model_check"], rounds=3, smoke=False)
    timed = [(impl, mode) for case, impl, mode in plan if case == "gpt_fake8"]
    assert timed == [("fsdp_ref", "time"), ("torch", "time"), ("torch", "time"),
                     ("fsdp_ref", "time"), ("fsdp_ref", "time"), ("torch", "time"),
                     ("fsdp_ref", "record"), ("torch", "record")]
    assert [(i, m) for c, i, m in plan if c == "model_check"] == [
        ("fsdp_ref", "record"), ("torch", "record")]


def test_a_worker_process_result_or_its_error(tmp_path, monkeypatch):
    """The subprocess launcher: the last stdout line is the result; a failed worker is
    an error entry, not the end of the benchmark."""
    ok = tmp_path / "ok.py"
    ok.write_text("import json, sys\nprint('noise')\nprint(json.dumps({'argv': sys.argv[1:]}))\n")
    monkeypatch.setattr(gpu, "WORKER", ok)
    assert gpu.launch(["--case", "x"], in_process=False, timeout_s=60) == {"argv": ["--case", "x"]}
    bad = tmp_path / "bad.py"
    bad.write_text("import sys\nsys.exit('no GPU here')\n")
    monkeypatch.setattr(gpu, "WORKER", bad)
    assert "no GPU here" in gpu.launch([], in_process=False, timeout_s=60)["error"]


def test_smoke_run_end_to_end(tmp_path):
    """Every code path of the benchmark but the subprocess (tested above) and CUDA's:
    the fake group of 8 and a real one-rank group (gloo here), timed and recorded runs,
    the memory model's rows. (The tower is the fake-group GPT at another shape; it is
    left out for time.)"""
    result = gpu.main(["--device", "cpu", "--smoke", "--in-process", "--out", str(tmp_path),
                       "--rounds", "1", "--warmup", "1", "--steps", "1",
                       "--cases", "gpt_fake8", "gpt_one_rank", "model_check"])
    assert json.loads((tmp_path / "gpu_bench.json").read_text())["runs"] == result["runs"]
    assert "| memory model |" in (tmp_path / "gpu_bench.md").read_text()
    assert [r for r in result["runs"] if "error" in r] == []
    assert len(result["runs"]) == 2 * 4 + 2
    for case, s in result["summary"].items():
        for impl in ("fsdp_ref", "torch"):
            assert s[impl]["trace_peak"] > 0, (case, impl)
            if case != "model_check":
                assert s[impl]["step_ms_median"] > 0, (case, impl)
        kinds = s["kinds_at_peak"]
        for kind in ("sharded parameters", "optimizer state"):
            assert all(kinds[kind]), (case, kind)
        if case != "gpt_one_rank":  # (a fake group of 8: the blocks are gathered)
            assert all(kinds["all-gather output"]), case
    # the two implementations hold the same kinds at the toy GPT's peak
    kinds = result["summary"]["gpt_fake8"]["kinds_at_peak"]
    assert all(a == b for a, b in kinds.values()), kinds
    assert {(r["case"], r["impl"]) for r in result["model"]} == {
        (c, i) for c in ("model_check", "gpt_fake8") for i in ("fsdp_ref", "torch")}
