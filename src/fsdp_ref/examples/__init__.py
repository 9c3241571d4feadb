"""Programs that use fsdp_ref, kept apart from the library so that ``fsdp_ref`` reads as
FSDP alone.

* :mod:`fsdp_ref.examples.gpt`: a small GPT-like transformer (the demo's, the benchmarks'
  and the figures' model);
* :mod:`fsdp_ref.examples.demo`: ``torchrun --standalone --nproc_per_node 2 -m
  fsdp_ref.examples.demo`` (``make demo``) trains it with ``fully_shard``;
* :mod:`fsdp_ref.examples.llama`: a Llama-like decoder at Llama-2 sizes, the memory
  simulator's model (:mod:`fsdp_ref.tools.simulate`);
* :mod:`fsdp_ref.examples.moe`: a Mixture-of-Experts transformer with expert parallelism,
  sharded the way torchtitan shards it (experts on their own mesh).
"""
