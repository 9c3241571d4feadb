"""A function nested in another is a scope of its own: its parameters are its own names.

torch's ``proxy_call`` (``fx/experimental/proxy_tensor.py``) binds ``t`` in two generator
expressions (``t.constant ... for t in f_flat_args_kwargs if isinstance(t, _ProxyTensor)``)
and defines ``def tensor_numel_in_limit(t: Tensor) -> bool: return t.numel() <= ...``; the
extraction read the nested function's ``t`` as the enclosing function's ``t``, with every
value that name had, and listed ``ParameterProxy.numel`` and ``_NodeBase.numel`` for
``t.numel()``.  Over the nested function's body its parameter is what its annotation says
(or, without one, what the closure's callers hand it, or its default), and what an
``isinstance`` test of it there says it may be, nothing the enclosing function binds to that
name.  Every expected edge is read off the source by hand.
"""

from __future__ import annotations

import pytest
from ig_helpers import build_files, calls_at

FILES = {
    "pkg/__init__.py": "",
    "pkg/m.py": '''
        from __future__ import annotations


        class Tensor:
            def numel(self):
                return 1


        class Proxy:
            def numel(self):
                return 2


        class Node:
            def numel(self):
                return 3

            def state_dict(self):
                return {}


        def fetch(xs) -> list[Proxy]:
            return []


        def outer(args: list[Node]):
            flat = fetch(args)
            ok = any(t.numel() for t in flat if isinstance(t, Proxy))  # GEN

            def limit(t: Tensor) -> bool:
                return t.numel() <= 3  # ANNOTATED

            def use(t):
                return t.numel()  # HANDED

            for t in args:
                t.numel()  # LOOP
            tensor = Tensor()
            return ok, limit, use(tensor)


        class Saver:
            def state_dict(self):
                return {}


        def save(items: dict[str, Node], fmt: Tensor):
            for key, elem in items.items():
                def to_state(elem):
                    return elem.state_dict() if isinstance(elem, Saver) else elem  # MAYBE

                def show(val, fmt=fmt):
                    return fmt.numel()  # DEFAULT

                elem.numel()  # OUTER
                to_state(key)
                show(key)


        def rebuild(data):
            def walk(i):
                if isinstance(i, Tensor):
                    return i
                else:
                    return type(i)(walk(x) for x in i)  # ELSE
            return walk(data)


        def alone():
            def limit(t: Tensor) -> bool:
                return t.numel() <= 3  # ALONE
            return limit
    ''',
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("nested") / "src", FILES)


@pytest.mark.parametrize(("marker", "expected"), [
    # the nested function's t: its annotation, not the enclosing function's t
    ("ANNOTATED", {"m:Tensor.numel"}),
    # unannotated: what the closure's one call hands it, a Tensor
    ("HANDED", {"m:Tensor.numel"}),
    # an isinstance test of it says what it may be (not what the enclosing elem is)
    ("MAYBE", {"m:Saver.state_dict"}),
    # what its default, a value of the enclosing function, is
    ("DEFAULT", {"m:Tensor.numel"}),
])
def test_a_nested_function_parameter_is_its_own(pages, marker, expected):
    assert calls_at(pages, "pkg/m.py", marker) == expected


@pytest.mark.parametrize(("marker", "expected"), [
    # guards (these pass before the change too): the enclosing function's own bindings of
    # t, and a nested parameter whose name the enclosing function binds nowhere else
    ("GEN", {"m:Proxy.numel"}),
    ("LOOP", {"m:Node.numel"}),
    ("OUTER", {"m:Node.numel"}),
    ("ALONE", {"m:Tensor.numel"}),
    # the else of an isinstance test of the nested function's own name: i is no Tensor, so
    # type(i) is no Tensor class; the one callee is the closure walk (its page: rebuild's)
    ("ELSE", {"m:rebuild"}),
])
def test_the_enclosing_bindings_stay(pages, marker, expected):
    assert calls_at(pages, "pkg/m.py", marker) == expected
