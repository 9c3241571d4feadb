"""Trace one training iteration of fsdp_ref and print what it entered, as JSON.

Run as a script (``python -m tests.docs.lifecycle_trace``) so that the fake process group
it starts lives in a process of its own. Prints ``{"first": [[file, function], ...],
"upward": [[caller file, caller, callee file, callee], ...], "gradient": [[file,
function], ...]}``: every function of ``src/fsdp_ref`` entered during the second of two
steps of a two-block model on a fake two-rank group (in order of first entry), every call
made into a module that the calling module does not import, directly or through others (a
call back *up* the layers), and every function entered inside a
``FSDPParamGroup.post_backward`` from the step's first one to its first
``ParamGrad.accumulate_sharded_grad`` (a method of every ``FSDPParam``) (the first gradient's way to ``.grad``, in order of
first entry; what autograd runs between two post-backwards is not on it).
"""

from __future__ import annotations

import ast
import json
import os
import sys
from pathlib import Path

import torch
import torch.nn as nn

SRC = Path(__file__).resolve().parents[2] / "src" / "fsdp_ref"


def _imports(name: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse((SRC / name).read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found |= {f"{node.module}.py"} if node.module else {f"{a.name}.py" for a in node.names}
    return found


def _closure() -> dict[str, set[str]]:
    graph = {p.name: _imports(p.name) for p in SRC.glob("*.py")}
    out = {}
    for start in graph:
        seen, todo = set(), [start]
        while todo:
            for nxt in graph.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        out[start] = seen
    return out


def _inside(frame, qualname: str) -> bool:
    while frame is not None:
        if frame.f_code.co_qualname == qualname:
            return True
        frame = frame.f_back
    return False


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.lin(x))


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([Block(), Block()])
        self.head = nn.Linear(8, 8)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def main() -> None:
    from fsdp_ref import fully_shard
    from fsdp_ref.tools.simulate import fake_process_group

    closure = _closure()
    src = str(SRC)
    first: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    upward: set[tuple[str, str, str, str]] = set()
    gradient: list[tuple[str, str]] = []
    window = {"open": False, "done": False}

    def profile(frame, event, arg):
        code = frame.f_code
        if event != "call" or not code.co_filename.startswith(src):
            return
        callee = (os.path.relpath(code.co_filename, src), code.co_qualname)
        if callee not in seen:
            seen.add(callee)
            first.append(callee)
        if callee == ("param_group.py", "FSDPParamGroup.post_backward") and not window["done"]:
            window["open"] = True
        if window["open"] and _inside(frame, "FSDPParamGroup.post_backward"):
            if callee not in gradient:
                gradient.append(callee)
            if callee == ("param_grad.py", "ParamGrad.accumulate_sharded_grad"):
                window["open"], window["done"] = False, True
        back = frame.f_back
        if back is not None and back.f_code.co_filename.startswith(src):
            caller = os.path.relpath(back.f_code.co_filename, src)
            if "/" not in caller + callee[0] and caller != callee[0] and \
                    callee[0] not in closure.get(caller, ()):
                upward.add((caller, back.f_code.co_qualname, *callee))

    with fake_process_group(2):
        torch.manual_seed(0)
        model = Model()
        for block in model.blocks:
            fully_shard(block)
        fully_shard(model)
        optim = torch.optim.SGD(model.parameters(), lr=0.1)

        def step() -> None:
            model(torch.randn(4, 8, requires_grad=True)).sum().backward()
            optim.step()
            optim.zero_grad()

        step()
        sys.setprofile(profile)
        try:
            step()
        finally:
            sys.setprofile(None)
    print(json.dumps({"first": first, "upward": sorted(upward), "gradient": gradient}))


if __name__ == "__main__":
    main()
