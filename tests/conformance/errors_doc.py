"""The table of ``docs/design/errors.md``, made by running every error case on both
libraries.

``python -m tests.conformance.errors_doc`` starts 2 gloo ranks, runs
:data:`~tests.conformance.scenarios_errors.CASES` on torch and on fsdp_ref, and rewrites
the table between the page's ``errors:begin`` / ``errors:end`` markers;
``test_errors.py`` checks that the committed page holds the table a run makes now.
"""

from __future__ import annotations

import html
import sys
from pathlib import Path
from typing import Any

from tests.conformance import harness
from tests.conformance.scenarios_errors import CASES

PAGE = Path(__file__).resolve().parents[2] / "docs" / "design" / "errors.md"
BEGIN, END = "<!-- errors:begin -->", "<!-- errors:end -->"
REFUSALS = "tests.conformance.scenarios_errors:refusals"


def outcomes(pool) -> dict[str, list[dict[str, tuple[str, Any]]]]:
    """Per case, per rank, each library's outcome (``("raised", info)`` or
    ``("ok", None)``), from one side-by-side run of every case."""
    per_rank = [{lib: harness.result_of(value, lib, r) for lib, value in rank.items()}
                for r, rank in enumerate(harness.run(pool, REFUSALS))]
    return {name: [{lib: _outcome(found[name]) for lib, found in rank.items()}
                   for rank in per_rank]
            for name in CASES}


def _outcome(info: dict | None) -> tuple[str, Any]:
    return ("raised", info) if info is not None else ("ok", None)


def _cell(text: str) -> str:
    """A whole message in one table cell, as the user's terminal shows it: a code span
    with its line breaks and tabs kept, and nothing Markdown or the table could read
    (``|``, backticks, ``<``) left unescaped."""
    if not text:
        return ""
    body = html.escape(text.strip("\n"), quote=False)
    for raw, shown in (("|", "&#124;"), ("`", "&#96;"), ("*", "&#42;"), ("_", "&#95;"),
                       ("[", "&#91;"), ("\t", "&nbsp;" * 4), ("  ", "&nbsp; "), ("\n", "<br>")):
        body = body.replace(raw, shown)
    return f"<code>{body}</code>"


def _ours(name: str, results: list[dict]) -> str:
    case = CASES[name]
    status, info = results[0]["fsdp_ref"]
    if case.gap is None:
        harness.assert_same_refusal(results, normalize=case.normalize)
        theirs = results[0]["torch"][1]["msg"]
        norm = case.normalize or (lambda m: m)
        if info["msg"] == theirs:
            return f"`{info['type']}`, torch's message exactly"
        if info["msg"].startswith(theirs):
            return (f"`{info['type']}`, torch's message, then: "
                    f"{_cell(info['msg'][len(theirs):])}")
        assert norm(info["msg"]).startswith(norm(theirs))
        return (f"`{info['type']}`, torch's wording, the quoted names counted from another "
                f"module: {_cell(info['msg'])}")
    got = "accepted" if status == "ok" else f"`{info['type']}`: {_cell(info['msg'])}"
    return f"{got} (**differs**: {case.gap})"


def table(found: dict[str, list[dict]]) -> str:
    """The markdown table: situation, torch's exception and whole message, fsdp_ref's
    (what it adds after torch's message)."""
    rows = ["| Situation | torch 2.13 raises | fsdp_ref raises |", "|---|---|---|"]
    for name, case in CASES.items():
        status, info = found[name][0]["torch"]
        theirs = ("accepted" if status == "ok"
                  else f"`{info['type']}`: {_cell(info['msg'])}")
        rows.append(f"| {case.situation} | {theirs} | {_ours(name, found[name])} |")
    return "\n".join(rows)


def main() -> None:
    """Regenerate the page's table (2 gloo ranks)."""
    from tests.dist_harness import WorkerPool

    with WorkerPool(2) as pool:
        text = table(outcomes(pool))
    page = PAGE.read_text()
    start, end = page.index(BEGIN) + len(BEGIN), page.index(END)
    PAGE.write_text(page[:start] + "\n" + text + "\n" + page[end:])
    print(f"wrote {len(CASES)} rows to {PAGE}", file=sys.stderr)


if __name__ == "__main__":
    main()
