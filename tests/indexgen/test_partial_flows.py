"""A call of a ``functools.partial`` hands its arguments after the ones the partial binds.

``wrapper = partial(Expander, Tree); wrapper(default)`` runs ``Expander(Tree, default)``:
``default`` is the second parameter (``node_builder``), not the first (``tree_class``), and
``Tree`` is the first (lark's ``AmbiguousIntermediateExpander``, whose ``self.tree_class(...)``
was listed as calling the ``default`` handed to it).  The same for a function and for a bound
method (``partial(self.default, name)(data)``), and for a name that is a partial on one path
only.  Every expected edge is read off the source by hand.
"""

from __future__ import annotations

from ig_helpers import callees_by_mark

FILES = {
    "pkg/__init__.py": "",
    "pkg/m.py": '''
        from dataclasses import dataclass
        from functools import partial


        class Tree:
            def __init__(self, data, children):
                self.data = data


        class Leaf:
            def grow(self):
                return 1


        class Expander:
            def __init__(self, tree_class, node_builder):
                self.tree_class = tree_class
                self.node_builder = node_builder

            def __call__(self, children):
                self.tree_class("_ambig", children)  # FIRST_SLOT
                return self.node_builder(children)  # SECOND_SLOT


        def default(data):
            return data


        def build():
            wrapper = partial(Expander, Tree)
            return wrapper(default)


        def apply(first, second):
            first.grow()  # FUNC_FIRST
            return second()  # FUNC_SECOND


        def run_apply():
            f = partial(apply, Leaf())
            return f(default)


        class Transformer:
            def default(self, name, data):
                data.grow()  # BOUND_DATA
                return name

            def call(self, flag, data):
                user = getattr(self, "default") if flag else partial(self.default, "x")
                return user(Leaf())


        class Stone:
            def grow(self):
                return 2


        @dataclass
        class Pair:
            first: object
            second: object

            def use(self):
                self.first.grow()  # FIELD_FIRST
                return self.second.grow()  # FIELD_SECOND


        def pair():
            return partial(Pair, Leaf())(Stone())
    ''',
}


def test_a_partial_of_a_class_hands_its_call_the_next_parameters():
    found = callees_by_mark(FILES, "pkg/m.py", called_only=True)
    assert found["FIRST_SLOT"] == {"Tree.__init__"}
    assert found["SECOND_SLOT"] == {"default"}


def test_a_partial_of_a_function_binds_the_first_parameter():
    found = callees_by_mark(FILES, "pkg/m.py", called_only=True)
    assert found["FUNC_FIRST"] == {"Leaf.grow"}
    assert found["FUNC_SECOND"] == {"default"}


def test_a_partial_of_a_bound_method_on_one_path_hands_both_ways():
    # getattr(self, "default")(Leaf()) hands the Leaf to name; the partial, to data
    found = callees_by_mark(FILES, "pkg/m.py", called_only=True)
    assert found["BOUND_DATA"] == {"Leaf.grow"}


def test_a_partial_of_a_dataclass_hands_the_next_fields():
    found = callees_by_mark(FILES, "pkg/m.py", called_only=True)
    assert found["FIELD_FIRST"] == {"Leaf.grow"}
    assert found["FIELD_SECOND"] == {"Stone.grow"}
