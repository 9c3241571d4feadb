"""The task pages' code runs, on torch and on fsdp_ref, with the same results (issue 32).

* ``test_page_snippets_run_and_agree``: every Python block of every page in
  :data:`docs_site.snippets.RUN_PAGES`, run on the session's 2-rank gloo pool by
  ``tests/docs/snippet_runner.py`` with torch 2.13's ``fully_shard`` and with fsdp_ref
  (bitwise agreement, output blocks, expected refusals). One pool call per page.
* ``test_runner_*``: the runner itself fails on a snippet that raises, on results that
  differ between the two libraries, on a wrong output block and on a refusal that does
  not happen (synthetic pages, so a runner that stopped checking cannot pass).
* ``test_every_public_name_is_on_a_task_page``: every name of ``fsdp_ref.__all__``, every
  public method of ``FSDPModule`` and ``UnshardHandle``, every argument of ``fully_shard``
  and every policy field appears in the code of a task page, and every task page is
  linked from the section's index.
* parser tests: the snippet comments, and the mistakes they refuse.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import fields
from pathlib import Path

import pytest
from docs_site import snippets

import fsdp_ref
from tests.dist_harness import WorkerPool

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
RUN = "tests.docs.snippet_runner:run_page"
#: A page's snippets on two ranks, twice: generous for a loaded two-core machine.
PAGE_TIMEOUT_S = 600


@pytest.fixture(scope="module")
def pool():
    """A 2-rank pool of this module's own: the pages run in fresh processes, as a user's
    script would, not in ranks that ran the suite's scenarios before (the session's pool)."""
    with WorkerPool(world_size=2) as own:
        yield own


def _problems(results: list[dict]) -> str:
    return "\n\n".join(f"[rank {r}] {p}" for r, res in enumerate(results) for p in res["problems"])


@pytest.mark.parametrize("page", snippets.run_pages(DOCS))
def test_page_snippets_run_and_agree(pool, page):
    results = pool.run(RUN, page=page, timeout_s=PAGE_TIMEOUT_S)
    assert not any(r["problems"] for r in results), _problems(results)
    runnable = [s for s in snippets.parse((DOCS / page).read_text(encoding="utf-8"), page)
                if not s.skip and not s.preamble]
    assert sum(results[0]["ran"].values()) >= len(runnable), (results[0]["ran"], len(runnable))


# ---- the runner's own checks -------------------------------------------------------------

LIB = ("import torch.distributed.fsdp as _f\n"
       "ours = _f.fully_shard.__module__.startswith('fsdp_ref')\n")


def _page(*blocks: str) -> str:
    return "# synthetic\n\n" + "\n".join(blocks)


def _block(code: str, comment: str = "") -> str:
    head = f"<!-- snippet: {comment} -->\n" if comment else ""
    return f"{head}```python\n{code}```\n"


def _run(pool, text: str) -> list[str]:
    results = pool.run(RUN, page="synthetic.md", text=text, timeout_s=PAGE_TIMEOUT_S)
    return [p for r in results for p in r["problems"]]


def test_runner_reports_a_snippet_that_raises(pool):
    found = _run(pool, _page(_block("x = 1 / 0\n")))
    assert any("raised ZeroDivisionError" in p for p in found), found


def test_runner_reports_results_that_differ(pool):
    code = LIB + ("from torch.distributed.fsdp import fully_shard\n"
                  "model = nn.Linear(4, 4)\nfully_shard(model, mesh=mesh)\n"
                  "if ours:\n    with torch.no_grad():\n"
                  "        model.weight.mul_(1 + 1e-6)\n")
    found = _run(pool, _page(_block(code)))
    assert any("model" in p and "values differ" in p for p in found), found


def test_runner_reports_a_wrong_output_block(pool):
    found = _run(pool, _page(_block("print(rank + 41)\n"), "<!-- snippet: output -->\n"
                                   "```text\n41\n```\n"))
    assert found == [], found  # rank 0 prints 41
    found = _run(pool, _page(_block("print(rank + 42)\n"), "<!-- snippet: output -->\n"
                                   "```text\n41\n```\n"))
    assert any("the page's output block says" in p for p in found), found


def test_runner_reports_a_refusal_that_does_not_happen(pool):
    found = _run(pool, _page(_block("x = 1\n", "raises ValueError")))
    assert any("expected ValueError, nothing was raised" in p for p in found), found


def test_runner_reports_a_snippet_that_shards_with_the_wrong_library(pool):
    code = ("from fsdp_ref import fully_shard\n"
            "model = nn.Linear(4, 4)\nfully_shard(model, mesh=mesh)\n")
    found = _run(pool, _page(_block(code)))
    assert any("are fsdp_ref's in the torch run" in p for p in found), found


# ---- coverage of the public API ----------------------------------------------------------


def _task_code() -> dict[str, str]:
    """Per task page, the text of its code: fenced blocks and inline code spans."""
    out = {}
    for page in sorted((DOCS / "using").glob("*.md")):
        text = page.read_text(encoding="utf-8")
        fenced = re.findall(r"^[ \t]*```[^\n]*\n(.*?)^[ \t]*```", text, flags=re.S | re.M)
        inline = re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S))
        out[page.name] = "\n".join(fenced + inline)
    return out


def public_names() -> list[str]:
    """Every public function, class, method and policy field of fsdp_ref's API."""
    names = set(fsdp_ref.__all__)
    for cls in (fsdp_ref.FSDPModule, fsdp_ref.UnshardHandle):
        for klass in cls.__mro__:  # FSDPModule's set_* methods live in a base of its own
            if klass.__module__.startswith("fsdp_ref"):
                names |= {n for n, v in vars(klass).items()
                          if not n.startswith("_") and callable(v)}
    names |= set(inspect.signature(fsdp_ref.fully_shard).parameters) - {"module"}
    for policy in (fsdp_ref.MixedPrecisionPolicy, fsdp_ref.CPUOffloadPolicy,
                   fsdp_ref.DataParallelMeshDims, fsdp_ref.ShardPlacementResult):
        names |= {f.name for f in fields(policy)}
    return sorted(names)


