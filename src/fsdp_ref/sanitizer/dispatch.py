"""Every aten op as a kernel: its reads, writes and allocations, from the op's schema.

:class:`AccessMode` is a ``TorchDispatchMode``: it sees each aten op (after autograd, so
backward kernels too) and tells the engine which buffers the op reads and writes, on
which stream. The rules are CSAN's, by schema:

* an argument annotated ``Tensor(a!)`` is **written**; one annotated ``Tensor(a)`` (a
  view) is **metadata only**; any other tensor argument is **read**; factory functions
  (``empty_like``, ``new_zeros``...) read only metadata;
* a returned tensor without an alias annotation is new memory, **allocated** on the
  stream and **written** by the kernel;
* c10d collectives carry no annotations: their ``output*`` arguments (and the
  ``tensors`` of in-place collectives such as ``allreduce_``) are written, the rest read;
* ``.item()`` (``_local_scalar_dense``) reads, then the host waits for the stream;
* ops a collective's backend runs inside it (its temporaries), and ops on other threads,
  are not kernels of the program: skipped.

Tensor subclasses (``DTensor``, quantized weights...) are not tracked themselves: the mode
returns ``NotImplemented``, the subclass runs its own dispatch, and the ops it issues on
its inner plain tensors come back here. Fake and meta tensors hold no memory and are
skipped.

The stream is the virtual device's current stream, or the host for an op whose tensors
are all host memory (the optimizer under CPU offload), except a device transfer
(``_to_copy``), which is a kernel on the current stream.

``untyped_storage().resize_()`` (how FSDP frees and re-allocates unsharded parameters)
is not an aten op; :func:`track_storage_resize` reports it as a free and an allocation.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import torch
from torch._subclasses.fake_tensor import FakeTensor
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from .engine import HOST, Buffer, Engine, is_factory, zip_arguments
from .virtual import VirtualDevice

__all__ = ["AccessMode", "track_storage_resize"]

aten = torch.ops.aten
_UNTRACKED = {aten.record_stream.default}
_NO_DISPATCH = torch._C._disabled_torch_dispatch_impl  # plain tensors and nn.Parameter
# Device transfers run on a stream even when they only read host memory (host to device).
_TRANSFERS = {aten._to_copy.default}


def _tensors(value: Any) -> list[torch.Tensor]:
    """The plain tensors in ``value`` that hold memory (subclasses are wrappers: their
    inner tensors are seen when the subclass dispatches on them)."""
    return [
        t for t in tree_leaves(value)
        if isinstance(t, torch.Tensor)
        and type(t).__torch_dispatch__ is _NO_DISPATCH
        and t.device.type != "meta"
        and t.layout == torch.strided
    ]


class AccessMode(TorchDispatchMode):
    """Report each aten op's accesses to ``engine``, on ``device``'s current stream.

    ``host_ops=False`` (the CPU path, where the compute stream *is* the host thread)
    puts ops on host memory on the current stream too.
    """

    def __init__(self, engine: Engine, device: VirtualDevice, host_ops: bool = True) -> None:
        super().__init__()
        self.engine = engine
        self.device = device
        self.host_ops = host_ops
        self._thread = threading.get_ident()
        self._in_collective = False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        subclasses = [t for t in types if t.__torch_dispatch__ is not _NO_DISPATCH]
        if subclasses:
            if any(issubclass(t, FakeTensor) for t in subclasses):
                return func(*args, **kwargs)
            return NotImplemented  # let the subclass dispatch; its inner ops come back
        if (
            func in _UNTRACKED
            or self._in_collective
            or (self.engine.in_collective_call and func.namespace != "c10d")
            or self._foreign_thread()
        ):
            # A collective is one kernel: the ops its backend runs around it (temporaries,
            # the copy-out gloo does in Work.wait(), work on the backend's own thread)
            # are its implementation.
            return func(*args, **kwargs)
        accessed = self._inputs(func, args, kwargs)
        self._in_collective = func.namespace == "c10d"
        try:
            out = func(*args, **kwargs)
        finally:
            self._in_collective = False
        self._launch(func, accessed, out)
        if func is aten._local_scalar_dense.default or (
            # a blocking copy into host memory returns once the copy is done
            func in _TRANSFERS and not kwargs.get("non_blocking", False)
            and self.device.real_module is not None and out.is_cpu
        ):
            self.engine.host_waits_stream(self.device.current.sid)
        return out

    def _foreign_thread(self) -> bool:
        """Whether the op runs on a thread of a backend (gloo's worker), not the program's:
        the thread that started the detector, or an autograd engine thread running the
        backward it called (on a GPU, backward runs on a device thread of its own)."""
        if threading.get_ident() == self._thread:
            return False
        return torch._C._current_graph_task_id() == -1

    def _inputs(self, func, args, kwargs) -> list[tuple[torch.Tensor, str, bool]]:
        """``(tensor, argument name, written)`` for every tensor the op accesses."""
        schema = func._schema
        found = []
        if func.namespace == "c10d":
            sending = "send" in schema.name
            for argument, value in zip_arguments(schema, args, kwargs):
                name = argument.name
                written = name.startswith("output") or (name == "tensors" and not sending)
                found += [(t, name, written) for t in _tensors(value)]
            return found
        factory = is_factory(schema.name.split("::")[-1])
        for argument, value in zip_arguments(schema, args, kwargs):
            info = argument.alias_info
            written = info is not None and info.is_write
            if written or not (factory or info is not None):
                found += [(t, argument.name, written) for t in _tensors(value)]
        return found

    def _launch(self, func, accessed, out) -> None:
        engine, stream = self.engine, self.device.current.sid
        buffers: dict[int, Buffer] = {}
        reads: dict[int, list[str]] = {}
        writes: dict[int, list[str]] = {}
        for t, name, written in accessed:
            buf = self._buffer(t, stream, func, fresh=False)
            if buf is not None:
                buffers[buf.uid] = buf
                (writes if written else reads).setdefault(buf.uid, []).append(name)
        returns = func._schema.returns
        values = out if len(returns) > 1 else (out,)
        new = [t for ret, value in zip(returns, values)
               if ret.alias_info is None  # else a view or the in-place argument: seen above
               for t in _tensors(value)]
        if self.host_ops and func not in _TRANSFERS and (
            all(b.host for b in buffers.values()) if buffers
            # a factory op (torch.empty while the model is built) making host memory
            else new and self.device.real_module is not None and all(t.is_cpu for t in new)
        ):
            stream = HOST
        outputs = set()
        for t in new:
            buf = self._buffer(t, stream, func, fresh=True)
            if buf is not None:
                buf.host = buf.host or stream == HOST
                buffers[buf.uid] = buf
                writes.setdefault(buf.uid, []).append("output")
                outputs.add(buf.uid)
        if not buffers:
            return
        for buf in buffers.values():
            engine.mark_cross_stream(buf, stream)
        engine.launch(stream, reads, writes, outputs, str(func._schema), buffers)

    def _buffer(self, t: torch.Tensor, stream: int, func, *, fresh: bool) -> Buffer | None:
        storage = t.untyped_storage()
        if storage.data_ptr() == 0:
            return None  # no memory, nothing to race on
        buf = self.engine.lookup(storage)
        if buf is None:
            buf = self.engine.allocate(storage, stream, str(func._schema), seen=fresh)
            if t.is_cpu and self.device.real_module is not None:
                self.engine.mark_host(buf)  # on a real accelerator, CPU memory is host memory
        return buf


@contextlib.contextmanager
def track_storage_resize(engine: Engine, device: VirtualDevice) -> Iterator[None]:
    """Report ``UntypedStorage.resize_`` as a free of the old memory and an allocation."""
    cls = torch.UntypedStorage
    had_own = "resize_" in cls.__dict__
    original = cls.resize_

    def resize_(storage, size):
        old = engine.lookup(storage) if storage.data_ptr() else None
        result = original(storage, size)
        if old is not None and storage.data_ptr() != old.ptr:
            engine.free(old)
        if storage.data_ptr() and engine.lookup(storage) is None:
            engine.allocate(storage, device.current.sid, "UntypedStorage.resize_")
        return result

    cls.resize_ = resize_
    try:
        yield
    finally:
        if had_own:
            cls.resize_ = original
        else:
            del cls.resize_
