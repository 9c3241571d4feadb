"""An attribute that a base class binds to a value that says nothing (``rules = []``,
``table = {}``, ``tokenizer_class = None``) or does not bind at all, and that its subclasses
bind in their class bodies, is read through ``self`` in the base's methods as what the
subclasses bind: an instance may be one of theirs (as it is where the base's own value
says something: ``rules = [basecb]``).

Found by a probe on pygments, whose ``RegexLexer`` reads the ``tokens`` tables its
subclasses' bodies bind, and parso, whose ``BaseParser.node_map = {}`` is overridden by
``Parser.node_map = {...}``: the calls through them were not listed.  Every expected edge is
read off the source by hand.
"""

from __future__ import annotations

import pytest
from ig_helpers import callees_by_mark

FILES = {
    "pkg/__init__.py": "",
    "pkg/lexers.py": '''
        def modcb(lexer, match):
            return match


        def modcb2(lexer, match):
            return match


        def basecb(lexer, match):
            return match


        def elsewhere(lexer, match):
            return match


        class Setting:
            def __init__(self):
                pass


        class Function:
            def __init__(self, children):
                self.children = children


        class Node:
            def __init__(self, children):
                self.children = children


        class Base:
            rules = []
            table = {}
            tokenizer_class = None
            node_map = {}
            default_node = Node
            full = [basecb]

            def run(self, text):
                for f in self.rules:
                    f(self, text)  # EMPTY_LIST
                for rex, action in self.table["root"]:
                    action(self, text)  # EMPTY_DICT
                tokenizer = self.tokenizer_class()  # NONE
                for f in self.hooks:
                    f(self, text)  # UNBOUND
                for f in self.full:
                    f(self, text)  # NON_EMPTY

            def convert(self, kind, children):
                try:
                    return self.node_map[kind](children)  # NODE_MAP
                except KeyError:
                    return self.default_node(children)  # DEFAULT


        class Sub(Base):
            rules = [modcb]
            table = {"root": [("y", modcb2)]}
            tokenizer_class = Setting
            hooks = [modcb]
            node_map = {"funcdef": Function}
            full = [modcb]


        class Unrelated:
            rules = [elsewhere]
            hooks = [elsewhere]
    ''',
}


@pytest.fixture(scope="module")
def found():
    return callees_by_mark(FILES, "pkg/lexers.py")


@pytest.mark.parametrize(("mark", "callees"), [
    # Sub's bindings; Unrelated binds the same names but is no subclass of Base
    ("EMPTY_LIST", {"modcb"}),
    ("EMPTY_DICT", {"modcb2"}),
    ("NONE", {"Setting.__init__"}),
    ("UNBOUND", {"modcb"}),
    ("NODE_MAP", {"Function.__init__"}),
    ("DEFAULT", {"Node.__init__"}),
    # a base value that says something: it and the subclass's (as before)
    ("NON_EMPTY", {"basecb", "modcb"}),
])
def test_a_base_reads_what_its_subclasses_bind(found, mark, callees):
    assert found[mark] == callees
