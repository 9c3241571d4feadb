"""``indexgen.analyze.memo.GuardedMemo``: the one rule of the type evaluator's memo, on a
recursion written here (what each value is, read off the definitions below by hand)."""

from __future__ import annotations

from indexgen.analyze.memo import GuardedMemo


class Chain:
    """``value(n)`` is ``{n}`` and the values of ``n``'s successors, each read one path
    deeper (as the evaluator reads a source); a successor in progress gives nothing."""

    def __init__(self, succ: dict[str, list[str]], limit: int) -> None:
        self.succ, self.memo, self.computed = succ, GuardedMemo(limit, frozenset()), []

    def value(self, n: str) -> frozenset:
        return self.memo.get(n, self._value, n)

    def _value(self, n: str) -> frozenset:
        self.computed.append(n)
        found = {n}
        for s in self.succ.get(n, ()):
            if not self.memo.enter():
                continue
            try:
                found |= self.value(s)
            finally:
                self.memo.leave()
        return frozenset(found)


def test_a_value_shaped_by_a_cycle_is_kept_only_within_its_scope():
    # a <-> b: asked for a first, b is {b} (a cut); asked for b first, b is {a, b}
    chain = Chain({"a": ["b"], "b": ["a"]}, limit=10)
    assert chain.value("a") == {"a", "b"}
    assert chain.value("b") == {"b"}  # kept in this scope: the first caller's cut
    chain.memo.begin()
    assert chain.value("b") == {"a", "b"}  # a new scope finds it from its own entry
    chain.memo.begin()
    assert chain.value("a") == {"a", "b"}


def test_a_value_no_cut_shaped_is_kept_for_the_build():
    chain = Chain({"a": ["b"], "b": ["c"]}, limit=10)
    assert chain.value("a") == {"a", "b", "c"}
    chain.memo.begin()
    chain.computed.clear()
    assert chain.value("b") == {"b", "c"} and chain.computed == []  # no work done again


def test_a_kept_value_is_not_reused_where_the_depth_limit_would_cut_it():
    # c -> d -> e: computed alone, c is {c, d, e} (two paths deep); read from a, two paths
    # deeper, the limit of 3 cuts it to {c, d}: the kept {c, d, e} must not be handed out
    chain = Chain({"a": ["b"], "b": ["c"], "c": ["d"], "d": ["e"]}, limit=2)
    assert chain.value("c") == {"c", "d", "e"}
    chain.memo.begin()
    assert chain.value("a") == {"a", "b", "c", "d"}
    fresh = Chain(chain.succ, limit=2)
    assert fresh.value("a") == {"a", "b", "c", "d"}  # what it finds with nothing kept
    # b, read from a, was cut by the limit: asked for itself it reaches e
    chain.memo.begin()
    assert chain.value("b") == {"b", "c", "d", "e"}


class Pending(Chain):
    """A :class:`Chain` whose nodes named in ``later`` read something a later round knows
    better (as a parameter reads what its callers hand it, before the call graph is done)."""

    def __init__(self, succ: dict[str, list[str]], later: set[str]) -> None:
        super().__init__(succ, limit=10)
        self.later = later

    def _value(self, n: str) -> frozenset:
        if n in self.later:
            self.memo.note_provisional()
        return super()._value(n)


def test_a_query_is_settled_only_if_nothing_it_read_was_cut_or_provisional():
    chain = Pending({"a": ["b"], "b": ["c"], "x": ["y"], "p": ["x"]}, later={"c"})
    chain.memo.watch()
    chain.value("x")
    assert chain.memo.settled()  # x and y: clean, final
    chain.memo.watch()
    chain.value("a")
    assert not chain.memo.settled()  # a reads c, which is provisional
    chain.memo.watch()
    chain.value("b")  # kept from a's query: the note must come with it
    assert chain.computed.count("b") == 1 and not chain.memo.settled()
    chain.memo.watch()
    chain.value("p")  # reads x, kept clean
    assert chain.memo.settled()


def test_a_query_a_cycle_cut_is_not_settled():
    chain = Pending({"a": ["b"], "b": ["a"]}, later=set())
    chain.memo.watch()
    chain.value("a")
    assert not chain.memo.settled()  # a later round asking from b would cut elsewhere


def test_forgetting_what_was_provisional_keeps_what_read_none_of_it():
    # between the call graph's rounds (Flows.set_flows): a value that read nothing
    # provisional is the same in the next round, and is not computed again
    chain = Pending({"a": ["b"], "b": ["c"], "x": ["y"]}, later={"c"})
    chain.value("a")
    chain.value("x")
    chain.memo.forget_provisional()
    chain.computed.clear()
    chain.value("x")
    chain.value("a")
    assert chain.computed == ["a", "b", "c"]  # x and y kept; a, b and c found again


def test_forgetting_what_was_provisional_forgets_what_a_cut_shaped():
    chain = Pending({"a": ["b"], "b": ["a"]}, later=set())
    chain.value("a")  # b is {b} here, cut at a
    chain.memo.forget_provisional()
    assert chain.value("b") == {"a", "b"}  # asked first now: its own, whole
