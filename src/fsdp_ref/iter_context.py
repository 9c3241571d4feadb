"""What one root's iteration shares with every FSDP state under it.

The root's lazy init hands one :class:`IterContext` to every state it finds (torch 2.13's
``FSDPStateContext``); the streams and the collectives in flight are shared separately,
through :class:`~fsdp_ref.comm_context.CommContext`. Its fields say where one forward
and backward stand: which state began the forward, which run order the prefetches
follow, whether the final callback is queued, and what the user said about this
iteration (``set_post_optim_event``, ``set_is_last_backward``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .order import Order
from .streams import Event

__all__ = ["IterContext"]


@dataclass
class IterContext:
    """Per-root state shared by every FSDP state under it (torch's ``FSDPStateContext``).

    Attributes:
        all_states: every :class:`~fsdp_ref.state.FSDPState` under the root, the root first, in the order its lazy
            init found them (the final callback visits their groups in this order).
        order: the run order of the groups and the explicit prefetch lists.
        iter_forward_root: the state whose forward began this iteration's forward (its
            post-forward ends it), ``None`` between forwards.
        post_optim_event: the event the next forward's first all-gathers wait for
            (``set_post_optim_event``), instead of everything on the compute stream.
        is_last_backward: whether this backward is the last before the optimizer step
            (``set_is_last_backward``); ``False`` keeps the iteration's order and the
            last all-gather output (its reductions still finish, as torch's do).
        final_callback_queued: whether this backward already queued the root's final
            callback (it is queued once per backward).
    """

    all_states: list[Any] = field(default_factory=list)  # FSDPState s (which import this)
    order: Order = field(default_factory=Order)
    iter_forward_root: Any = None  # an FSDPState
    post_optim_event: Event | None = None
    is_last_backward: bool = True
    final_callback_queued: bool = False
