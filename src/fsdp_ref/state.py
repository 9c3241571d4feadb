"""When things happen: the module hooks, the root, and the end-of-backward callback.

One :class:`FSDPState` is attached to the module(s) of each ``fully_shard`` call. It owns
its :class:`~fsdp_ref.param_group.FSDPParamGroup` s (none for a module without parameters
of its own, one per distinct mesh when ``shard_placement_fn`` places parameters on several:
one all-gather and one reduction per mesh) and drives them from hooks:

* forward pre-hook  -> lazy init (first time), root pre-forward, group pre-forward,
  explicit forward prefetch;
* forward hook      -> group post-forward, output casting, the pre-backward node on the
  outputs;
* the pre-backward node on the outputs -> group pre-backward, backward prefetch, and (once
  per backward) queue the root's final callback;
* final callback    -> post-backward for groups autograd never reached, then the end of
  the iteration: finish every reduction, forget the order (:meth:`FSDPState._end_iteration`,
  which ``reset_iter_state`` runs too, after an exception).

The *root* is the state whose module runs forward first; at that moment every
``fully_shard`` call has been made, so the root can find all states below it and give
them one shared :class:`~fsdp_ref.comm_context.CommContext` and :class:`IterContext`
(whose :class:`~fsdp_ref.order.Order` says which group to prefetch).

It is longer than the house's ~300 lines because the root's lazy initialization (which,
as torch's, adopts what the user changed since ``fully_shard`` and refuses parameters
still on the meta device), the check that ranks agree on the model, and the hooks that
PyTorch calls belong to one object that PyTorch holds per module.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.autograd import Variable
from torch.utils._pytree import tree_flatten, tree_map, tree_unflatten

from .api import MixedPrecisionPolicy
from .autograd_nodes import PreBackward
from .comm_context import CommContext
from .group_state import TrainingState
from .order import Order
from .param import meta_error
from .param_group import FSDPParamGroup
from .streams import Event

__all__ = ["FSDPState", "IterContext", "adopt_changes", "get_state"]

_STATE_ATTR = "_fsdp_ref_state"


def get_state(module: nn.Module) -> FSDPState | None:
    """The :class:`FSDPState` attached to ``module`` by ``fully_shard``, if any."""
    return module.__dict__.get(_STATE_ATTR)


@dataclass
class IterContext:
    """Per-root state shared by every FSDP state under it.

    Attributes:
        order: the run order of the groups and the explicit prefetch lists.
    """

    all_states: list[FSDPState] = field(default_factory=list)
    order: Order = field(default_factory=Order)
    iter_forward_root: FSDPState | None = None
    post_optim_event: Event | None = None
    is_last_backward: bool = True
    final_callback_queued: bool = False


class FSDPState:
    """Hooks and root logic for the module(s) of one ``fully_shard`` call.

    Args:
        modules: the module(s) passed to ``fully_shard``.
        device: compute device.
        mp_policy: the mixed precision policy (for input/output casting).

    Attributes:
        name: readable name for logs and errors: the module's class name(s) until the
            root's lazy init names it by its path in the model.
    """

    def __init__(
        self, modules: list[nn.Module], device: torch.device, mp_policy: MixedPrecisionPolicy
    ) -> None:
        self.modules = modules
        self.device = device
        self.mp_policy = mp_policy
        self.name = "+".join(type(m).__name__.removeprefix("FSDP") for m in modules)
        self.groups: list[FSDPParamGroup] = []
        self.is_root: bool | None = None
        self.iter_ctx = IterContext()
        self.comm_ctx = CommContext()
        self._modules_to_run: set[int] = set()
        for module in modules:
            module.__dict__[_STATE_ATTR] = self
            module.register_forward_pre_hook(self._pre_forward, prepend=True, with_kwargs=True)
            module.register_forward_hook(self._post_forward)
            # state_dict / load_state_dict always see the sharded DTensors.
            module.register_state_dict_pre_hook(self._reshard_for_state_dict)
            module._register_load_state_dict_pre_hook(self._reshard_for_state_dict)

    def use_comm_ctx(self, comm_ctx: CommContext) -> None:
        """Communicate on ``comm_ctx``'s streams (this state's and its groups')."""
        self.comm_ctx = comm_ctx
        for group in self.groups:
            group.comm_ctx = comm_ctx

    # ---- lazy initialization -------------------------------------------------------

    def lazy_init(self) -> None:
        """Make this state the root if no state has been initialized yet (first forward).

        As torch's lazy init: find every state below the root, adopt what the user changed
        on the modules since ``fully_shard`` (:func:`adopt_changes`), name every group and
        parameter by its path from the root, share the root's contexts, then check that
        the ranks built the same model and that no parameter is still on the meta device.
        A failure is raised only after the ranks compared what they found, so every rank
        raises (the same error, or the difference between them) and none is left waiting.
        """
        if self.is_root is not None:
            return
        if len(self.modules) > 1:
            raise RuntimeError(
                f"the first module to run forward ({self.name}) was sharded as part of a "
                "list; the root must be a single module: call fully_shard(model) on the "
                "top-level model after sharding its submodules"
            )
        self.is_root = True
        root = self.modules[0]
        states: list[FSDPState] = []
        for module in root.modules():
            state = get_state(module)
            if state is None or state in states:
                continue
            if state is not self and state.is_root is not None:
                raise RuntimeError(
                    f"fully_shard state of {state.name} was already initialized as a "
                    "root: run forward through the top-level model first (its forward "
                    "initializes every submodule), or call reset on a fresh model"
                )
            states.append(state)
        failure: Exception | None = None
        for state in states:
            try:
                adopt_changes(state.groups)
            except Exception as e:  # noqa: BLE001 (raised below, after the ranks compared)
                failure = failure or e
        fqns: dict[int, str] = {}
        for name, param in root.named_parameters(remove_duplicate=False):
            fqns.setdefault(id(param), name)
        names = {id(m): name for name, m in root.named_modules()}
        for state in states:
            path = "+".join(names.get(id(m), "?") or "root" for m in state.modules)
            state._attach(self, path, fqns)
        self.comm_ctx.lazy_init(self.device)
        self._check_ranks_agree(failure)
        if failure is not None:
            raise failure
        for group in (g for state in states for g in state.groups):
            on_meta = [p.fqn for p in group.fsdp_params if p.on_meta]
            if on_meta:
                raise meta_error(on_meta)

    def _attach(self, root: FSDPState, path: str, fqns: dict[int, str]) -> None:
        """Join ``root``'s iteration: its contexts, and names from the root's model."""
        self.is_root = self is root
        self.name = path
        if self.iter_ctx is not root.iter_ctx:
            root.iter_ctx.order.adopt(self.iter_ctx.order)  # explicit prefetch lists
        self.iter_ctx = root.iter_ctx
        self.use_comm_ctx(root.comm_ctx)
        root.iter_ctx.all_states.append(self)
        for group in self.groups:
            group.attach(root.comm_ctx, path, fqns, self.is_root)

    def _check_ranks_agree(self, failure: Exception | None = None) -> None:
        """Fail on every rank, instead of hanging, if ranks built different models: the
        parameters' names, shapes, dtypes and whether they are still on the meta device,
        and what the lazy init raised (``failure``), compared over every process group."""
        signature = [
            (p.fqn, tuple(p.layout.full_shape), str(p.param_dtype),
             "on meta" if p.on_meta else "materialized")
            for state in self.iter_ctx.all_states for group in state.groups
            for p in group.fsdp_params
        ]
        if failure is not None:
            signature.append(("lazy init", f"raised {type(failure).__name__}: {failure}"))
        digest = hashlib.sha256(repr(signature).encode()).hexdigest()
        groups: dict[int, dist.ProcessGroup] = {}
        for state in self.iter_ctx.all_states:
            for group in state.groups:
                info = group.mesh_info
                for pg in (info.shard_group, info.replicate_group):
                    if pg is not None:
                        groups.setdefault(id(pg), pg)
        for pg in groups.values():
            if pg.size() == 1 or dist.get_backend(pg) == "fake":
                continue  # nobody to compare with, or fake groups that move no data
            gathered: list[Any] = [None] * pg.size()
            dist.all_gather_object(gathered, (digest, signature), group=pg)
            for other_rank, (other_digest, other_sig) in enumerate(gathered):
                if other_digest != digest:
                    raise RuntimeError(
                        "ranks built different models; FSDP needs identical parameter names, "
                        "shapes and dtypes on every rank, all materialized (or none): "
                        + _describe_difference(signature, other_sig, other_rank)
                    )

    def _reshard_for_state_dict(self, *args: Any, **kwargs: Any) -> None:
        for group in self.groups:
            if group.holds_gathered_data:
                group.reshard()

    # ---- forward -------------------------------------------------------------------

    def set_prefetch(self, direction: str, targets: list[FSDPState]) -> None:
        """All-gather ``targets``' groups right after this state's own all-gather in
        ``direction`` (``"forward"`` or ``"backward"``), instead of the implicit choice."""
        groups = [group for target in targets for group in target.groups]
        self.iter_ctx.order.set_explicit(direction, self, groups)

    def _pre_forward(self, module: nn.Module, args: tuple, kwargs: dict):
        self.lazy_init()
        root_ctx = self.iter_ctx
        if root_ctx.iter_forward_root is None:
            root_ctx.iter_forward_root = self
            self._root_pre_forward()
        if self.mp_policy.cast_forward_inputs and self.mp_policy.param_dtype is not None:
            args, kwargs = _cast_floats((args, kwargs), self.mp_policy.param_dtype)
        if not self.groups:
            return args, kwargs
        if not self._modules_to_run:
            self._modules_to_run = {id(m) for m in self.modules}
            for group in self.groups:
                root_ctx.order.ran_pre_forward(group)
                args, kwargs = group.pre_forward(args, kwargs)
            for target in root_ctx.order.forward_targets(self, self.groups):
                target.prefetch("forward")
        else:
            # Another module of a grouped fully_shard([a, b]) after a reshard.
            for group in self.groups:
                if not group.is_unsharded:
                    args, kwargs = group.pre_forward(args, kwargs)
        return args, kwargs

    def _root_pre_forward(self) -> None:
        """Order the first all-gathers after the optimizer's writes to the shards."""
        ctx = self.comm_ctx
        ctx.lazy_init(self.device)  # new streams if the stream backend changed
        # Only the copy-in stream reads what the optimizer wrote (the shards); the
        # all-gather stream is ordered after the copy-in by an event in every unshard.
        event = self.iter_ctx.post_optim_event
        if event is not None:
            ctx.all_gather_copy_in.wait_event(event, "copy_in_after_optim_event")
            self.iter_ctx.post_optim_event = None
        else:
            ctx.all_gather_copy_in.wait_stream(ctx.current(), "copy_in_after_optim")

    def _post_forward(self, module: nn.Module, args: Any, output: Any) -> Any:
        iter_ctx = self.iter_ctx
        if self.groups:
            self._modules_to_run.discard(id(module))
            if not self._modules_to_run:
                for group in self.groups:
                    iter_ctx.order.ran_post_forward(group)
                    group.post_forward()
        if self.mp_policy.output_dtype is not None:
            output = _cast_floats(output, self.mp_policy.output_dtype)
        if torch.is_grad_enabled():
            output = _through_pre_backward(output, self._pre_backward)
        if iter_ctx.iter_forward_root is self:
            iter_ctx.iter_forward_root = None
            iter_ctx.order.end_forward()
            # The last block's all-gather output goes before the loss (torch 2.13 frees
            # it here too): nothing gathers again until backward.
            self.comm_ctx.output.release(self.comm_ctx)
        return output

    # ---- backward ------------------------------------------------------------------

    def _pre_backward(self) -> None:
        """Before this module's backward (:class:`~fsdp_ref.autograd_nodes.PreBackward`
        on its outputs): queue the root's final callback once per backward, unshard, and
        prefetch the next group backward reaches."""
        ctx = self.iter_ctx
        if not ctx.final_callback_queued:
            ctx.final_callback_queued = True
            root = next(s for s in ctx.all_states if s.is_root)
            Variable._execution_engine.queue_callback(root._final_callback)
        comm = self.comm_ctx
        early = comm.ordering.finishes_completed_early  # (the host-ordered path)
        if early:
            comm.reductions.finish_completed()  # their inputs go before this backward
        ran = [group for group in reversed(self.groups) if group.pre_backward()]
        for target in ctx.order.backward_targets(self, ran):
            if target not in self.groups:
                target.prefetch("backward")  # (host-ordered: the host waited for its
                if early:                    # all-gather; gloo may have finished older
                    comm.reductions.finish_completed()  # reductions meanwhile)

    def _final_callback(self) -> None:
        """End of backward (root only): reduce what autograd did not reach, then end the
        iteration if this was the last backward before the optimizer step."""
        ctx = self.iter_ctx
        # torch 2.13's order: states as the root found them (root first), each state's
        # groups last first; a post-accumulate-grad hook sees gradients in this order.
        groups = [g for s in ctx.all_states for g in reversed(s.groups)]
        for group in groups:
            if group.training_state != TrainingState.POST_BACKWARD and (
                group.holds_gathered_data
                or any(p.has_unsharded_grad() for p in group.fsdp_params)
            ):
                group.post_backward()
            elif group.is_unsharded and group.settings.reshard_after_backward:
                group.reshard()
            group.training_state = TrainingState.IDLE
        self._end_iteration(aborted=False)

    def reset_iter_state(self) -> None:
        """Bring every state under this root back to idle after an exception."""
        self._end_iteration(aborted=True)

    def _end_iteration(self, aborted: bool) -> None:
        """The end of an iteration, after the last backward or after an exception.

        Every backward ends with its reductions finished, their gradients in ``.grad``
        (torch 2.13 assigns them in each post-backward, ``set_is_last_backward(False)``
        or not); after an exception they are completed without being used, so no rank is
        left waiting, and every group is reset. After a backward that is not the last
        before the optimizer step (``set_is_last_backward(False)``) that is all; at the
        real end the iteration's order is forgotten and the last all-gather output is
        dropped: nothing gathered or reduced outlives the step.
        """
        ctx, comm = self.iter_ctx, self.comm_ctx
        ctx.final_callback_queued = False
        if aborted:
            ctx.iter_forward_root = None
            comm.reductions.abandon()
        for state in ctx.all_states:
            state._modules_to_run.clear()
            for group in state.groups if aborted else ():
                group.reset()
        comm.reductions.finish()  # (none left after abandon)
        if aborted or ctx.is_last_backward:
            ctx.order.end_iteration(aborted)
            comm.output.release(comm)


