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
    # bf16 root + two blocks; bf16 root + one block of gradients
    assert n3.unsharded_param_bytes == 2 * 168 + 2 * 2 * 496
    assert n3.unsharded_grad_bytes == 2 * 168 + 2 * 496
    # all-gather output (bf16) and reduce-scatter input (fp32) of one padded block
    assert n3.comm_buffer_bytes == 3 * 186 * (2 + 4)
    assert n3.total_bytes == 16 * 439 + 2320 + 1328 + 3348


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
