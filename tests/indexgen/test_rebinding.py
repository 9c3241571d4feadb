"""A name an assignment rebinds from itself (``fn = wrap(fn)``) is renamed in what the calls
of that statement hand on, on every line of the statement and on no other line
(:func:`indexgen.extract.rebinding.split_rebound`, which looks only at the places on the
statement's lines).  The expected records are read off the source below by hand: the
rebound name is ``fn·L`` in the calls that lie within the statement starting on line L."""

from __future__ import annotations

from indexgen.extract.pipeline import extract_source

SOURCE = b'''\
def wrap(func):
    return func


def install(fn, other):
    fn = (
        wrap(other,
             fn))
    fn = wrap(fn)
    other = wrap(other)
    keep(fn)
    return fn
'''


def _flows() -> dict[int, str]:
    summary = extract_source(SOURCE, "r", "m.py", "m", 10**6)
    return {c.line: c.text for c in summary.calls
            if c.caller == "sym-install" and c.text.startswith("<")}


def test_a_statement_over_several_lines_renames_its_call_below_its_first_line():
    """The statement of lines 6-8 hands ``fn`` to ``wrap`` from line 7: its ``fn·6``;
    ``other``, which it does not rebind, keeps its name."""
    assert _flows()[7] == "<wrap\t0=other,1=fn·6,#=2"


def test_each_rebinding_statement_renames_its_own_line_only():
    flows = _flows()
    assert flows[9] == "<wrap\t0=fn·9,#=1"
    assert flows[10] == "<wrap\t0=other·10,#=1"
    assert flows[11] == "<keep\t0=fn,#=1"  # no rebinding on line 11: the name as it is


def test_the_renamed_names_get_the_other_sources_of_the_name():
    """``fn·6`` is what ``fn`` was before line 6: the parameter, never ``wrap()``."""
    summary = extract_source(SOURCE, "r", "m.py", "m", 10**6)
    names = next(d for d in summary.definitions if d.qualname == "install").names
    assert names["fn·6"] == names["fn·9"] == ["<0:fn"]
    assert names["other·10"] == ["<1:other"]
