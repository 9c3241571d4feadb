"""Build-time machinery of the fsdp-ref documentation site.

The site is plain MkDocs + Material; everything that is *generated* while
``mkdocs build`` runs lives in this package so that it can be tested and read
like the rest of the repository:

* :mod:`docs_site.hooks` -- the MkDocs hook module named in ``mkdocs.yml``. It
  wires the pieces below into MkDocs' event loop.
* :mod:`docs_site.navgen` -- turns the folder tree that ``indexgen`` writes
  (``docs/reference/...``) and the build-time upstream pages into navigation,
  so no generated page is ever listed by hand.
* :mod:`docs_site.apipages` -- writes one mkdocstrings page (``::: module``)
  per module of ``fsdp_ref`` and ``indexgen``.
* :mod:`docs_site.upstream` -- runs ``indexgen`` over the *installed* torch's
  ``torch/distributed/fsdp`` and pairs each ``fsdp_ref`` module with the
  upstream module it re-implements.
* :mod:`docs_site.figures` and :mod:`docs_site.stream_model` -- a tiny stream
  scheduler that models one FSDP2 training iteration, and its drawing with matplotlib
  (timeline, stream diagram).
* :mod:`docs_site.codeindex` and :mod:`docs_site.coderefs` -- what exists in the code
  (read statically, with ``ast``) and the check that every code reference on a
  hand-written page names something in it (run by ``tests/docs/test_coderefs.py``).
* :mod:`docs_site.byte_layout` -- the mixed-dtype group's byte layout, drawn from the
  library's own buffer plan.
* :mod:`docs_site.moe_figure` -- the Mixture-of-Experts page's rank grid (``ep`` and
  ``efsdp`` groups) and one block's collectives on each group.
* :mod:`docs_site.griffe_roles`, :mod:`docs_site.breaks` and :mod:`docs_site.icons` --
  rendering details: Sphinx roles in docstrings, line breaks inside code in tables, icon
  shortcodes without emoji.

Nothing here needs a GPU or the network.
"""
