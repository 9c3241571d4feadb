"""Scenarios run under the race detector (on every rank, by the harness)."""

from __future__ import annotations

from typing import Any

from tests.dist_harness import _resolve


def under_detector(rank: int, world_size: int, target: str, **kwargs: Any) -> dict[str, Any]:
    """Run the scenario ``target`` inside ``detect()``; return its result and the races."""
    from fsdp_ref.sanitizer import detect

    with detect(raise_on_race=False) as detector:
        result = _resolve(target)(rank, world_size, **kwargs)
    races = detector.races
    return {
        "result": result,
        "races": [r.summary() for r in races],
        "reports": [str(r) for r in races],
    }
