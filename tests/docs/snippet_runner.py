"""Runs the snippets of one task page inside a worker rank, with torch and with fsdp_ref.

:func:`run_page` is the pool target (``tests/docs/test_snippets.py`` calls it on 2 gloo
ranks). A page's snippets (:mod:`docs_site.snippets`) form *chains*: a snippet and the
``continue`` snippets after it share one namespace. Each chain runs twice in the same
process, from the same preamble namespace and seed:

* as written, so ``from torch.distributed.fsdp import fully_shard`` is torch 2.13's;
* inside ``fsdp_ref.installed()``, so the same import gives fsdp_ref's (the page's
  "change the import or call ``fsdp_ref.install()``", tested).

After every snippet the runner *captures* what the namespace holds (:func:`capture`):
every module's parameters, gradients and buffers as full tensors, every tensor, number,
string and optimizer state, and how many modules each library sharded; and what the
snippet printed. The two captures must be equal **bitwise** (same dtype, shape, values,
DTensor placements), and the fsdp_ref run must have sharded with fsdp_ref only (the torch
run with torch only). A ``raises`` snippet must raise the named type with both libraries,
fsdp_ref's message starting with torch's.

The preamble on the page calls ``dist.init_process_group("gloo")``; the pool's process
group exists already, so while the preamble runs that one call is a no-op when a gloo
group is up (anything else fails). Everything else runs exactly as printed.
"""

from __future__ import annotations

import contextlib
import io
import linecache
import sys
import traceback
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
if str(REPO / "tools") not in sys.path:
    sys.path.insert(0, str(REPO / "tools"))

from docs_site import snippets as parser  # noqa: E402

from tests.docs.snippet_capture import capture, check_modules, diff  # noqa: E402

_PREAMBLE: dict[str, Any] | None = None


def _compile(snippet: parser.Snippet):
    name = f"<snippet {snippet.where}>"
    linecache.cache[name] = (len(snippet.code), None, snippet.code.splitlines(True), name)
    return compile(snippet.code, name, "exec")


def _preamble() -> dict[str, Any]:
    """The preamble's namespace, made once per process (its mesh is reused)."""
    global _PREAMBLE
    if _PREAMBLE is None:
        real = dist.init_process_group

        def already_up(backend: str | None = None, *args: Any, **kwargs: Any) -> None:
            if not dist.is_initialized() or dist.get_backend() != (backend or "gloo"):
                raise RuntimeError(f"the snippet pool runs gloo; the preamble asked {backend!r}")

        ns: dict[str, Any] = {"__name__": "__snippet__"}
        dist.init_process_group = already_up
        try:
            exec(_compile(parser.preamble(DOCS)), ns)
        finally:
            dist.init_process_group = real
        _PREAMBLE = ns
    return _PREAMBLE


def chains(page: str, text: str | None = None) -> list[list[parser.Snippet]]:
    """The page's runnable snippets grouped into chains (a snippet + its continues);
    ``text`` replaces the page's Markdown (the runner's own tests)."""
    out: list[list[parser.Snippet]] = []
    if text is None:
        text = (DOCS / page).read_text(encoding="utf-8")
    for snippet in parser.parse(text, page):
        if snippet.skip or snippet.preamble:
            continue
        if snippet.cont:
            if not out:
                raise parser.SnippetSyntaxError(f"{snippet.where}: 'continue' with no snippet before")
            out[-1].append(snippet)
        else:
            out.append([snippet])
    return out


# ---- running ---------------------------------------------------------------------------


def _run_chain(chain: list[parser.Snippet], lib: str) -> dict[str, Any]:
    """Run one chain with one library: per snippet, its capture and printed text, or the
    exception it raised (the chain stops there)."""
    import fsdp_ref

    base = _preamble()
    ns = dict(base)
    torch.manual_seed(0)
    steps: list[dict[str, Any]] = []
    switch = fsdp_ref.installed() if lib == "fsdp_ref" else contextlib.nullcontext()
    with switch:
        for snippet in chain:
            printed = io.StringIO()
            step: dict[str, Any] = {"where": snippet.where}
            # to the rank's log, which the pool attaches to a crash or a timeout
            print(f"snippet {snippet.where} [{lib}]", file=sys.stderr, flush=True)
            try:
                with contextlib.redirect_stdout(printed):
                    exec(_compile(snippet), ns)
            except Exception as e:  # noqa: BLE001 (the snippet's outcome is the result)
                step["raised"] = (type(e).__name__, str(e), traceback.format_exc(limit=-8))
            step["printed"] = printed.getvalue()
            if "raised" not in step:
                print(f"capture {snippet.where} [{lib}]", file=sys.stderr, flush=True)
                step["capture"], step["capture_problem"] = capture(ns, base)
            steps.append(step)
            if "raised" in step:
                break
    if fsdp_ref.compat.is_installed():  # a snippet called fsdp_ref.install(): undo it
        fsdp_ref.uninstall()
    return {"steps": steps}


