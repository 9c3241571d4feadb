"""Writes the generated part of ``docs/design/conformance.md``: the options of the
pairwise matrix with their values, the constraints, the gloo limits and the case count,
from :mod:`tests.conformance.matrix_options` and :mod:`tests.conformance.matrix_cases`.

``python -m tests.conformance.matrix_doc`` rewrites the page between its markers;
``tests/conformance/test_matrix.py::test_conformance_page_is_current`` fails when the
page is stale.
"""

from __future__ import annotations

from pathlib import Path

from tests.conformance import matrix_cases
from tests.conformance.matrix_options import CONSTRAINTS, SPEC, STEPS, TORCH_LIMITS

PAGE = Path(__file__).resolve().parents[2] / "docs" / "design" / "conformance.md"
BEGIN, END = "<!-- matrix:begin -->", "<!-- matrix:end -->"


def _value(v) -> str:
    return f"`{v!r}`" if not isinstance(v, str) else f"`{v}`"


def generated() -> str:
    """The markdown between the markers."""
    cases = matrix_cases.generate()
    by_size: dict[int, int] = {}
    for case in cases:
        ws = matrix_cases.world_size(case)
        by_size[ws] = by_size.get(ws, 0) + 1
    rows = ["| Option | Values (default first) | What it drives |", "|---|---|---|"]
    rows += [f"| `{name}` | {', '.join(_value(v) for v in o.values)} | {o.what} |"
             for name, o in SPEC.items()]
    sizes = ", ".join(f"{n} on {ws} ranks" for ws, n in sorted(by_size.items()))
    lines = [
        *rows, "",
        f"**{len(cases)} cases** ({sizes}), {STEPS} optimizer steps each, cover every "
        f"pair of values of two of these {len(SPEC)} options; the full product would be "
        f"{_product():,} cases. {len(matrix_cases.PINNED)} more cases are pinned: "
        "combinations of three or more options that once differed from torch (ids "
        "`p00`, ...):", "",
        *[f"- {matrix_cases.describe(matrix_cases.pinned()[i])}: {why}"
          for i, (_, why) in enumerate(matrix_cases.PINNED)], "",
        "Constraints (combinations that are not a configuration; the generator never "
        "makes them):", "",
        *[f"- {c.why}" for c in CONSTRAINTS], "",
        "Where torch 2.13 is not the truth (one-process training is, there):", "",
        *[f"- {c.why}" + (f" (torch: `{c.raises}`)" if c.raises else "")
          for c in TORCH_LIMITS],
    ]
    return "\n".join(lines)


def _product() -> int:
    total = 1
    for o in SPEC.values():
        total *= len(o.values)
    return total


def rendered(page: str) -> str:
    """``page`` with the generated part replaced."""
    head, rest = page.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{generated()}\n{END}{tail}"


if __name__ == "__main__":
    PAGE.write_text(rendered(PAGE.read_text()))
    print(f"wrote {PAGE}")
