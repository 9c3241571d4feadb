"""What iterating (or subscripting) a value gives, where the code states it by an idiom the
evaluation did not read: found on torch, whose comprehensions over these lost their element
type once a comprehension's target became a name of its own (test_comprehension_scope.py).

- ``itertools.chain(a, b)`` (or ``chain`` imported by name) gives the elements of ``a`` and
  of ``b``; ``itertools.chain.from_iterable(xss)`` the elements of the elements of ``xss``
  (torch's ``NNModuleVariable.call_method``: ``itertools.chain(args, kwargs.values())``);
- a project class subclassing a generic container ABC (``MutableSet[T]``, ``Mapping[K,
  V]``), written with its type arguments (``OrderedSet[Node]``), gives those arguments'
  values where ``T`` stands: iterated, its elements (torch's ``OrderedSet[Dep]``); a class
  subclassing it with the arguments given (``class NodeSet(OrderedSet[Node])``) or passing
  its own on (``class Deeper(OrderedSet[T])``) too, a type variable with a bound among them;
- ``sorted(xs, key=...)``, and the other builtins whose result follows from their
  arguments, with keywords: the keywords change nothing of the elements;
- calling a function nested in another gives what its return annotation says (torch's
  ``_register_logging_hooks_on_whole_graph``: ``def iter_graph(...) -> Iterator[Node]``).

Every expected edge is read off the source by hand.
"""

from __future__ import annotations

import pytest
from ig_helpers import build_files, calls_at

FILES = {
    "pkg/__init__.py": "",
    "pkg/nodes.py": '''
        from __future__ import annotations


        class Node:
            name = ""

            def go(self) -> None:
                pass


        class Edge:
            def go(self) -> None:
                pass
    ''',
    "pkg/sets.py": '''
        from __future__ import annotations

        from collections.abc import Hashable, Iterable, Iterator, Mapping, MutableSet
        from typing import TypeVar

        T = TypeVar("T")
        S = TypeVar("S", bound=Hashable)
        K = TypeVar("K")
        V = TypeVar("V")


        class OrderedSet(MutableSet[T]):
            def __init__(self, items: Iterable[T] = ()) -> None:
                self._d = dict.fromkeys(items)

            def __iter__(self) -> Iterator[T]:
                return iter(self._d)

            def __contains__(self, x: object) -> bool:
                return x in self._d

            def __len__(self) -> int:
                return len(self._d)

            def add(self, x: T) -> None:
                self._d[x] = None

            def discard(self, x: T) -> None:
                self._d.pop(x, None)


        class Table(Mapping[K, V]):
            def __init__(self) -> None:
                self._d: dict = {}

            def __getitem__(self, k: K) -> V:
                return self._d[k]

            def __iter__(self) -> Iterator[K]:
                return iter(self._d)

            def __len__(self) -> int:
                return len(self._d)


        class Deeper(OrderedSet[T]):
            pass


        class Bounded(OrderedSet[S]):
            pass
    ''',
    "pkg/use.py": '''
        from __future__ import annotations

        import itertools
        from collections.abc import Iterator
        from itertools import chain

        from pkg.nodes import Edge, Node
        from pkg.sets import Bounded, Deeper, OrderedSet, Table


        class NodeSet(OrderedSet[Node]):
            pass


        def chains(nodes: list[Node], edges: dict[str, Edge], groups: list[list[Edge]]) -> None:
            a = [x.go() for x in itertools.chain(nodes, edges.values())]  # chain of two
            b = [x.go() for x in chain(groups[0])]  # chain by name
            c = [x.go() for x in itertools.chain.from_iterable(groups)]  # from_iterable


        def generic_sets(s: OrderedSet[Node], t: Table[str, Edge], d: Deeper[Edge],
                         n: NodeSet, e: Bounded[Edge]) -> None:
            a = [x.go() for x in s]  # an OrderedSet of nodes
            for y in s:
                y.go()  # a loop over it
            t["k"].go()  # a Table's value
            b = [x.go() for x in d]  # a generic subclass
            c = [x.go() for x in n]  # a subclass with the argument
            f = [x.go() for x in e]  # a subclass by a bound type variable


        def keywords(nodes: list[Node], edges: list[Edge]) -> None:
            a = [x.go() for x in sorted(nodes, key=lambda n: n.name)]  # sorted with a key
            b = [x.go() for x in sorted(edges, reverse=True)]  # sorted reversed
            c = [p[1].go() for p in enumerate(nodes, start=1)]  # enumerate from one


        def nested(root: Node) -> None:
            def walk(n: Node) -> Iterator[Node]:
                yield n

            handles = [
                x.go()  # a nested function's return
                for x in walk(root)
            ]
    ''',
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("element_types") / "src", FILES)


@pytest.mark.parametrize(("marker", "callees"), [
    ("# chain of two", {"nodes:Node.go", "nodes:Edge.go"}),
    ("# chain by name", {"nodes:Edge.go"}),
    ("# from_iterable", {"nodes:Edge.go"}),
])
def test_itertools_chain_gives_the_elements_of_its_arguments(pages, marker, callees):
    assert calls_at(pages, "pkg/use.py", marker) == callees


@pytest.mark.parametrize(("marker", "callees"), [
    ("# sorted with a key", {"nodes:Node.go"}),
    ("# sorted reversed", {"nodes:Edge.go"}),
    ("# enumerate from one", {"nodes:Node.go"}),
])
def test_keywords_leave_a_builtins_elements(pages, marker, callees):
    assert calls_at(pages, "pkg/use.py", marker) == callees


def test_a_nested_functions_return_annotation_types_what_calling_it_gives(pages):
    assert calls_at(pages, "pkg/use.py", "# a nested function's return") == {"nodes:Node.go"}


@pytest.mark.parametrize(("marker", "callees"), [
    ("# an OrderedSet of nodes", {"nodes:Node.go"}),
    ("# a loop over it", {"nodes:Node.go"}),
    ("# a Table's value", {"nodes:Edge.go"}),
    ("# a generic subclass", {"nodes:Edge.go"}),
    ("# a subclass with the argument", {"nodes:Node.go"}),
    ("# a subclass by a bound type variable", {"nodes:Edge.go"}),
])
def test_a_generic_container_class_binds_its_type_arguments(pages, marker, callees):
    assert calls_at(pages, "pkg/use.py", marker) == callees