def _judge(chain: list[parser.Snippet], runs: dict[str, dict], rank: int) -> list[str]:
    """What is wrong with one chain's runs (empty: it passed)."""
    problems: list[str] = []
    by_where = {s.where: s for s in chain}
    for lib, run in runs.items():
        for step in run["steps"]:
            snippet = by_where[step["where"]]
            if snippet.raises:
                got = step.get("raised")
                if got is None:
                    problems.append(f"{snippet.where} [{lib}]: expected {snippet.raises}, "
                                    "nothing was raised")
                elif got[0] != snippet.raises and not (lib == "fsdp_ref" and snippet.raises in
                                                        _bases(got[0])):
                    problems.append(f"{snippet.where} [{lib}]: expected {snippet.raises}, got "
                                    f"{got[0]}: {got[1]}\n{got[2]}")
            elif "raised" in step:
                t, msg, tb = step["raised"]
                problems.append(f"{snippet.where} [{lib}] raised {t}: {msg}\n{tb}")
            if step.get("capture_problem"):
                problems.append(f"{snippet.where} [{lib}]: {step['capture_problem']}")
            if "capture" in step:
                check_modules(step["capture"], lib, snippet.where, problems)
            if snippet.output is not None and rank == 0 and step["printed"] != snippet.output:
                problems.append(f"{snippet.where} [{lib}]: rank 0 printed\n{step['printed']}"
                                f"--- the page's output block says\n{snippet.output}")
    if set(runs) == {"torch", "fsdp_ref"}:
        for theirs, ours in zip(runs["torch"]["steps"], runs["fsdp_ref"]["steps"]):
            snippet = by_where[theirs["where"]]
            if theirs["printed"] != ours["printed"]:
                problems.append(f"{snippet.where}: printed differently\n--- torch\n"
                                f"{theirs['printed']}--- fsdp_ref\n{ours['printed']}")
            if snippet.raises and "raised" in theirs and "raised" in ours:
                if not snippet.differs and not ours["raised"][1].startswith(theirs["raised"][1]):
                    problems.append(f"{snippet.where}: fsdp_ref's message does not start with "
                                    f"torch's\n  torch:    {theirs['raised'][1]}\n"
                                    f"  fsdp_ref: {ours['raised'][1]}")
            if "capture" in theirs and "capture" in ours:
                diff(theirs["capture"], ours["capture"], snippet.where, problems)
    return problems


def _bases(type_name: str) -> set[str]:
    """Names of the base classes of fsdp_ref's exception ``type_name`` (a subclass of
    torch's type is allowed, as in the error table)."""
    import fsdp_ref

    cls = getattr(fsdp_ref, type_name, None)
    return {c.__name__ for c in cls.__mro__} if isinstance(cls, type) else set()


def run_page(rank: int, world_size: int, page: str, text: str | None = None) -> dict[str, Any]:
    """Pool target: run every chain of ``page`` (or of the Markdown ``text``) with both
    libraries (one only where marked); the problems found, what ran, and what rank 0's
    snippets printed."""
    problems: list[str] = []
    ran = {"torch": 0, "fsdp_ref": 0}
    printed: dict[str, str] = {}
    for chain in chains(page, text):
        libs = (["fsdp_ref"] if any(s.only_fsdp_ref for s in chain)
                else ["torch"] if any(s.only_torch for s in chain) else ["torch", "fsdp_ref"])
        if len(libs) == 1 and any(s.only_fsdp_ref for s in chain) and any(s.only_torch for s in chain):
            raise parser.SnippetSyntaxError(f"{chain[0].where}: a chain is torch-only or "
                                            "fsdp_ref-only, not both")
        runs = {lib: _run_chain(chain, lib) for lib in libs}
        for lib in libs:
            ran[lib] += len(runs[lib]["steps"])
        for step in runs[libs[-1]]["steps"]:
            printed[step["where"]] = step["printed"]
        problems += _judge(chain, runs, rank)
    return {"problems": problems, "ran": ran, "printed": printed}


def main(argv: list[str] | None = None) -> None:
    """``python -m tests.docs.snippet_runner using/train.md ...``: run pages on 2 gloo
    ranks and print what rank 0's snippets printed and every problem (for writing pages;
    the suite runs ``tests/docs/test_snippets.py``)."""
    import argparse

    from tests.dist_harness import WorkerPool

    args = argparse.ArgumentParser(description=main.__doc__)
    args.add_argument("pages", nargs="+", help="pages relative to docs/")
    pages = args.parse_args(argv).pages
    with WorkerPool(2) as pool:
        for page in pages:
            results = pool.run("tests.docs.snippet_runner:run_page", page=page, timeout_s=900)
            print(f"==== {page}: ran {results[0]['ran']}")
            for where, text in results[0]["printed"].items():
                print(f"--- {where} printed (rank 0)\n{text}", end="")
            for rank, result in enumerate(results):
                for problem in result["problems"]:
                    print(f"!!! rank {rank}: {problem}")


if __name__ == "__main__":
    main()
