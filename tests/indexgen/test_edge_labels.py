"""A "Calls" edge whose call reaches the callee as a value (a loop over a list attribute, a
parameter its callers hand, a factory's return, a registry's item, an attribute holding a
function, a ``partial``) says so at its lines, with the first hop of how the value got there;
a call that names its callee (a direct call, a method called by the receiver's type, a
constructor, an imported alias, an instance called) has no label.  The labels change no
edge: ``page_claims`` reads the same callees at those lines, on both views.

Every expected text is written by hand from the small source tree below."""

from __future__ import annotations

import pytest
from ig_helpers import build_files, calls_at, calls_line, symbol_section

RULES = '''
    from functools import partial

    from pkg.other import blockquote as bq


    def blockquote(state):
        return state


    def heading(state):
        return state


    def make_rule():
        def inner():
            return 1
        return inner


    class Base:
        def __init__(self):
            self.ready = True


    class Child(Base):
        pass


    class Callable:
        def __call__(self, x):
            return x


    class Runner:
        def __init__(self):
            self.rules = [blockquote, heading]
            self._handlers = {"a": blockquote}
            self._hook = heading

        def run(self, state):
            blockquote(state)  # by name
            for rule in self.rules:
                rule(state)  # the loop

        def dispatch(self, name, x):
            handler = self._handlers[name]
            handler(x)  # the registry's item, named
            self._handlers[name](x)  # the registry's item

        def run_all(self, state):
            for rule in self.rules:
                rule(state)  # the loop alone

        def hooked(self, x):
            self._hook(x)  # the attribute

        def named(self, x):
            self.run(x)  # a method of self
            other = Runner()  # a constructor
            other.hooked(x)  # a method by the receiver's type
            Child()  # an inherited constructor
            bq(x)  # an imported alias
            c = Callable()
            c(x)  # an instance called
            h = self._hook
            h(x)  # the one value here

        @classmethod
        def make(cls):
            made = cls()  # the class of the instance
            return type(made)()  # the class of an instance


    def apply(fn, x):
        return fn(x)  # the parameter


    def use():
        apply(blockquote, 1)
        f = make_rule()
        f()  # the factory's return
        p = partial(heading, 1)
        p()  # the partial


    def pair():
        return blockquote, heading


    def unpack():
        first, second = pair()
        second(1)  # the second of a pair


    class Table:
        fn = heading


    def table_call(t: Table):
        t.fn(1)  # another object's attribute


    HOOKS = [blockquote]
    for hook in HOOKS:
        hook(1)  # a module's loop
    alias = heading
    alias(2)  # a module's alias
    '''

OTHER = '''
    def blockquote(state):
        return state
    '''


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("labels") / "src", {
        "pkg/__init__.py": "", "pkg/rules.py": RULES, "pkg/other.py": OTHER})


def _calls(pages, anchor: str) -> str:
    """The "Calls" line of a definition of pkg/rules.py."""
    return calls_line(symbol_section((pages[1] / "pkg/rules.py_docs.md").read_text(), anchor))


def _line(pages, marker: str) -> int:
    return next(i for i, text in enumerate((pages[0] / "pkg/rules.py").read_text().split("\n"),
                                           1) if marker in text)


def _at(pages, marker: str) -> str:
    n = _line(pages, marker)
    return f"[line {n}](#L{n})"


_BLOCKQUOTE = "[`blockquote`](#sym-blockquote)"
_HEADING = "[`heading`](#sym-heading)"


def test_a_loop_over_a_list_attribute_and_a_direct_call_of_the_same_callee(pages):
    # blockquote is called by name on one line and through the loop's name on another;
    # heading only through the loop
    loop = _at(pages, "rule(state)  # the loop")
    assert _calls(pages, "Runner.run") == (
        f"- **Calls**: {_BLOCKQUOTE} ({_at(pages, 'blockquote(state)  # by name')}; "
        f"{loop}, through `rule`: an element of `self.rules`); "
        f"{_HEADING} ({loop}, through `rule`: an element of `self.rules`)")


def test_a_registry_dict_item_named_and_called_at_once(pages):
    assert _calls(pages, "Runner.dispatch") == (
        f"- **Calls**: {_BLOCKQUOTE} ({_at(pages, '# the registry' + chr(39) + 's item, named')}"
        f", through `handler`: an item of `self._handlers`; "
        f"{_at(pages, 'self._handlers[name](x)')}, through an item of `self._handlers`)")


