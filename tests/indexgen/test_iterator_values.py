"""What a ``collections.deque`` handed its first items holds, and what ``next()`` and a loop
give on an instance of a project iterator class.

- ``deque([self])`` (by name, or ``collections.deque(...)``) holds the elements of what it
  is handed; ``popleft()``/``pop()`` give one (jinja2's ``Node.find_all``: ``todo =
  deque([self]); node = todo.popleft(); node.iter_child_nodes()``);
- ``next(stream)`` on an instance of a class whose ``__next__`` says what it gives
  (jinja2's ``TokenStream.__next__ -> Token``) gives that; ``for tok in stream`` too,
  through an ``__iter__`` that returns the instance itself or another iterator class.

Every expected edge is read off the source by hand.
"""

from __future__ import annotations

import pytest
from ig_helpers import build_files, calls_at

FILES = {
    "pkg/__init__.py": "",
    "pkg/tree.py": '''
        from __future__ import annotations

        import collections
        from collections import deque


        class Node:
            def children(self) -> list[Node]:
                return []

            def find_all(self):
                todo = deque([self])
                while todo:
                    node = todo.popleft()
                    todo.extend(node.children())  # DEQUE_NAME

            def walk(self, roots: list[Node]):
                todo = collections.deque(roots)
                node = todo.pop()
                node.children()  # DEQUE_MODULE
    ''',
    "pkg/lexer.py": '''
        from __future__ import annotations

        import typing as t


        class Token:
            def test(self):
                return True


        class TokenStream:
            def __iter__(self) -> TokenStreamIterator:
                return TokenStreamIterator(self)

            def __next__(self) -> Token:
                return Token()


        class TokenStreamIterator:
            def __init__(self, stream: TokenStream) -> None:
                self.stream = stream

            def __iter__(self) -> TokenStreamIterator:
                return self

            def __next__(self) -> Token:
                return next(self.stream)


        class Selfish:
            def __iter__(self) -> t.Iterator[Token]:
                return self

            def __next__(self) -> Token:
                return Token()


        def parse(stream: TokenStream, own: Selfish):
            tok = next(stream)
            tok.test()  # NEXT
            for other in stream:
                other.test()  # FOR
            for mine in own:
                mine.test()  # SELFISH
    ''',
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("iters") / "src", FILES)


@pytest.mark.parametrize("marker", ["DEQUE_NAME", "DEQUE_MODULE"])
def test_deque_holds_what_it_is_handed(pages, marker):
    assert calls_at(pages, "pkg/tree.py", marker) == {"tree:Node.children"}


@pytest.mark.parametrize("marker", ["NEXT", "FOR", "SELFISH"])
def test_next_of_a_project_iterator(pages, marker):
    assert calls_at(pages, "pkg/lexer.py", marker) == {"lexer:Token.test"}
