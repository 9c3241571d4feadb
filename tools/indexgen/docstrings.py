"""Docstring text helpers shared by extraction, the global pass and the renderers."""

from __future__ import annotations


def first_paragraph(doc: str, collapse: bool = True) -> str:
    """The first paragraph of a docstring (the text before the first blank line).

    Args:
        doc: A cleaned docstring (as :func:`inspect.cleandoc` leaves it), possibly empty.
        collapse: Join the paragraph's lines and runs of whitespace into single spaces; when
            false the paragraph keeps its line breaks.

    Returns:
        The paragraph, '' for an empty docstring.
    """
    first = doc.strip().split("\n\n", 1)[0]
    return " ".join(first.split()) if collapse else first
