"""Stage 2, analysis: the global pass that relates the summaries of all files.

It reads only the compact summaries of stage 1 (:mod:`indexgen.extract`) and produces, for
every file, a :class:`~indexgen.analyze.context.FileContext`: what its pages say that the
file itself does not.

- :mod:`~indexgen.analyze.resolve` answers what a dotted name written in a module refers to,
  as the import system would bind it;
- :mod:`~indexgen.analyze.callgraph` resolves every call into the static call graph and
  follows it (what a call does through project functions, what a test reaches), with
  :mod:`~indexgen.analyze.dispatch` (where one call leads) and
  :mod:`~indexgen.analyze.virtual` (what a call may run instead: overrides);
- :mod:`~indexgen.analyze.project` classifies imports, inverts them, links cross-references,
  finds the tests of each module and groups files into folders;
- :mod:`~indexgen.analyze.assemble` puts each file's context together from those, a file
  at a time, in as many processes as the call graph;
- :mod:`~indexgen.analyze.builtin_names` says whether a dotted name is a builtin's;
- :mod:`~indexgen.analyze.exports` says what a module exports (its ``*`` imports of the
  build's modules too), for the pass and for both pages;
- :mod:`~indexgen.analyze.patterns` recognizes code patterns in one summary.
"""
