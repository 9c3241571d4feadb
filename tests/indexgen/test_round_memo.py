"""What the call graph's second round keeps of the first round's evaluation
(:meth:`indexgen.analyze.flows.Flows.set_flows`): the values that read nothing a later
round knows better.  A value is provisional where it read what call sites hand a parameter
(not known before the first round ends, and growing while the decorators' flows are
added), or an attribute that a function elsewhere may put into an object; not where no
function of the build puts an attribute of that name."""

from __future__ import annotations

from ig_helpers import callees_by_mark, project_of

CLASSES = {
    "pkg/__init__.py": "",
    "pkg/model.py": '''
        class Engine:
            def run(self):
                return 1


        class Car:
            def __init__(self):
                self.engine = Engine()
                self.wheels = Engine()
        ''',
    "pkg/tune.py": '''
        def make():
            return 1


        def tune(car):
            car.wheels = make()  # a put from elsewhere: what car is, its callers say
        ''',
}


def _settled(files: dict[str, str], text: str) -> bool:
    types = project_of(files).types
    types.expect_flows()
    types.watch()
    assert types.evaluate("src/pkg/model.py", "", text)
    return types.settled()


def test_an_attribute_no_function_puts_anywhere_is_read_as_final():
    assert _settled(CLASSES, "Car().engine")


def test_an_attribute_a_function_puts_elsewhere_is_provisional():
    assert not _settled(CLASSES, "Car().wheels")


REGISTRY = {
    "pkg/__init__.py": "",
    "pkg/reg.py": '''
        KNOWN = []


        def collect(fn):
            KNOWN.append(fn)
            return fn


        def factory():
            return collect


        def first_known():
            return KNOWN[0]


        def run_all():
            for fn in KNOWN:
                fn()  # RUN
        ''',
    # the files' decorators are read in this order: b.py's reads KNOWN, which holds what
    # collect is handed, between a.py's and c.py's adding to it
    "pkg/a.py": '''
        from pkg.reg import factory


        @factory()
        def one():
            return 1
        ''',
    "pkg/b.py": '''
        from pkg.reg import first_known


        @first_known()
        def two():
            return 2
        ''',
    "pkg/c.py": '''
        from pkg.reg import factory


        @factory()
        def three():
            return 3
        ''',
}


def test_what_a_parameter_is_handed_is_read_again_once_every_decorator_handed_it():
    # what collect's fn was found to be while the decorators' flows were being added
    # (one only, when b.py's decorator was read) must not outlive the first round
    assert callees_by_mark(REGISTRY, "pkg/reg.py")["RUN"] >= {"one", "three"}