def test_an_attribute_holding_a_function(pages):
    assert _calls(pages, "Runner.hooked") == (
        f"- **Calls**: {_HEADING} ({_at(pages, 'self._hook(x)')}, through `self._hook`: "
        "an attribute set in `__init__` to `heading`)")


def test_a_parameter_its_callers_hand(pages):
    assert _calls(pages, "apply") == (
        f"- **Calls**: {_BLOCKQUOTE} ({_at(pages, 'return fn(x)')}, through the parameter "
        "`fn`, from its callers)")


def test_a_factorys_return_and_a_partial(pages):
    calls = _calls(pages, "use")
    assert (f"<code>make_rule.&lt;locals&gt;.inner</code>](#sym-make_rule) "
            f"({_at(pages, 'f()  # the factory')}, through `f`: returned by `make_rule()`)"
            in calls)
    assert (f"{_HEADING} ({_at(pages, 'p()  # the partial')}, through `p`: `heading` "
            "wrapped by `partial`)" in calls)
    assert f"[`apply`](#sym-apply) ({_at(pages, 'apply(blockquote, 1)')})" in calls


def test_calls_that_name_their_callee_have_no_label(pages):
    # beside the one call through a value, which has its label
    assert _calls(pages, "Runner.named") == (
        "- **Calls**: "
        f"[`Runner.run`](#sym-Runner.run) ({_at(pages, 'self.run(x)')}); "
        f"[`Runner.__init__`](#sym-Runner.__init__) ({_at(pages, 'other = Runner()')}); "
        f"[`Runner.hooked`](#sym-Runner.hooked) ({_at(pages, 'other.hooked(x)')}); "
        f"[`Base.__init__`](#sym-Base.__init__) ({_at(pages, 'Child()')}); "
        f"[`other.blockquote`](other.py_docs.md#sym-blockquote) ({_at(pages, 'bq(x)')}); "
        f"[`Callable`](#sym-Callable) ({_at(pages, 'c = Callable()')}); "  # no __init__
        f"[`Callable.__call__`](#sym-Callable.__call__) ({_at(pages, 'c(x)')}); "
        f"{_HEADING} ({_at(pages, 'h(x)  # the one value')}, through `h`: bound to "
        "`self._hook`)")
    assert _calls(pages, "Runner.make") == (
        "- **Calls**: [`Runner.__init__`](#sym-Runner.__init__) (lines "
        + ", ".join(f"[{n}](#L{n})" for n in (_line(pages, "made = cls()"),
                                             _line(pages, "type(made)()"))) + ")")


@pytest.mark.parametrize("marker, callees", [
    ("rule(state)  # the loop", {"rules:blockquote", "rules:heading"}),
    ("handler(x)", {"rules:blockquote"}),
    ("self._handlers[name](x)", {"rules:blockquote"}),
    ("self._hook(x)", {"rules:heading"}),
    ("return fn(x)", {"rules:blockquote"}),
    ("p()  # the partial", {"rules:heading"}),
])
def test_the_labels_change_no_edge(pages, marker, callees):
    # the page reader finds the labelled lines' callees, and their Called by agrees
    assert calls_at(pages, "pkg/rules.py", marker) == callees


def test_callees_of_the_same_labelled_lines_are_one_entry(pages):
    assert _calls(pages, "Runner.run_all") == (
        f"- **Calls**: {_BLOCKQUOTE}, {_HEADING} ({_at(pages, '# the loop alone')}, "
        "through `rule`: an element of `self.rules`)")


def test_a_place_of_a_returned_tuple(pages):
    assert _calls(pages, "unpack") == (
        f"- **Calls**: [`pair`](#sym-pair) ({_at(pages, 'first, second = pair()')}); "
        f"{_HEADING} ({_at(pages, 'second(1)')}, through `second`: item 1 of what `pair()` "
        "returns)")


def test_another_objects_attribute_and_a_module_alias(pages):
    # nothing recorded of t.fn in the caller's file but the call: a short label
    assert _calls(pages, "table_call") == (
        f"- **Calls**: {_HEADING} ({_at(pages, 't.fn(1)')}, through the attribute `t.fn`)")
    module = (pages[1] / "pkg/rules.py_docs.md").read_text().split(
        '<a id="module-level"></a>')[1]
    assert calls_line(module) == (
        f"- **Calls**: {_HEADING} ({_at(pages, 'alias(2)')}, through `alias`: bound to "
        "`heading`)")
