"""Stage 3, rendering: pages as pure functions of a summary, its context and the layout.

- :mod:`~indexgen.render.markdown` escapes text and makes code spans, anchors and links;
  :mod:`~indexgen.render.rst` and :mod:`~indexgen.render.docrender` turn docstrings into
  safe Markdown;
- :mod:`~indexgen.render.page` holds what both pages of a file share (the names a module
  exports are :mod:`~indexgen.analyze.exports`', which the folder page tells too);
  :mod:`~indexgen.render.keywords` writes the keyword index, :mod:`~indexgen.render.docs`
  the first sections of the analysis page, :mod:`~indexgen.render.calls` its call graph and
  :mod:`~indexgen.render.sections` the later sections;
- :mod:`~indexgen.render.folders` writes each folder's ``index.md`` and ``doc.md``.

Nothing here reads or writes files.
"""
