"""A parameter an ``isinstance`` test names is still what its callers hand it.

pyparsing 3.3 (``util.py``) keeps its camelCase names as shims: ``replaced_by_pep8(compat_name,
fn)`` wraps ``fn`` in a closure ``_inner`` that calls ``fn(self, *args, **kwargs)`` (or
``fn(*args, **kwargs)``), and only then tests ``isinstance(fn, types.FunctionType)`` and
``isinstance(fn, type)`` to copy ``fn``'s keyword defaults; class bodies bind ``parseString
= replaced_by_pep8("parseString", parse_string)``, modules ``oneOf = replaced_by_pep8("oneOf",
one_of)``.  The pages listed nothing for the closure's calls, for two reasons:

- a test of a name gave the name what it tests for as a source like an annotation
  (``fn`` "is a ``type``" in the whole function), which hid what the callers hand the
  parameter; a test says only that the name may be such a thing (``+:T``), and where it
  says no more than that it is some class or some function (``type``,
  ``types.FunctionType``), the classes and functions the callers hand say which;
- a call in a class body that hands on a name the class body binds (``parse_string``, a
  method defined just above) read the name as the module's, which has none.

With the callers' functions known, the test ``["self"] == list(inspect.signature(fn)
.parameters)[:1]`` picks the branch: ``fn(self, ...)`` calls the methods, ``fn(*args)`` the
rest (else each closure would list both, half of them wrongly).

Every expected edge below is read off the source by hand.
"""

from __future__ import annotations

import ast

import pytest
from ig_helpers import build_files, calls_at
from indexgen.extract.instance_tests import self_first

FILES = {
    "pkg/__init__.py": "",
    "pkg/util.py": '''
        import inspect
        import types
        from functools import wraps


        def replaced_by_pep8(compat_name, fn):
            fn = getattr(fn, "__func__", fn)
            if ["self"] == list(inspect.signature(fn).parameters)[:1]:
                @wraps(fn)
                def _inner(self, *args, **kwargs):
                    return fn(self, *args, **kwargs)  # SELF
            else:
                @wraps(fn)
                def _inner(*args, **kwargs):
                    return fn(*args, **kwargs)  # PLAIN
            _inner.__name__ = compat_name
            if isinstance(fn, types.FunctionType):
                _inner.__kwdefaults__ = fn.__kwdefaults__
            elif isinstance(fn, type) and hasattr(fn, "__init__"):
                _inner.__kwdefaults__ = fn.__init__.__kwdefaults__
            return _inner


        def deprecated(fn):
            def inner(*args):
                return fn(*args)  # WRAPPED
            if isinstance(fn, type):
                inner.__doc__ = fn.__doc__
            return inner
    ''',
    "pkg/core.py": '''
        from pkg.util import deprecated, replaced_by_pep8


        class Element:
            def parse_string(self, text):
                return text

            parseString = replaced_by_pep8("parseString", parse_string)


        def one_of(words):
            return words.split()


        oneOf = replaced_by_pep8("oneOf", one_of)


        def split_words(words):
            return words.split()


        splitWords = deprecated(split_words)


        def use(e: Element):
            e.parseString("x")
            return oneOf("a b"), splitWords("c d")
    ''',
    "pkg/jobs.py": '''
        class Task:
            def start(self):
                return 1


        class Batch:
            def start(self):
                return 2


        def make_batch():
            return Batch()


        class Runner:
            def __call__(self):
                return 3


        def build(kind):
            if isinstance(kind, type):
                kind.__name__
            else:
                kind()  # ELSE
            return kind()  # OUT


        def run_task(job):
            if isinstance(job, Task):
                job.start()  # IN


        def outer():
            def each(item):
                if isinstance(item, type):
                    pass
                return item()  # NESTED
            return each(make_batch)


        def main():
            build(Task)
            build(make_batch)
            build(Runner())
            run_task(Task())
    ''',
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("tested") / "src", FILES)


@pytest.mark.parametrize(("marker", "expected"), [
    # Element's body hands replaced_by_pep8 its method parse_string, a module one_of; the
    # closures _inner (listed as replaced_by_pep8's) call each in the branch its signature
    # picks: fn(self, ...) where its first parameter is self
    ("SELF", {"core:Element.parse_string"}),
    ("PLAIN", {"core:one_of"}),
])
def test_a_shim_calls_what_the_class_body_and_the_module_hand_it(pages, marker, expected):
    assert calls_at(pages, "pkg/util.py", "# " + marker) == expected


def test_a_shim_calls_the_function_a_module_hands_it(pages):
    # splitWords = deprecated(split_words): inner calls split_words; the later
    # isinstance(fn, type) test says fn may also be a class, not that it is one only
    assert calls_at(pages, "pkg/util.py", "# WRAPPED") == {"core:split_words"}


@pytest.mark.parametrize(("marker", "expected"), [
    # a test that kind is some class leaves open which: outside its branch, the classes
    # and functions the callers hand (Task, constructed; make_batch).  Not the instance
    # Runner() (a limit: its __call__ runs there; on torch, the instances handed to such
    # a parameter were mostly what an imprecise caller's value held, never handed)
    ("OUT", {"jobs:Task", "jobs:make_batch"}),
    # its else: no class, so the function
    ("ELSE", {"jobs:make_batch"}),
    # a nested function's parameter: the closure's one caller hands make_batch
    ("NESTED", {"jobs:make_batch"}),
    # a guard (it passes before the change too): in the branch of a test for a class of
    # the tree, that class
    ("IN", {"jobs:Task.start"}),
])
def test_a_test_for_some_class_adds_to_what_the_callers_hand(pages, marker, expected):
    assert calls_at(pages, "pkg/jobs.py", marker) == expected


@pytest.mark.parametrize(("test", "expected"), [
    ('["self"] == list(inspect.signature(fn).parameters)[:1]', "fn"),  # pyparsing's
    ('list(signature(fn).parameters)[:1] == ["self"]', "fn"),
    ('list(inspect.signature(fn).parameters)[0] == "self"', "fn"),
    ('"self" in inspect.signature(fn).parameters', "fn"),
    # no such test: another string, another index, another attribute, another comparison
    ('["cls"] == list(inspect.signature(fn).parameters)[:1]', None),
    ('list(inspect.signature(fn).parameters)[1] == "self"', None),
    ('"self" in inspect.signature(fn).return_annotation', None),
    ('"self" != list(inspect.signature(fn).parameters)[0]', None),
])
def test_what_a_test_of_the_first_parameter_reads(test, expected):
    found = self_first(ast.parse(test, mode="eval").body)
    assert (found[0] if found else None) == expected
