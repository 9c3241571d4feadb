"""The forms of a type test that narrow, beside ``if``/``assert isinstance`` (tested in
test_graph_rules.py) and conditional expressions (test_conditional_narrowing.py).

An ``isinstance`` test that is an operand of ``and`` or ``or`` narrows the operands after
it (:func:`indexgen.extract.instance_tests.operands`): Python evaluates them only when the
test came out as the operator needs.

``isinstance(x, A) and x.run()`` calls ``A.run`` only; so does ``not isinstance(x, A) or
x.run()``; ``isinstance(x, A) or x.run()`` and ``not isinstance(x, A) and x.run()`` never
call ``A.run``.  It holds in an ``if`` or ``assert`` test, and in what an assignment or a
``return`` gives, for a name and for an attribute path alike.  An operand before the test
that reads the tested name on the same line keeps it from narrowing (a line is the unit:
``x.stop() and isinstance(x, A) and x.run()``).  ``type(x) is A`` narrows
where it is true (not in its ``else``: a subclass's instance fails it), and ``isinstance(x,
A) or isinstance(x, B)`` to an ``A`` or a ``B``; a ``match`` on a name narrows each ``case``
of class patterns (``case A() | B():``) to them, and ``while isinstance(x, A):`` its body.
An ``or`` that is false says what each operand says false: past ``if not isinstance(x, A)
or x.bad(): return``, ``x`` is an ``A``.  A loop's targets are, in its body, what that
loop binds them to, a tuple's names and the elements of a literal list too, not what
another loop over the same names binds.  Found on torch's dynamo
(``isinstance(out, SymNodeVariable) and out.python_type() is float`` listed every
``python_type`` of every variable tracker).  Every expected edge is read off the source by
hand.
"""

from __future__ import annotations

from ig_helpers import callees_by_mark

FILES = {
    "pkg/__init__.py": "",
    "pkg/box.py": '''
        class Base:
            def run(self):
                return 0

            def stop(self):
                return 0


        class A(Base):
            def run(self):
                return 1


        class B(Base):
            def run(self):
                return 2


        class Box:
            def __init__(self, x: Base):
                self.x = x

            def go(self):
                if isinstance(self.x, A) and self.x.run():  # PATH_IF
                    pass
                return isinstance(self.x, B) and self.x.run()  # PATH_RETURN


        def plain(x: Base, xs: list[Base]):
            if isinstance(x, A) and x.run():  # IF
                pass
            y = isinstance(x, A) and x.run()  # ASSIGN
            z: object = not isinstance(x, B) or x.run()  # OR_NOT
            assert isinstance(x, A) and x.run()  # ASSERT
            for o in xs:
                if isinstance(o, B) and o.run() > 1:  # LOOP
                    continue
            return isinstance(x, A) and (x.run() or x.run())  # NESTED


        def negated(x: A | B):
            a = isinstance(x, A) or x.run()  # OR
            b = not isinstance(x, A) and x.run()  # AND_NOT
            return a, b


        def before(x: Base):
            return x.stop() and isinstance(x, A) and x.run()  # BEFORE


        def exact(x: Base, y: Base):
            if type(x) is A:
                x.run()  # TYPE_IS
            else:
                x.run()  # TYPE_IS_ELSE
            if type(x) == B and x.run():  # TYPE_EQ_AND
                pass
            if type(y) is A:
                return
            y.run()  # AFTER_TYPE_IS
            return type(x) is A and x.run()  # TYPE_OPERAND


        def either(x: Base):
            if isinstance(x, A) or isinstance(x, B):
                x.run()  # EITHER


        def matching(x: Base, box: Box):
            match x:
                case A():
                    x.run()  # CASE
                case B(y=1) | A(y=2) as z:
                    x.run()  # CASE_OR
                case _:
                    x.run()  # CASE_ANY
            while isinstance(x, B):
                x.run()  # WHILE
                x = x.stop()
            while isinstance(box.x, A):
                box.x.run()  # WHILE_PATH


        def guarded(x: Base, z: A | B, w: Base):
            if not isinstance(x, A) or x.stop():
                return
            x.run()  # OR_LEAVES
            if isinstance(z, B) or z.stop():
                pass
            else:
                z.run()  # OR_ELSE
            if not type(w) is A:
                w.run()  # NOT_TYPE_IS
            else:
                w.run()  # NOT_TYPE_IS_ELSE
            if isinstance(z, A) and z.stop():
                pass
            else:
                z.run()  # AND_ELSE


        class Runner:
            def step(self):
                return 0

            def go(self, t):
                if not t or isinstance(self.step, A):
                    return
                self.step()  # METHOD_PAST_NOT


        class FastRunner(Runner):
            def step(self):
                return 1


        def first_cb(t):
            return t


        def second_cb(t):
            return t


        class Lexer:
            rules = [("x", first_cb)]
            table = [("y", second_cb)]

            def tokens(self, t):
                for rex, action in self.rules:
                    action(t)  # PAIRS_FIRST
                for rex, action in self.table:
                    action(t)  # PAIRS_SECOND
                for each in [first_cb]:
                    each(t)  # LITERAL_FIRST
                for each in (second_cb,):
                    each(t)  # LITERAL_SECOND


        def later_line(x: Base):
            return (x.stop()
                    and isinstance(x, A)
                    and x.run())  # LATER_LINE
    ''',
}

EVERY_RUN = {"Base.run", "A.run", "B.run"}


