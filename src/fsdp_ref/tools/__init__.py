"""Tools for studying fsdp_ref, kept apart from the library so that ``fsdp_ref`` reads
as FSDP alone.

* :mod:`fsdp_ref.tools.simulate`: per-rank memory of ``fully_shard`` at world sizes no
  machine here has (meta tensors and a fake process group);
* :mod:`fsdp_ref.tools.memory_model`: the model it evaluates, the bytes one rank holds at
  each point of a step;
* :mod:`fsdp_ref.tools.timeline`: one recorded training step drawn per stream, and the
  figure settings every figure of the project shares.

The race detector has a package of its own: :mod:`fsdp_ref.sanitizer`.
"""
