"""Watch the c10d collectives FSDP calls, from outside any FSDP implementation.

Both fsdp_ref and torch's ``fully_shard`` look their collectives up on ``torch.distributed``
at call time, so replacing ``torch.distributed.<name>`` for the duration of a block sees every
call either makes: the tests count them, log their order or measure their bytes, and the
same scenario proves its expected numbers on upstream.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator

import torch.distributed as dist

#: Each c10d entry point FSDP uses, and its kind: torch 2.13's names and the older ones.
KINDS = {"all_gather_single": "AG", "all_gather_into_tensor": "AG",
         "reduce_scatter_single": "RS", "reduce_scatter_tensor": "RS", "all_reduce": "AR"}


@contextlib.contextmanager
def spy_on(names: Iterable[str], on_call: Callable[[str, tuple, dict], None]) -> Iterator[None]:
    """Call ``on_call(name, args, kwargs)`` before every call of ``torch.distributed.<name>``
    while the block runs (names this torch does not have are skipped); the originals are
    restored afterwards, also after an exception."""
    originals = {name: getattr(dist, name) for name in names if hasattr(dist, name)}

    def wrap(name: str):
        def call(*args, **kwargs):
            on_call(name, args, kwargs)
            return originals[name](*args, **kwargs)

        return call

    for name in originals:
        setattr(dist, name, wrap(name))
    try:
        yield
    finally:
        for name, fn in originals.items():
            setattr(dist, name, fn)
