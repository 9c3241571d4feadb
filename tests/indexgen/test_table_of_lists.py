"""A registry that maps keys to lists, filled by ``table.setdefault(key, []).append(v)``
(or ``table[key].append(v)`` at a module's top level), holds each ``v``: a call through it
(``for f in table[key]: f(...)``, ``table[key][0](...)``) may run each.  And a class
decorator is handed the class it decorates, as a function decorator is handed its function
(``@Normalizer.register_rule("x")`` on a class puts the class into the registry).

Found by a probe on parso, whose ``Normalizer.register_rule`` decorates its rule classes
and puts each with ``cls.rule_classes.setdefault(key, []).append(rule_cls)``, then
``Normalizer.__init__`` makes one of each (``rule_cls(self)``) and ``visit`` feeds them: none
of those calls was listed.  Every expected edge is read off the source by hand.
"""

from __future__ import annotations

import pytest
from ig_helpers import callees_by_mark

FILES = {
    "pkg/__init__.py": "",
    "pkg/rules.py": '''
        class Rule:
            def feed(self, node):
                return node


        class Other:
            def feed(self, node):
                return node


        class Hook:
            def fire(self, node):
                return node


        def by_setdefault(node):
            table = {}
            table.setdefault("a", []).append(Rule())
            for rule in table["a"]:
                rule.feed(node)  # LOCAL_LOOP
            table["a"][0].feed(node)  # LOCAL_INDEX


        def a_set_of_them(node):
            seen = {}
            seen.setdefault("a", set()).add(Other())
            for rule in seen.get("a", ()):
                rule.feed(node)  # LOCAL_SET


        class Holder:
            def __init__(self):
                self.hooks = {}

            def add(self, key, hook: Hook):
                self.hooks.setdefault(key, []).append(hook)

            def run(self, key, node):
                for hook in self.hooks[key]:
                    hook.fire(node)  # SELF_TABLE


        ON_EXIT = {}
        ON_EXIT.setdefault("x", []).append(Rule)
        BY_INDEX = {"x": []}
        BY_INDEX["x"].append(Other)


        def at_exit(node):
            for rule_cls in ON_EXIT["x"]:
                rule_cls().feed(node)  # MODULE_SETDEFAULT
            for rule_cls in BY_INDEX["x"]:
                rule_cls().feed(node)  # MODULE_INDEX
    ''',
    "pkg/normalizer.py": '''
        class Normalizer:
            rule_classes = {}

            def __init__(self):
                made = self.rule_classes.get("x", [])
                self.rules = [rule_cls(self) for rule_cls in made]  # MADE

            @classmethod
            def register_rule(cls, key):
                def decorator(rule_cls):
                    cls.rule_classes.setdefault(key, []).append(rule_cls)
                    return rule_cls
                return decorator

            def visit(self, node):
                for rule in self.rules:
                    rule.feed(node)  # FED


        @Normalizer.register_rule("x")
        class NameRule:
            def __init__(self, normalizer):
                self.normalizer = normalizer

            def feed(self, node):
                return node


        class Unregistered:
            def __init__(self, normalizer):
                self.normalizer = normalizer

            def feed(self, node):
                return node
    ''',
    "pkg/plain.py": '''
        RULES = []


        def register(rule_cls):
            RULES.append(rule_cls)
            return rule_cls


        @register
        class Named:
            def feed(self, node):
                return node


        def visit(node):
            for rule_cls in RULES:
                rule_cls().feed(node)  # PLAIN_REGISTRY
    ''',
}


@pytest.fixture(scope="module")
def rules():
    return callees_by_mark(FILES, "pkg/rules.py")


@pytest.mark.parametrize(("mark", "callees"), [
    ("LOCAL_LOOP", {"Rule.feed"}),
    ("LOCAL_INDEX", {"Rule.feed"}),
    # setdefault(k, set()).add(v): a set of Others, read through get
    ("LOCAL_SET", {"Other.feed"}),
    ("SELF_TABLE", {"Hook.fire"}),
    # a module's top level: Rule(), and BY_INDEX's Other() (the class called, then feed)
    ("MODULE_SETDEFAULT", {"Rule", "Rule.feed"}),
    ("MODULE_INDEX", {"Other", "Other.feed"}),
])
def test_a_put_into_a_tables_list_is_what_the_table_holds(rules, mark, callees):
    assert rules[mark] == callees


def test_a_class_decorator_puts_the_class_into_the_registry():
    found = callees_by_mark(FILES, "pkg/normalizer.py")
    # NameRule is registered, Unregistered is not: rule_cls(self) runs NameRule's
    # __init__ and rule.feed NameRule's feed only
    assert found["MADE"] == {"NameRule.__init__"}
    assert found["FED"] == {"NameRule.feed"}


def test_a_plain_decorator_is_handed_the_class():
    found = callees_by_mark(FILES, "pkg/plain.py")
    assert found["PLAIN_REGISTRY"] == {"Named", "Named.feed"}
