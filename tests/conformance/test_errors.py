"""The error table (issue 23 item 7): fsdp_ref refuses what torch refuses with torch's
exception type (or a subclass) and a message that starts with torch's, on 2 gloo ranks;
and ``docs/design/errors.md`` shows what both libraries raise today.

Every case of :data:`~tests.conformance.scenarios_errors.CASES` runs once per library in
one worker call; the cases fsdp_ref does not match yet (their ``gap``) are held to
torch's behaviour in ``pending.py``.
"""

from __future__ import annotations

import pytest

from tests.conformance import errors_doc, harness
from tests.conformance.scenarios_errors import CASES

CONFORMING = [name for name, case in CASES.items() if case.gap is None]


@pytest.fixture(scope="module")
def outcomes(dist_pools):
    """``{case: per-rank [{lib: ("raised", info) or ("ok", None)}]}`` at 2 ranks."""
    return errors_doc.outcomes(dist_pools.get(2))


@pytest.mark.parametrize("case", CONFORMING)
def test_refused_like_torch(outcomes, case):
    both = harness.assert_same_refusal(outcomes[case], normalize=CASES[case].normalize)
    if CASES[case].exact:
        assert both["actual"]["msg"] == both["expected"]["msg"], both


def test_error_table_page_is_current(outcomes):
    """The page's table is what the libraries raise now (regenerate it with
    ``python -m tests.conformance.errors_doc`` when either changes)."""
    page = errors_doc.PAGE.read_text()
    table = errors_doc.table(outcomes)
    assert table in page, (
        "docs/design/errors.md is stale; run `.venv/bin/python -m "
        "tests.conformance.errors_doc` and review the diff")
