"""The call graph of the pages against what a real multi-rank fsdp_ref run calls (issue 21).

Two gloo ranks of the test harness's pool train small models with FSDP, HSDP, explicit
prefetching, an int ``reshard_after_forward``, mixed precision, CPU offload, accumulation
without synchronization, a reset after an exception and state dicts
(``trace_workload.py``), recording every call from one function of ``src/fsdp_ref`` to
another with :func:`sys.setprofile`.  The pages of the current sources are built here, so the
test follows the code as it changes; every observed call must be on the caller's "Calls" and
on the callee's "Called by" (at least 95% each way), leaving out only the calls the language
makes implicitly (``trace_recall.py``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from indexgen import Config, build
from trace_recall import figures, page_edges, truth

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
GOAL = 0.95


def test_pages_list_the_calls_a_multi_rank_run_makes(pool2, tmp_path):
    observed = {tuple(e) for rank in pool2.run("tests.indexgen.trace_workload:traced_fsdp",
                                               folder=str(SRC / "fsdp_ref"))
                for e in rank}
    true, left_out = truth(SRC, observed)
    build(Config(roots=[SRC], out=tmp_path / "out", base=ROOT, jobs=1))
    calls, callers = page_edges(SRC, tmp_path / "out")
    found = figures(true, calls, callers)
    found["left_out"] = left_out
    if os.environ.get("INDEXGEN_TRACE_FIGURES"):  # for docs/guides/indexgen.md
        Path(os.environ["INDEXGEN_TRACE_FIGURES"]).write_text(json.dumps(
            {**found, "missing_calls": sorted(true - calls),
             "missing_called_by": sorted(true - callers)}, indent=2))
    assert found["observed"] > 150, found  # the workload ran, through the project's code
    missing = sorted(true - calls)
    assert found["calls_recall"] >= GOAL, (found, missing[:10])
    assert found["called_by_recall"] >= GOAL, (found, sorted(true - callers)[:10])
