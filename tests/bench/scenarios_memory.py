"""Memory-accounting scenarios, run on every rank by the gloo worker pool.

``unsharded_groups``: train one step of a 4-block GPT under default ``fully_shard``
settings while :func:`fsdp_ref.recorder.record` logs the protocol, then replay the log:
``copy_out`` makes a group's parameters unsharded, ``free`` of ``unsharded_params``
frees them. Returns the replayed counts and what the model holds afterwards.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

import fsdp_ref
import fsdp_ref.recorder
from fsdp_ref.examples.gpt import GPT, GPTConfig
from fsdp_ref.state import get_state


def replay(events) -> dict:
    """Walk the recorder log and count the groups whose parameters are unsharded."""
    live: set[str] = set()
    phase = "forward"
    peak = {"forward": 0, "backward": 0}
    peak_groups: dict[str, list[str]] = {"forward": [], "backward": []}
    for ev in events:
        if ev.kind == "backward":
            phase = "backward"
        if ev.kind == "copy_out" and ev.detail == "unsharded_params":
            live.add(ev.group)
        elif ev.kind == "free" and ev.detail == "unsharded_params":
            live.discard(ev.group)
        if len(live) > peak[phase]:
            peak[phase] = len(live)
            peak_groups[phase] = sorted(live)
    return {"peak": peak, "peak_groups": peak_groups, "live_at_end": sorted(live)}


def unsharded_groups(rank: int, world_size: int, n_layers: int = 4) -> dict:
    """One recorded training step; the replayed counts and the leftover storage."""
    torch.manual_seed(0)
    cfg = GPTConfig(vocab_size=64, seq_len=16, dim=32, n_layers=n_layers, n_heads=2)
    model = GPT(cfg)
    for block in model.blocks:
        fsdp_ref.fully_shard(block)
    fsdp_ref.fully_shard(model)
    optim = torch.optim.AdamW(model.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(rank)
    tokens = torch.randint(0, cfg.vocab_size, (2, cfg.seq_len + 1), generator=gen)
    with fsdp_ref.recorder.record() as events:
        logits = model(tokens[:, :-1])
        F.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten()).backward()
        optim.step()
        optim.zero_grad()
        events = list(events)
    states = [get_state(m) for m in [*model.blocks, model]]
    leftover = {
        p.fqn: p.unsharded_param.untyped_storage().size()
        for s in states
        for g in s.groups
        for p in g.fsdp_params
        if p.unsharded_param is not None
    }
    pending = states[-1].comm_ctx.output.pending
    return {
        **replay(events),
        "unsharded_storage_bytes": leftover,
        "pending_all_gather_bytes": 0 if pending is None else pending[0].numel() * pending[0].element_size(),
        "kinds": sorted({e.kind for e in events}),
    }
