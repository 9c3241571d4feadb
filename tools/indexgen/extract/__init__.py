"""Stage 1, extraction: from source files to syntax trees to summaries, one file at a time.

Nothing here knows about other files: each file is read, decoded, parsed once with
:func:`ast.parse` and described in a :class:`~indexgen.extract.model.FileSummary`, the plain
data every later stage reads.

- :mod:`~indexgen.extract.discover` finds the source files of a root (symlinks checked) and
  :mod:`~indexgen.extract.source` decodes and parses one;
- :mod:`~indexgen.extract.pipeline` runs the steps on one file:
  :mod:`~indexgen.extract.structure` (definitions, module attributes, imports),
  :mod:`~indexgen.extract.identifiers` (one walk for identifiers, calls and findings),
  :mod:`~indexgen.extract.calls` (what each call is made on, which definition makes it),
  :mod:`~indexgen.extract.handing` (what it hands its callee), :mod:`~indexgen.extract.bindings` with :mod:`~indexgen.extract.sources` (what
  the names those calls need are bound to), :mod:`~indexgen.extract.enrich` (signatures,
  labels, ``__all__``, docstrings parsed by :mod:`~indexgen.extract.docstrings`);
- :mod:`~indexgen.extract.rules` classifies calls into findings,
  :mod:`~indexgen.extract.syntax` reads small expressions, and
  :mod:`~indexgen.extract.runtime` sets the time budget and the collector for an analysis.
"""