def test_every_public_name_is_on_a_task_page():
    code = _task_code()
    assert len(public_names()) > 60
    missing = [n for n in public_names()
               if not any(re.search(rf"\b{re.escape(n)}\b", text) for text in code.values())]
    assert not missing, f"public names no task page shows in code: {missing}"


def test_every_task_page_is_linked_from_the_index():
    index = (DOCS / "using" / "index.md").read_text(encoding="utf-8")
    for page in sorted((DOCS / "using").glob("*.md")):
        if page.name != "index.md":
            assert f"]({page.name})" in index, f"using/index.md does not link {page.name}"


# ---- the parser ----------------------------------------------------------------------------


def test_parser_reads_the_snippet_comments():
    text = _page(
        _block("a = 1\n"),
        _block("b = a\n", "continue"),
        "<!-- snippet: output -->\n```text\nhi\n```\n",
        _block("c = 1\n", "fsdp_ref, its own function"),
        _block("d = 1\n", "raises ValueError, differs: names the module"),
        _block("e = 1\n", "skip, FSDP1 code"),
        _block("f = 1\n", "torch, fsdp_ref differs"),
        "```bash\necho not python\n```\n",
    )
    got = snippets.parse(text, "p.md")
    assert [s.code for s in got] == ["a = 1\n", "b = a\n", "c = 1\n", "d = 1\n", "e = 1\n",
                                     "f = 1\n"]
    assert got[1].cont and got[1].output == "hi\n"
    assert got[2].only_fsdp_ref == "its own function"
    assert (got[3].raises, got[3].differs) == ("ValueError", "names the module")
    assert got[4].skip == "FSDP1 code" and got[5].only_torch == "fsdp_ref differs"
    assert got[0].where == "p.md:3"


@pytest.mark.parametrize("comment, message", [
    ("contiue", "unknown snippet word"),
    ("skip", "needs a reason"),
    ("raises", "needs an exception type"),
    ("raises ValueError, because", "only 'differs: <why>' may follow"),
])
def test_parser_refuses_comments_it_cannot_read(comment, message):
    with pytest.raises(snippets.SnippetSyntaxError, match=message):
        snippets.parse(_page(_block("x = 1\n", comment)), "p.md")


def test_parser_refuses_a_comment_away_from_its_block():
    with pytest.raises(snippets.SnippetSyntaxError, match="is not right before"):
        snippets.parse("<!-- snippet: continue -->\ntext\n```python\nx\n```\n", "p.md")
