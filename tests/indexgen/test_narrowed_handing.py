"""Narrowings where a call hands a path, and where a narrowing ends.

A path a call hands is read as the code has narrowed it at that line
(:func:`indexgen.analyze.flows.call_sites`): a loop's ``hook`` handed in one loop is that
loop's element, not every loop's (torch's ``Module._call_impl`` handed its forward hooks
to ``_WrappedHook``, which only its backward hooks reach).  What follows an
``if`` that leaves is narrowed up to the end of the block that holds it
(:func:`indexgen.extract.attribute_narrowing.statement_block_ends`), not past an
enclosing block."""

from __future__ import annotations

from ig_helpers import callees_by_mark

FILES = {
    "pkg/__init__.py": "",
    "pkg/hooks.py": '''
        class Forward:
            def __call__(self, x):
                return 1


        class Backward:
            def __call__(self, x):
                return 2


        class Wrapped:
            def __init__(self, hook):
                self.hook = hook

            def __call__(self, x):
                return self.hook(x)  # HOOK


        def run(x):
            for hook in [Forward()]:
                hook(x)
            for hook in [Backward()]:
                Wrapped(hook)(x)
        ''',
    "pkg/nested.py": '''
        class Alpha:
            def m(self):
                return 1


        class Beta(Alpha):
            def m(self):
                return 2


        def f(x: Alpha, flag):
            if flag:
                if isinstance(x, Beta):
                    return 1
                x.m()  # IN
            return x.m()  # AFTER


        def g(x: Alpha, flag):
            if flag:
                return 0
            else:
                if isinstance(x, Beta):
                    return 1
            return x.m()  # PAST_ELSE
        ''',
}


def test_a_loop_name_is_handed_as_that_loop_has_it():
    assert callees_by_mark(FILES, "pkg/hooks.py")["HOOK"] == {"Backward.__call__"}


def test_what_follows_an_if_that_leaves_is_narrowed_within_its_block_only():
    found = callees_by_mark(FILES, "pkg/nested.py")
    assert found["IN"] == {"Alpha.m"}  # no Beta here
    assert found["AFTER"] == {"Alpha.m", "Beta.m"}  # the enclosing if has ended
    # the if's other branch leaves: what follows the if is reached from the else alone
    assert found["PAST_ELSE"] == {"Alpha.m"}
