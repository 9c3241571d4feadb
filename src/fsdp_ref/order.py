"""The order groups run in, and which group to all-gather ahead of the one running now.

FSDP hides a group's all-gather behind the compute of the group before it, so it must
know which group comes next. One :class:`Order` per root records it, and is the only
place that does. The first two choices below are the *implicit prefetch* (one meaning
in code and docs: ``docs/design/index.md#implicit-prefetch``); torch 2.13 has the second
only:

* **forward, implicit**: the group that ran forward right after this one in the
  *previous* forward (the first iteration has no order yet and prefetches nothing);
* **backward, implicit**: the group that ran its post-forward right before this one in
  this iteration (backward visits groups in reverse); a group that ran forward twice
  (a shared block) is matched with its own runs, last first;
* **explicit**: the lists given to ``set_modules_to_forward_prefetch`` /
  ``set_modules_to_backward_prefetch``, which replace the implicit choice for their
  module.

Who asks: :mod:`fsdp_ref.state`'s hooks, right after the running group's own all-gather.
What prefetching means for a group (and when it declines) is
:meth:`fsdp_ref.param_group.FSDPParamGroup.prefetch`.
"""

from __future__ import annotations

from .param_group import FSDPParamGroup

__all__ = ["Order"]


class Order:
    """The run order of the groups under one root, and the explicit prefetch lists.

    Explicit lists are keyed by the ``FSDPState`` (any hashable source) whose hooks ask,
    so that a module without parameters of its own can still prefetch others.
    """

    def __init__(self) -> None:
        self.forward: list[FSDPParamGroup] = []
        self.last_forward: list[FSDPParamGroup] = []
        self.post_forward: list[FSDPParamGroup] = []
        self._post_forward_at: dict[FSDPParamGroup, list[int]] = {}
        self.explicit: dict[str, dict[object, list[FSDPParamGroup]]] = {
            "forward": {}, "backward": {},
        }

    # ---- recording ---------------------------------------------------------------

    def ran_pre_forward(self, group: FSDPParamGroup) -> None:
        """``group`` is unsharding for its forward (the order the next forward's implicit
        prefetch follows)."""
        self.forward.append(group)

    def ran_post_forward(self, group: FSDPParamGroup) -> None:
        """``group`` finished its forward (the order of this backward's prefetch)."""
        self._post_forward_at.setdefault(group, []).append(len(self.post_forward))
        self.post_forward.append(group)

    def end_forward(self) -> None:
        """The root's forward is over: its order drives the next forward's prefetch."""
        self.last_forward, self.forward = self.forward, []

    def end_iteration(self, aborted: bool) -> None:
        """Forget this iteration's post-forward order (and, after an exception, the
        partial forward order too)."""
        self.post_forward.clear()
        self._post_forward_at.clear()
        if aborted:
            self.forward = []

    # ---- prefetch targets ----------------------------------------------------------

    def set_explicit(self, direction: str, source: object,
                     targets: list[FSDPParamGroup]) -> None:
        """Prefetch ``targets`` after ``source``'s all-gather in ``direction``
        (``"forward"`` or ``"backward"``) instead of the implicit choice."""
        self.explicit[direction][source] = targets

    def adopt(self, other: Order) -> None:
        """Take over the explicit lists set on ``other`` before the root's lazy init."""
        for direction, lists in other.explicit.items():
            self.explicit[direction].update(lists)

    def forward_targets(self, source: object, groups: list[FSDPParamGroup]
                        ) -> list[FSDPParamGroup]:
        """What to prefetch after ``groups`` (``source``'s) unsharded for forward."""
        explicit = self.explicit["forward"].get(source)
        if explicit:
            return explicit
        targets = []
        for group in groups:
            if group in self.last_forward:
                index = self.last_forward.index(group)
                if index + 1 < len(self.last_forward) and self.last_forward[index + 1] is not group:
                    targets.append(self.last_forward[index + 1])
        return targets

    def backward_targets(self, source: object, ran: list[FSDPParamGroup]
                         ) -> list[FSDPParamGroup]:
        """What to prefetch after ``source``'s pre-backward: its explicit list, else for
        each group whose pre-backward ``ran`` now (once per backward; that run is
        consumed), the group that ran post-forward just before its latest run."""
        explicit = self.explicit["backward"].get(source)
        if explicit:
            return explicit
        targets = []
        for group in ran:
            runs = self._post_forward_at.get(group)
            if runs:
                index = runs.pop()
                if index > 0:
                    targets.append(self.post_forward[index - 1])
        return targets