def test_an_isinstance_operand_narrows_the_operands_after_it():
    found = callees_by_mark(FILES, "pkg/box.py")
    assert found["IF"] == {"A.run"}, found
    assert found["ASSIGN"] == {"A.run"}, found
    assert found["OR_NOT"] == {"B.run"}, found
    assert found["ASSERT"] == {"A.run"}, found
    assert found["LOOP"] == {"B.run"}, found
    assert found["NESTED"] == {"A.run"}, found
    assert found["PATH_IF"] == {"A.run"}, found  # an attribute path, as a name
    assert found["PATH_RETURN"] == {"B.run"}, found


def test_a_false_test_leaves_what_it_tested_out():
    found = callees_by_mark(FILES, "pkg/box.py")
    assert found["OR"] == {"B.run"}, found
    assert found["AND_NOT"] == {"B.run"}, found


def test_an_operand_before_the_test_on_the_same_line_keeps_it_whole():
    found = callees_by_mark(FILES, "pkg/box.py")
    assert found["BEFORE"] == {"Base.stop"} | EVERY_RUN, found
    # on lines of their own, the test narrows the later line (x.stop() is on another)
    assert found["LATER_LINE"] == {"A.run"}, found


def test_type_is_narrows_where_it_is_true_only():
    found = callees_by_mark(FILES, "pkg/box.py")
    assert found["TYPE_IS"] == {"A.run"}, found
    assert found["TYPE_EQ_AND"] == {"B.run"}, found
    assert found["TYPE_OPERAND"] == {"A.run"}, found
    # false, x may still be an A (of a subclass): nothing is left out
    assert found["TYPE_IS_ELSE"] == EVERY_RUN, found
    assert found["AFTER_TYPE_IS"] == EVERY_RUN, found


def test_an_or_of_tests_of_one_name_narrows_to_either():
    assert callees_by_mark(FILES, "pkg/box.py")["EITHER"] == {"A.run", "B.run"}


def test_a_match_case_and_a_while_loop_narrow_their_bodies():
    found = callees_by_mark(FILES, "pkg/box.py")
    assert found["CASE"] == {"A.run"}, found
    assert found["CASE_OR"] == {"A.run", "B.run"}, found
    assert found["CASE_ANY"] == EVERY_RUN, found  # a pattern of no class says nothing
    assert found["WHILE"] == {"B.run"}, found
    assert found["WHILE_PATH"] == {"A.run"}, found


def test_a_false_or_says_what_each_operand_says_false():
    found = callees_by_mark(FILES, "pkg/box.py")
    assert found["OR_LEAVES"] == {"A.run"}, found  # past `not isinstance(x, A) or ...: return`
    assert found["OR_ELSE"] == {"A.run"}, found  # no B
    assert found["NOT_TYPE_IS"] == EVERY_RUN, found
    assert found["NOT_TYPE_IS_ELSE"] == {"A.run"}, found
    # an and that is false says nothing: z may be an A whose stop() was false
    assert found["AND_ELSE"] == {"A.run", "B.run"}, found


def test_a_method_past_a_test_that_it_is_not_some_class_is_still_the_method():
    # (torch's Module._slow_forward: `if not tracing_state or isinstance(self.forward,
    # ScriptMethod): return ...`, then self.forward(...): every forward of every module)
    found = callees_by_mark(FILES, "pkg/box.py")
    assert found["METHOD_PAST_NOT"] == {"Runner.step", "FastRunner.step"}, found


def test_each_loop_binds_its_own_targets_tuples_and_literals_too():
    # (pygments' RegexLexer: `for rex, action in ...` in two loops listed both loops'
    # callbacks at each)
    found = callees_by_mark(FILES, "pkg/box.py")
    assert found["PAIRS_FIRST"] == {"first_cb"}, found
    assert found["PAIRS_SECOND"] == {"second_cb"}, found
    assert found["LITERAL_FIRST"] == {"first_cb"}, found
    assert found["LITERAL_SECOND"] == {"second_cb"}, found


RULED_OUT = {
    "pkg/__init__.py": "",
    "pkg/ruled.py": '''
        class Base:
            def run(self):
                return 0


        class A(Base):
            def run(self):
                return 1


        class DeepA(A):
            def run(self):
                return 11


        class B(Base):
            def run(self):
                return 2


        def fast_run(self):
            return 3


        class FastA(A):
            run = fast_run


        class Holder:
            def __init__(self, x: Base):
                self.x = x

            def go(self):
                if isinstance(self.x, A):
                    return 0
                return self.x.run()  # PATH_PAST


        def split(x: Base, y: Base, z: Base):
            if isinstance(x, A):
                x.run()  # THEN
            else:
                x.run()  # ELSE
            if not isinstance(y, A):
                y.run()  # NOT_THEN
            if isinstance(z, (A, B)):
                return
            z.run()  # PAST_BOTH
    ''',
}


def test_a_test_that_it_is_no_a_leaves_the_overrides_of_a_and_its_subclasses_out():
    # `x: Base`: x may be any subclass's instance, but in the else of isinstance(x, A) no
    # A's, nor a DeepA's (a subclass of A is an A); a B's still
    found = callees_by_mark(RULED_OUT, "pkg/ruled.py")
    assert found["THEN"] == {"A.run", "DeepA.run", "fast_run"}, found  # FastA binds run
    assert found["ELSE"] == {"Base.run", "B.run"}, found
    assert found["NOT_THEN"] == {"Base.run", "B.run"}, found
    assert found["PAST_BOTH"] == {"Base.run"}, found
    assert found["PATH_PAST"] == {"Base.run", "B.run"}, found  # an attribute path too