def adopt_changes(groups: list[FSDPParamGroup]) -> None:
    """Adopt what the user changed on the modules since ``fully_shard`` into ``groups``
    (:meth:`fsdp_ref.param.FSDPParam.adopt`: replaced parameters, extension hooks found on
    the local tensors); a group whose parameters changed drops what it cached. The one
    rule for the root's lazy init, an ``unshard()`` before it, and
    ``load_state_dict(assign=True)``."""
    for group in groups:
        if [p for p in group.fsdp_params if p.adopt()]:  # (every parameter, not any())
            group.refresh_after_apply()


def _describe_difference(mine: list, theirs: list, other_rank: int) -> str:
    here = {name: rest for name, *rest in mine}
    there = {name: rest for name, *rest in theirs}
    diffs = [
        f"{name}: {here.get(name)} here vs {there.get(name)} on group rank {other_rank}"
        for name in sorted(set(here) | set(there))
        if here.get(name) != there.get(name)
    ]
    return "; ".join(diffs[:5]) or f"parameter order differs from group rank {other_rank}"


def _through_pre_backward(output: Any, hook) -> Any:
    """``output`` with every tensor that requires grad passed through one
    :class:`~fsdp_ref.autograd_nodes.PreBackward` node that calls ``hook``."""
    if torch.is_tensor(output):  # the usual output: no pytree
        return PreBackward.run(hook, output)[0] if output.requires_grad else output
    flat, spec = tree_flatten(output)
    idx = [i for i, t in enumerate(flat) if torch.is_tensor(t) and t.requires_grad]
    if not idx:
        return output
    for i, t in zip(idx, PreBackward.run(hook, *(flat[i] for i in idx))):
        flat[i] = t
    return tree_unflatten(flat, spec)


def _cast_floats(tree: Any, dtype: torch.dtype) -> Any:
    def cast(x):
        if torch.is_tensor(x) and torch.is_floating_point(x) and x.dtype != dtype:
            return x.to(dtype)
        return x

    return tree_map(cast, tree)
