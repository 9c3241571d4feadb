"""Stage 1e (continued): ``isinstance`` narrowing in the arguments a call's path keeps.

A path keeps a call's arguments (``item(:data)``: :func:`indexgen.extract.arguments.
handed_text`) for the global pass to tell which ``typing.overload`` stub the call matches;
inside ``if isinstance(data, Table):`` the argument is a ``Table``, and the path says so
(``item(:data@12)``) as a source bound there does (:func:`indexgen.extract.narrowing.
at_line`).  The receiver (``item``, ``x.get`` of ``x.get(:k)``) is left as it is: the
global pass narrows that itself (:func:`indexgen.analyze.dispatch.narrowed`).
"""

from __future__ import annotations

from indexgen.extract.narrowing import at_line


def narrow_arguments(calls: list, index: dict[str, int],
                     where: dict[int, dict[str, list[tuple[int, int, str]]]]) -> None:
    """Write the narrowed names in the kept arguments of ``calls`` (a summary's; ``index``:
    the definitions' places by anchor, ``where``: :func:`~indexgen.extract.narrowing.held`
    of each definition's narrowings).  A flow record's slots (after its tab) stay."""
    for k, call in enumerate(calls):
        text = call[1]
        if "(:" not in text or call[0] not in index:
            continue
        spans = where.get(index[call[0]])
        if spans:
            head, cut, rest = text.partition("(:")
            rest, tab, items = rest.partition("\t")
            found = f"{head}{cut}{at_line(rest, call[2], spans)}{tab}{items}"
            if found != text:
                calls[k] = call._replace(text=found)
