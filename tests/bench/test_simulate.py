"""The memory model against hand-computed cases.

The model below (``vocab=10, dim=8, 2 blocks, 2 query heads, 1 kv head, ffn=12``) has,
per block, wq 8x8, wk 4x8, wv 4x8, wo 8x8, w1 12x8, w2 8x12, w3 12x8 and two norms of 8:
64+32+32+64+96+96+96+16 = 496 elements; the root has the embedding 10x8, the final norm
8 and the head 10x8: 168. Ψ = 168 + 2*496 = 1160.

Each rank's padded shard of a (d0, rest) parameter is ceil(d0 / N) * rest elements.
"""

from __future__ import annotations

import pytest

from fsdp_ref.examples.llama import LlamaConfig
from fsdp_ref.tools.simulate import simulate

CFG = LlamaConfig(vocab_size=10, dim=8, n_layers=2, n_heads=2, n_kv_heads=1, ffn_dim=12)


def test_counts_from_shapes():
    assert CFG.block_params() == 496
    assert CFG.root_params() == 168
    assert CFG.num_params() == 1160


@pytest.fixture(scope="module")
def n3():
    return simulate(CFG, 3)


def test_shards_at_three_ranks(n3):
    # block: wq 3*8, wk 2*8, wv 2*8, wo 3*8, w1 4*8, w2 3*12, w3 4*8, norms 3+3
    block = 24 + 16 + 16 + 24 + 32 + 36 + 32 + 6
    assert block == 186
    root = 4 * 8 + 3 + 4 * 8  # embedding, norm, head
    assert n3.num_params == 1160
    assert [g.numel for g in n3.groups] == [168, 496, 496]
    assert [g.shard_numel for g in n3.groups] == [root, block, block]
    assert n3.shard_numel == 67 + 2 * 186 == 439
    assert n3.padding_numel == 439 - 387  # ceil(1160 / 3) = 387


def test_bytes_at_three_ranks(n3):
    assert n3.sharded_param_bytes == 4 * 439
    assert n3.sharded_grad_bytes == 4 * 439
    assert n3.optimizer_bytes == 8 * 439
    assert n3.sharded_bytes == 16 * 439
    assert n3.zero3_bytes == pytest.approx(16 * 1160 / 3)


# Per group at N=3, bf16 compute (2 B), fp32 reduction (4 B): the root's unsharded
# parameters U 2*168 = 336, all-gather output A 2*3*67 = 402, reduce-scatter input I
# 4*3*67 = 804; a block's U 992, A 2*3*186 = 1116, I 4*3*186 = 2232, sharded gradient O
# 4*186 = 744. The root's final norm (8) and head (80) have gradients from the start of
# backward: 2*88 = 176. Always held: 4S + 8S = 12*439 = 5268.
STATE = 12 * 439
POINTS_N3 = {
    "forward, root copy-out": 402 + 336,
    "forward, block 0 copy-out": 336 + 992 + 1116,
    "forward, block 1 copy-out": 336 + 992 + 1116,
    # block 1's reduction in flight (I + O), no prefetch after block 0
    "backward, block 0": 336 + 176 + 992 + 992 + 2232 + 744,
    # block 0 prefetched (A), nothing reduced yet
    "backward, block 1": 336 + 176 + 992 + 992 + 1116,
    # every root gradient; block 0's reduction in flight; block 1's shard reduced
    "backward, root embeddings": 336 + 336 + 2232 + 744 + 744,
    "root reduce-scatter copy-in": 336 + 804 + 2 * 744,
    # every sharded gradient, and foreach AdamW's sqrt of every exp_avg_sq
    "optimizer step": 4 * 439 + 4 * 439,
}


def test_points_at_three_ranks(n3):
    assert {k: sum(v.values()) - STATE for k, v in n3.points().items()} == POINTS_N3
    assert n3.peak_point == "backward, block 0"
    assert n3.total_bytes == STATE + 5472
    assert n3.breakdown() == {"sharded state": STATE + 0, "unsharded params": 336 + 992,
                              "unsharded grads": 176 + 992, "comm buffers": 2232 + 744,
                              "temporaries": 0}
    assert n3.working_set_bytes == 5472


def test_cpu_points_at_three_ranks():
    """On CPU, ``_chunk_cat`` converts each bf16 gradient through a temporary (the largest,
    the root's 10x8 head: 2*80 B) and AdamW's per-parameter loop holds two temporaries of
    the largest shard (w2's 3x12 rows: 2*4*36 B) instead of foreach's 4S."""
    cpu = simulate(CFG, 3, device="cpu")
    sums = {k: sum(v.values()) - STATE for k, v in cpu.points().items()}
    assert sums["root reduce-scatter copy-in"] == POINTS_N3["root reduce-scatter copy-in"] + 160
    assert sums["optimizer step"] == 4 * 439 + 2 * 4 * 36
    assert cpu.total_bytes == STATE + 5472


def test_a_tied_head_adds_its_second_gradient():
    """The GPT ties its head to the token embedding: the embedding's gradient (vocab x
    dim) is alive from the head's backward on, and the embedding's backward adds a second
    one before they are summed."""
    from fsdp_ref.examples.gpt import GPTConfig

    cfg = GPTConfig(vocab_size=12, seq_len=4, dim=8, n_layers=2, n_heads=2)
    r = simulate(cfg, 4)
    assert r.root.numel == 12 * 8 + 4 * 8 + 2 * 8  # tok (= head), pos, final norm
    assert r.root.tied_numel == 12 * 8
    assert r.root.late_numel == 12 * 8 + 2 * 8  # head (tied) and final norm
    emb = r.points()["backward, root embeddings"]
    assert emb["tied second grad"] == 2 * 12 * 8


def test_more_ranks_than_rows():
    """N=16 exceeds every dim 0: each rank gets one (padded) row of every parameter, and
    the last rank holds no real data at all."""
    first = simulate(CFG, 16, rank=0)
    block = 8 + 8 + 8 + 8 + 8 + 12 + 8 + 2
    root = 8 + 1 + 8
    assert first.shard_numel == root + 2 * block == 141
    assert sum(g.local_numel for g in first.groups) == 141
    assert first.padding_numel == 141 - 73  # ceil(1160 / 16) = 73
    last = simulate(CFG, 16, rank=15)
    assert last.shard_numel == 141
    assert sum(g.local_numel for g in last.groups) == 0


def test_exact_split_has_no_padding():
    """N=2 divides every dim 0 (10, 8, 4, 12): S = Ψ / 2 and 16 S = 16 Ψ / N."""
    r = simulate(CFG, 2)
    assert r.shard_numel == 580
    assert r.padding_numel == 0
    assert r.sharded_bytes == r.zero3_bytes == 16 * 580
