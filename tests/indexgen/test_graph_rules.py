"""The call graph's rules for code nobody here wrote (issue 31), on a small project written
here: every expected edge (and every edge that must not be there) is read off the source by
hand.  The same measure on real packages is ``test_trace_recall.py``; these cases name the
rule each one exercises, so that breaking a rule breaks its case.
"""

from __future__ import annotations

import pytest
from ig_helpers import build_files, callees_at, calls_line, project_of, symbol_section
from page_claims import page_call_edges, page_callers

FILES = {
    "pkg/__init__.py": "",
    "pkg/shapes.py": '''
        class Shape:
            def area(self) -> float:
                return 0.0

            def describe(self) -> str:
                return str(self.area())  # self: an override in a subclass may run


        class Square(Shape):
            def area(self) -> float:
                return 1.0

            def side(self) -> float:
                return 1.0


        class Circle(Shape):
            def area(self) -> float:
                return 3.0

            def radius(self) -> float:
                return 1.0


        def measure(s: Square | Circle) -> float:
            if isinstance(s, Square):
                return s.side()  # narrowed: a Square
            elif isinstance(s, Circle):
                return s.radius()  # narrowed: a Circle
            return s.area()  # neither: both returned above


        def measure_else(s: Square | Circle) -> float:
            if isinstance(s, Square):
                return s.area()  # a Square: Square.area only
            else:
                return s.area()  # not a Square: Circle.area only


        def measure_and(s: Square | Circle, ok: bool) -> float:
            if ok and not isinstance(s, Square):
                return s.area()  # a conjunct not: Circle.area only
            if ok and isinstance(s, Circle):
                return 0.0
            return s.area()  # past an and: either (ok may have been false)


        def measure_guard(s: Square | Circle) -> float:
            if not isinstance(s, Circle):
                raise TypeError("a circle")
            return s.area()  # after the guard: a Circle


        def measure_assert(s: Square | Circle) -> float:
            assert isinstance(s, Square)
            return s.area()  # after the assert: a Square


        def measure_rebound(s: Square | Circle, other: Circle) -> float:
            if isinstance(s, Square):
                s = other
                return s.area()  # bound again: no longer narrowed (a Circle or a Square)
            return 0.0


        def exact() -> float:
            return Shape().area()  # made right there: no override runs


        def any_shape(s: Shape) -> float:
            return s.area()  # Shape.area, or an override in Square or Circle


        def twice(s: Shape, t: Shape) -> float:
            return s.area() + t.area() + s.describe()  # each callee once on this line


        def tell(s: Shape) -> str:
            return s.describe()  # no subclass overrides describe
        ''',
    "pkg/rules.py": '''
        from typing import Protocol


        class Core:
            pass


        class Inline:
            pass


        def normalize(state: Core) -> None:
            pass


        def balance(state: Inline) -> None:
            pass


        def text(state: Inline, silent: bool) -> bool:
            return silent


        def make_rule():
            def _rule(state: Inline, silent: bool) -> bool:  # a closure of two arguments
                return silent
            return _rule


        class Chain:
            def __init__(self):
                self.rules = []

            def push(self, fn):
                self.rules.append(fn)


        CORE = Chain()
        CORE.push(normalize)
        INLINE = Chain()
        INLINE.push(text)
        INLINE.push(balance)
        closure_rule = make_rule()
        INLINE.push(closure_rule)


        def process(state: Core) -> None:
            for rule in CORE.rules:
                rule(state)  # one argument, a Core: normalize only


        def tokenize(state: Inline) -> None:
            for rule in INLINE.rules:
                rule(state, False)  # two arguments: text and the closure only


        class Validator(Protocol):
            def __call__(self, data) -> None: ...

            def check(self, data) -> None: ...


        class Strict(Validator):
            def check(self, data) -> None:
                pass


        def validate(v: Validator, data) -> None:
            v.check(data)  # a structural type: its stub never runs; an explicit subclass may
        ''',
    "pkg/curried.py": '''
        import functools


        def curry(n):
            def wrapper(fun):
                return functools.wraps(fun)(_curry(n, fun))
            return wrapper


        def _curry(n, fun):
            def call(*args):
                if len(args) < n:
                    return call
                return fun(*args)  # each function @curry decorates
            return call


        def announce(fn):
            fn()  # each function @announce decorates, when it is defined
            return fn


        @curry(1)
        def add(a, b):
            return a + b


        @curry(1)
        def mul(a, b):
            return a * b


        @announce
        def hello():
            pass


        def twice(x):
            def go():
                return x
            go()  # the closure: code of twice
            return go
        ''',
    "pkg/meta.py": '''
        class Meta(type):
            pass


        class Model(metaclass=Meta):
            def __init__(self):
                pass


        class Child(Model):  # a Meta too, through its base
            def __init__(self):
                pass


        def build(nested: type[Child] | Child):
            if not isinstance(nested, Meta):
                return nested()  # an instance called: no constructor
            return nested()  # a class, an instance of its metaclass: its constructor
        ''',
    "pkg/compat.py": '''
        import sys

        if sys.version_info >= (3, 11):
            def parse(text):
                return text
        else:
            def parse(text):
                return text.strip()

        try:
            from ._speedups import escape
        except ImportError:
            def escape(text):
                return text

        def once():
            return 1

        def once():  # redefined: this one is the module's
            return 2


        class Reader:
            if sys.platform == "win32":
                def read(self):
                    return "w"
            else:
                def read(self):
                    return "p"

            @property
            def size(self):
                return 1

            @size.setter
            def size(self, value):
                pass

            def use(self):
                return self.read()  # either platform's


        def run(text):
            parse(text)  # either version's
            escape(text)  # the fallback, or the compiled one
            once()  # the second
            return Reader().read()  # either platform's
        ''',
    "pkg/jobs.py": '''
        from dataclasses import dataclass
        from typing import Any


        def work():
            return 1


        @dataclass
        class Job:
            action: Any


        def start():
            job = Job(work)
            return job.action()  # a field its constructor's callers fill
        ''',
    "pkg/narrow2.py": '''
        from typing import Any, Callable


        class Cmd:
            def __call__(self):
                return 1

            def inner(self):
                return 2


        def early(x: "Cmd | Callable[..., Any]"):
            if isinstance(x, Cmd):
                return None
            return x()  # never a Cmd after the early return


        def convert(callback: "Cmd | Callable[..., Any]"):
            if isinstance(callback, Cmd):
                callback = callback.inner
            return callback()  # never a Cmd after the rebinding


        def keep(callback: "Cmd | Callable[..., Any]"):
            if isinstance(callback, Cmd):
                callback = Cmd()
            return callback()  # a Cmd again: the rebinding's
        ''',
    "pkg/lambda_tests.py": '''
        class A:
            def run(self):
                return 1


        def other():
            is_a = lambda v: isinstance(v, A)  # noqa: E731
            go = lambda v: v.run()  # noqa: E731 - another lambda's v
            return is_a, go
        ''',
    "pkg/exact.py": '''
        class Base:
            def source(self):
                return "b"


        class Sub(Base):
            def source(self):
                return "s"


        def get_cls(name: str) -> "type[Base]":
            return Sub if name else Base


        def run(name: str):
            cls = get_cls(name)
            obj = cls()
            return obj.source()  # a class held in a name: Base or a subclass


        def made():
            obj = Base()
            return obj.source()  # Base by its own name: exactly Base
        ''',
    "pkg/unionret.py": '''
        from typing import Any, Callable


        class Cmd:
            def __call__(self):
                return 1


        def command(name: Any = None) -> "Cmd | Callable[[Any], Cmd]":
            def decorator(f: Any) -> Cmd:
                return Cmd()

            if callable(name):
                return decorator(name)
            return decorator


        def group(f: Any):
            return command()(f)  # the closure the returns give, or a Cmd's __call__
        ''',
    "pkg/frames.py": '''
        import types


        def where(frame: types.FrameType):
            frame.clear()
            return frame.f_code.co_filename.upper()
        ''',
    "pkg/bound.py": '''
        class Error(Exception):
            def show(self):
                return "error"


        class UsageError(Error):
            def show(self):
                return "usage"


        def main(e: Error):
            report = e.show
            return report()  # Error.show, or the override of e's class
        ''',
    "pkg/tuples.py": '''
        class A:
            def run(self):
                return 1


        class B:
            def go(self):
                return 2

            def run(self):
                return 3


        def pair():
            return A(), B()


        def use():
            a, b = pair()
            return a.run()  # the first place of the returned tuple


        TABLE = [("a", A), ("b", B)]


        def table():
            for name, cls in TABLE:
                name.run()  # a string, not a class


        class Registry:
            def __init__(self):
                self.pairs = []

            def register(self, pred, fn):
                self.pairs.insert(0, (pred, fn))

            def dispatch(self, x):
                for pred, fn in self.pairs:
                    if pred(x):  # the predicate of a pair registered
                        return fn(x)  # the handler of a pair registered


        def is_a(x):
            return True


        def handle_a(x):
            return x


        def setup(reg: Registry):
            reg.register(is_a, handle_a)
        ''',
    "pkg/outside.py": '''
        import io


        class CopyingIO(io.BytesIO):
            def write(self, data):
                return super().write(data)


        def dump(out: io.BytesIO):
            return out.write(b"x")  # io.BytesIO.write, or the override the build defines
        ''',
    "pkg/autofn.py": '''
        import torch


        class Node(torch.autograd.Function):
            @classmethod
            def run(cls, x):
                return cls.apply(x)  # torch's apply runs a subclass's forward


        class Double(Node):
            @staticmethod
            def forward(ctx, x):
                return x
        ''',
    "pkg/conv.py": '''
        class Converter:
            def structure(self, obj):
                return obj


        global_converter = Converter()
        structure = global_converter.structure
        ''',
    "pkg/conv_use.py": '''
        from pkg.conv import structure


        def load(x):
            return structure(x)  # the method the module attribute is bound to
        ''',
    "pkg/wrapped.py": '''
        import functools
        from functools import partial


        def work(a, b):
            return a + b


        class C:
            def m(self, x):
                return x

            def setup(self):
                self.cached = functools.lru_cache(maxsize=None)(self.m)
                self.bound = partial(self.m)

            def run(self):
                self.cached(1)  # the method the cache was made for
                return self.bound(2)  # the method partial bound


        def use():
            f = partial(work, 1)
            return f(2)  # the function partial bound
        ''',
    "pkg/sig.py": '''
        from typing import Callable


        class Job:
            def __init__(self, action: Callable[[], int]):
                self.action = action

            def run(self):
                return self.action()  # which function, only a caller could say
        ''',
    "pkg/widen.py": '''
        class Plain:
            def run(self):
                return 1


        class Fancy:
            def run(self):
                return 2


        def use(runner, fallback: bool):
            job = Plain() if fallback else runner
            return job.run()  # resolved in the first round, widened in the second


        def main():
            fancy = Fancy()
            return use(fancy, False)
        ''',
    "pkg/supers.py": '''
        import threading


        class Part:
            def run(self) -> int:
                return 1


        class Base:
            def __init__(self) -> None:
                super().__init__()  # object's: a builtin, not on the page

            def make(self) -> Part:
                return Part()

            @classmethod
            def build(cls) -> "Base":
                return cls()


        class Child(Base):
            def __init__(self) -> None:
                super(Child, self).__init__()  # two arguments: Base's

            def make(self) -> Part:
                return super(Child, self).make()  # Base's, no override

            def go(self) -> int:
                return super().make().run()  # what Base.make returns

            @classmethod
            def build(cls) -> "Child":
                return super(Child, cls).build()  # a classmethod's super


        class Grand(Child):
            def make(self) -> Part:
                return super(Child, self).make()  # past Child: Base's


        class Worker(threading.Thread):
            def __init__(self) -> None:
                super(Worker, self).__init__()  # an outside base's


        class Oops(ValueError):
            def __init__(self) -> None:
                super().missing()  # no such method: not resolved
        ''',
    "pkg/classes.py": '''
        class Parser:
            @staticmethod
            def kind(text: str) -> str:
                return ""


        class Fenced(Parser):
            @staticmethod
            def kind(text: str) -> str:
                return "fenced"


        class Plugin:
            parser: type[Parser]

            def parse(self, text: str) -> str:
                return self.parser.kind(text)  # a class value: any subclass's


        def direct(text: str) -> str:
            return Parser.kind(text)  # the class named: its own


        class ParseError(Exception):
            def __init__(self, line: int) -> None:
                self.line = line

            @classmethod
            def at(cls, line: int) -> "ParseError":
                return cls(line)  # cls: this class or a subclass


        class EmptyKey(ParseError):
            def __init__(self, line: int) -> None:
                super().__init__(line)


        def fail(line: int, error: type[ParseError] = ParseError) -> ParseError:
            return error(line)  # a class value: any subclass's constructor


        def fail_plainly(line: int) -> ParseError:
            error = ParseError
            return error(line)  # a local name bound to the class by name


        def resolve(error: ParseError | type[ParseError]) -> ParseError:
            if isinstance(error, type):
                return error(1)  # narrowed to the class
            return error.at(2)  # not a class: the instance
        ''',
    "pkg/tables.py": '''
        class Container:
            def append(self, k, v) -> None:
                pass

            def render(self) -> str:
                return ""


        class Item:
            @property
            def value(self) -> Container:
                return Container()


        class Table(Item):
            pass


        def add(last: Table, k, v) -> None:
            last.value.append(k, v)  # appended to here, through another object


        def show(table: Table) -> str:
            return table.value.render()  # still the property's Container
        ''',
    "pkg/visits.py": '''
        from typing import Callable


        class Visitor:
            def visit(self, kind: str) -> int:
                return getattr(self, "visit_" + kind)()  # any visit_ method

            def visit_a(self) -> int:
                return 1

            def convert(self, name: str, value: str) -> str:
                converter: Callable[[str], str] = getattr(self, f"_process_{name}")
                return converter(value)  # the method named at run time

            def _process_x(self, v: str) -> str:
                return v

            def exact(self) -> int:
                return getattr(self, "visit_a")()  # a name stated whole

            def vague(self, name: str) -> int:
                return getattr(self, "_" + name)()  # too little stated: not resolved


        Op = Callable[[int], int]


        class Calc:
            def _op_add(self, x: int) -> int:
                return x

            def op(self, name: str) -> Op:
                fn: Op = getattr(self, f"_op_{name}")
                return fn

            def run(self, name: str) -> int:
                return self.op(name)(1)  # what op returns: an Op, which fn names


        def read_idle(n: int) -> int:
            return n


        class ChunkedReader:
            def __init__(self, n: int) -> None:
                self.n = n


        READERS = {"idle": read_idle, "body": {"chunked": ChunkedReader}}


        def reader(kind: str) -> object:
            return READERS["body"][kind](1)  # a table inside the table


        class Sub(Visitor):
            def visit_b(self) -> int:
                return 2

            def other(self) -> int:
                return 3
        ''',
    "pkg/parsers.py": '''
        from typing import Any, Literal, overload


        class Ruler:
            def enable(self) -> None:
                pass


        class Block:
            def __init__(self) -> None:
                self.ruler = Ruler()


        class Inline:
            def __init__(self) -> None:
                self.ruler = Ruler()


        class Md:
            def __init__(self) -> None:
                self.block = Block()
                self.inline = Inline()

            @overload
            def __getitem__(self, name: Literal["block"]) -> Block: ...

            @overload
            def __getitem__(self, name: str) -> Any: ...

            def __getitem__(self, name: str) -> Any:
                return {"block": self.block, "inline": self.inline}[name]

            def enable(self, name: str) -> None:
                self[name].ruler.enable()  # an entry of the table __getitem__ reads
        ''',
    "pkg/defaults.py": '''
        class RendererHTML:
            def __init__(self, parser=None) -> None:
                self.parser = parser


        class RendererText(RendererHTML):
            def __init__(self, parser=None) -> None:
                self.parser = parser


        class Md:
            def __init__(self, renderer_cls=RendererHTML, *, other=RendererHTML) -> None:
                self.renderer = renderer_cls(self)  # a default, or what a caller hands
                # (the tree's callers all hand one; a user may not)
                self.other = other()  # a keyword-only default


        def make() -> Md:
            return Md(RendererText)


        ''',
    "pkg/errors.py": '''
        class ValidationError(Exception):
            def normalized(self) -> dict:
                return {}


        class Other(Exception):
            def normalized(self) -> dict:
                return {}


        def load(data):
            try:
                return data
            except ValidationError as err:
                return err.normalized()  # the name an except clause binds


        def load2(data):
            try:
                return data
            except (ValidationError, Other) as err:
                return err.normalized()  # either class of the tuple
        ''',
    "pkg/aliases.py": '''
        from typing import Callable, Final, TypeAlias

        Exec: TypeAlias = Callable[[str], object]
        Parts: TypeAlias = "list[Part]"


        class Part:
            def run(self) -> None:
                pass


        class Caller:
            def __init__(self, execute: Exec, parts: Parts) -> None:
                self._final: Final = execute
                self._plain = execute
                self.parts = parts

            def call(self) -> object:
                return self._final("x")  # a bare Final: the value assigned

            def call_plain(self) -> object:
                return self._plain("x")  # an alias of a Callable: what callers hand

            def run_all(self) -> None:
                for part in self.parts:
                    part.run()  # an alias of a list of Part


        class Manager:
            def execute(self, name: str) -> object:
                return name

            def make(self) -> Caller:
                return Caller(self.execute, [])
        ''',
    "pkg/lambdas.py": '''
        import functools
        from typing import Callable


        class Node:
            def weight(self) -> int:
                return 1

            def name(self) -> str:
                return "n"


        class Edge:
            def weight(self) -> int:
                return 2


        def heaviest(nodes: list[Node]) -> Node:
            return max(nodes, key=lambda n: n.weight())  # an element of nodes


        def pairs(nodes: list[Node], edges: list[Edge]) -> list:
            return list(map(lambda n, e: (n.name(), e.weight()), nodes, edges))  # n, e


        def light(edges: list[Edge]) -> list:
            return list(filter(lambda e: e.weight() < 2, edges))  # an Edge


        def double(x: int) -> int:
            return 2 * x


        def square(x: int) -> int:
            return x * x


        def chain(*fns):
            return lambda x: functools.reduce(lambda acc, f: f(acc), fns, x)  # each one


        def run(x: int) -> int:
            return chain(double, square)(x)


        def names(pool, nodes: list[Node]):
            return pool.map(lambda n: n.name(), nodes)  # a method named map: not read


        def _first(flat: list) -> int:
            return 0


        def split(x) -> tuple[list, Callable[[list], int]]:
            return [x], _first


        def join(x) -> int:
            flat, rebuild = split(x)
            return rebuild(flat)  # the place the annotated tuple leaves open
        ''',
    "pkg/casts.py": '''
        import typing
        from typing import cast


        class Job:
            def run(self) -> None:
                pass


        class Queue(set):
            def drain(self) -> None:
                pass


        class Other:
            def run(self) -> None:
                pass


        class Holder:
            queue_class = Queue

            def bare(self, x: object) -> None:
                cast(Job, x).run()  # the type a bare cast names

            def dotted(self, x: object) -> None:
                typing.cast(Job, x).run()  # the type typing.cast names

            def quoted(self, x: object) -> None:
                typing.cast("Job | None", x).run()  # a type written as a string

            def kept(self, x: Other) -> None:
                cast(Job, x).run()  # the type, not what x was

            def runtime(self) -> None:
                make = typing.cast("type[set]", self.queue_class)
                make().drain()  # a builtin type: what the value holds
        ''',
    "pkg/callables.py": '''
        import dataclasses
        from typing import Callable, Optional


        class Option:
            def to_seq(self) -> list:
                return []


        def some(x: int) -> Option:
            return Option()


        def choose(chooser: Callable[[int], Option], x: int) -> list:
            return chooser(x).to_seq()  # what the Callable returns


        def choose_opt(chooser: Optional[Callable[..., Option]], x: int) -> list:
            return chooser(x).to_seq()  # an Optional Callable's return


        def use() -> list:
            return choose(some, 1)


        def split(x: int) -> tuple[int, Callable[[int], Option]]:
            return x, some


        def join(x: int) -> list:
            n, make = split(x)
            return make(n).to_seq()  # the place a Callable with a return type leaves open


        @dataclasses.dataclass
        class Step:
            combine: Callable[[int], Option]

            def run(self) -> list:
                return self.combine(1).to_seq()  # a field typed Callable: what is handed


        def steps() -> Step:
            def combine(x: int) -> Option:
                return Option()

            return Step(combine=combine)


        def adder(n: int):
            def add(x: int) -> int:
                return x + n

            return add
        ''',
    "pkg/protocols.py": '''
        import typing as t
        from typing import Protocol

        if t.TYPE_CHECKING:
            class VisitCallable(Protocol):
                def __call__(self, node: int) -> t.Any: ...


        class Runner(Protocol):
            def __call__(self) -> "Result": ...


        class Result:
            def show(self): ...


        class Visitor:
            def get_visitor(self, kind: str) -> t.Optional["VisitCallable"]:
                return getattr(self, f"visit_{kind}", None)

            def visit(self, kind):
                f = self.get_visitor(kind)
                if f is not None:
                    return f(1)  # a callable protocol: what get_visitor returns

            def visit_a(self, node): ...

            def visit_b(self, node): ...


        def use(r: Runner):
            r().show()  # what the protocol's __call__ returns
        ''',
    "pkg/unions.py": '''
        from typing import Optional, Sequence, Union


        class Text:
            def __init__(self, n=0): ...

            def measure(self): ...


        class Panel:
            def __init__(self, n=0): ...

            def measure(self): ...


        Renderable = Union[Text, Panel]
        Arg = Optional[Union[tuple, Sequence["Arg"], Text]]


        def use(r: Renderable):
            r.measure()  # an alias written without TypeAlias


        def rebuild(arg: Arg):
            if isinstance(arg, (list, tuple)):
                return type(arg)([])  # narrowed to a list or tuple: no constructor of Text
            return type(arg)()  # the rest: Text


        class User:
            def one(self, value: Text):
                return type(value)(1)  # one's value

            def two(self, value: Panel):
                return type(value)(2)  # two's value, not one's
        ''',
    "pkg/decos.py": '''
        import functools


        def register(f):
            return f


        def curry(n):
            def deco(f):
                return f
            return deco


        @register  # bare
        def a(): ...


        @curry(1)  # with arguments
        def b(): ...


        @register  # on a class
        class C:
            @functools.cache  # the standard library's: left out
            def m(self): ...
        ''',
    "pkg/slices.py": '''
        from typing import List


        class Hook:
            def process(self): ...


        class Console:
            def __init__(self):
                self._hooks: List[Hook] = []

            def render(self, lines):
                hooks = self._hooks[:]
                for hook in hooks:
                    hook.process()  # a slice of the list: its elements
                return ", ".join(lines), [1, 2].index(1)  # builtins on literals
        ''',
    "pkg/ifexp.py": '''
        def lower(x):
            return x


        def make_getter(postprocess=None):
            def getter(item):
                if postprocess is not None:
                    item = postprocess(item)  # handed through a conditional expression
                return item
            return getter


        def do_sort(case_sensitive):
            return make_getter(postprocess=lower if not case_sensitive else None)


        def run(fn):
            return fn(1)  # handed by position through an and


        def go(fast):
            return run(fast and lower)
        ''',
    "pkg/structural.py": '''
        from typing import Protocol, Union


        class Renderable(Protocol):
            def render(self, width: int) -> str: ...

            def measure(self) -> int: ...


        class Extended(Renderable, Protocol):
            def extra(self) -> None: ...


        class Cast(Protocol):
            def cast(self) -> Renderable: ...


        class Base:
            def measure(self) -> int:
                return 1


        class Box(Base):
            def render(self, width: int) -> str:  # measure from its project base
                return "box"


        class Wide(Box):
            def render(self, width: int) -> str:
                return "wide"


        class Half:
            def render(self, width: int) -> str:  # no measure: not a Renderable
                return "half"


        class Full:
            def render(self, width: int) -> str:
                return "full"

            def measure(self) -> int:
                return 3

            def extra(self) -> None:
                pass


        class Narrow:
            def render(self) -> str:  # takes no width: not a Renderable
                return "narrow"

            def measure(self) -> int:
                return 4


        class Loose:
            def render(self, *parts) -> str:  # any number of arguments: a Renderable
                return "loose"

            def measure(self, extra: int = 0) -> int:
                return 5


        class NoMeasure:
            def render(self, width: int) -> str:
                return "no"

            def extra(self) -> None:  # the protocol's base's measure is missing
                pass


        def show(item: Renderable) -> str:
            return item.render(80)  # any conforming class


        def size(item: Renderable) -> int:
            return item.measure()  # what the conforming classes run


        def either(item: Union[Renderable, Cast]) -> str:
            return item.render(1)  # Cast has no render


        def more(item: Extended) -> str:
            return item.render(2)  # the members of its protocol base count
        ''',
    "pkg/registry.py": '''
        from pkg.rules import normalize, balance

        FILTERS = {"normalize": normalize, "balance": balance}
        ''',
    "pkg/environment.py": '''
        from pkg.registry import FILTERS as DEFAULT_FILTERS


        class Environment:
            def __init__(self) -> None:
                self.filters = DEFAULT_FILTERS.copy()

            def apply(self, name, value):
                func = self.filters.get(name)
                return func(value)  # through the copy of the registry


        def labels(table, name, fn):
            func = table.get(name)
            func(1)  # a value stated, of unknown type
            fn(2)  # a parameter no caller hands: bound at run time
        ''',
    "pkg/factory.py": '''
        class Builder:
            def __repr__(self):
                return "<Builder>"

            def add_str(self, cls):
                def __str__(self):
                    return self.__repr__()  # the built class's self, not the Builder

                cls.__str__ = __str__
                return self.__repr__()  # the Builder's own

            def add_replace(self, cls_dict):
                cls_dict["r"] = lambda self, **changes: evolve(self, **changes)
                return self

            def typed(self):
                def helper(self: "Builder") -> str:
                    return self.__repr__()  # annotated: a Builder

                return helper


        def evolve(inst, **changes):
            cls = inst.__class__
            return cls(**changes)  # what callers hand: nothing known
        ''',
    "pkg/loops.py": '''
        def first(x):
            return x


        def second(x):
            return x


        def third(x, y):
            return x


        def run_all(stmt):
            for func in [first, second]:
                func(stmt)  # each function of the list literal
            for fn in (third,):
                fn(stmt, 1)  # of a tuple literal
        ''',
    "pkg/branches.py": '''
        from typing import Union


        class Square:
            def area(self) -> float:
                return 1.0

            def grow(self) -> "Square":
                return Square()


        class Circle:
            def area(self) -> float:
                return 3.0


        def pick(s: Union[Square, Circle], flag: bool) -> float:
            if isinstance(s, Square):
                if flag:
                    s = s.grow()
                else:
                    return s.area()  # the other branch: still a Square
                return s.area()  # after the inner if: either
            return 0.0


        def turns(s: Union[Square, Circle]) -> None:
            if isinstance(s, Square):
                for _ in range(2):
                    s.area()  # a later turn sees the new value
                    s = Circle()
        ''',
    "pkg/stacks.py": '''
        class Upper:
            def process(self, x):
                return x


        class Strip:
            def process(self, x):
                return x


        class Serialize:
            def process(self, x):
                return x


        class Stack:
            def __init__(self):
                self.pre = []
                self.post = []

            def run(self, x):
                for f in self.pre:
                    x = f.process(x)  # the pre filters only
                for f in self.post:
                    x = f.process(x)  # the post filters only
                return x


        def build(stack, upper):
            if upper:
                stack.pre.append(Upper())  # stack: what fmt hands
            stack.pre.append(Strip())
            return stack


        def fmt(text):
            stack = Stack()
            stack = build(stack, True)
            stack.post.append(Serialize())
            return stack.run(text)
        ''',
    "pkg/closing.py": '''
        from pkg.callables import adder


        def use() -> int:
            return adder(1)(2)  # a closure made in another file
        ''',
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("rules") / "src", FILES)


def _source_line(pages, rel: str, marker: str) -> int:
    """The line of the source file ``rel`` that holds ``marker``."""
    return next(i for i, text in enumerate((pages[0] / rel).read_text().split("\n"), 1)
                if marker in text)


def _calls(pages, rel: str, marker: str) -> set[str]:
    """The callees ("file:qualname") the "Calls" of the pages list at the line of
    ``marker``; each must also be on the callee's "Called by"."""
    root, out = pages
    line = _source_line(pages, rel, marker)
    calls, callers = set(), set()
    for page in out.rglob("*_docs.md"):
        page_rel = page.relative_to(out).as_posix().removesuffix("_docs.md")
        docs = page.read_text()
        calls |= {e for e in page_call_edges(docs, page_rel, overrides=None) if e[4] == line
                  and e[0] == rel}
        callers |= {e for e in page_callers(docs, page_rel) if e[4] == line and e[0] == rel}
    assert calls == callers, (calls ^ callers)  # one graph, two views
    return {f"{c.split('/')[-1][:-3]}:{a[4:]}" for _r, _c, c, a, _line in calls}


@pytest.mark.parametrize("marker, callees", [
    ("return s.side()  # narrowed", {"shapes:Square.side"}),
    ("return s.radius()  # narrowed", {"shapes:Circle.radius"}),
    # s: Square | Circle, both tested and returned before: no value the build knows is
    # left (the call is counted as on a value of unknown type), not "either"
    ("return s.area()  # neither", set()),
    ("return s.area()  # a Square: Square.area only", {"shapes:Square.area"}),
    ("return s.area()  # not a Square", {"shapes:Circle.area"}),
    ("return s.area()  # after the guard", {"shapes:Circle.area"}),
    ("return s.area()  # a conjunct not", {"shapes:Circle.area"}),
    ("return s.area()  # past an and", {"shapes:Square.area", "shapes:Circle.area"}),
    ("return s.area()  # after the assert", {"shapes:Square.area"}),
    ("return s.area()  # bound again", {"shapes:Square.area", "shapes:Circle.area"}),
])
def test_an_isinstance_test_narrows_the_receiver(pages, marker, callees):
    assert _calls(pages, "pkg/shapes.py", marker) == callees


@pytest.mark.parametrize("marker, callees", [
    ("return str(self.area())", {"shapes:Shape.area", "shapes:Square.area",
                                 "shapes:Circle.area"}),
    ("return Shape().area()", {"shapes:Shape.area", "shapes:Shape"}),
    ("return s.area()  # Shape.area, or", {"shapes:Shape.area", "shapes:Square.area",
                                           "shapes:Circle.area"}),
    ("return s.describe()  # no subclass", {"shapes:Shape.describe"}),
])
def test_a_method_call_lists_the_overrides_that_may_run(pages, marker, callees):
    assert _calls(pages, "pkg/shapes.py", marker) == callees


def test_overrides_are_one_group(pages):
    docs = (pages[1] / "pkg/shapes.py_docs.md").read_text()
    any_shape = symbol_section(docs, "any_shape")
    calls = calls_line(any_shape)
    assert calls.count("or an override in: ") == 1, calls
    assert "[`Square.area`]" in calls.split("or an override in: ")[1], calls


def test_a_line_lists_each_callee_once(pages):
    """Two calls on one line that reach the same methods (and their overrides) make one
    edge per callee: the group of overrides, and each line link, appear once."""
    docs = (pages[1] / "pkg/shapes.py_docs.md").read_text()
    twice = symbol_section(docs, "twice")
    calls = calls_line(twice)
    assert calls.count("[`Shape.area`]") == 1, calls
    assert calls.count("[`Square.area`]") == 1, calls
    assert calls.count("or an override in: ") == 1, calls
    assert "[`Shape.describe`]" in calls, calls
    # the graph itself, which the context hash covers, holds one edge per callee and line
    # (the page would hide a repeat)
    out = project_of(FILES).contexts()["src/pkg/shapes.py"].calls["sym-twice"]
    marks = [(e.line, e.kind, e.key, e.anchor) for e in out]
    assert len(marks) == len(set(marks)) == 4, out  # Shape.area, 2 overrides, describe


def _anchors(pages, marker: str) -> set[str]:
    """The callee anchors at the line of ``marker`` in compat.py (alternatives share a
    qualname: their anchors tell them apart)."""
    return callees_at(pages, "pkg/compat.py", _source_line(pages, "pkg/compat.py", marker))


@pytest.mark.parametrize("marker, anchors", [
    ("parse(text)  # either version's", {"sym-parse", "sym-parse-2"}),
    ("escape(text)  # the fallback", {"sym-escape"}),
    ("once()  # the second", {"sym-once-2"}),
    ("return self.read()  # either", {"sym-Reader.read", "sym-Reader.read-2"}),
    ("return Reader().read()  # either", {"sym-Reader", "sym-Reader.read",
                                         "sym-Reader.read-2"}),
])
def test_every_definition_a_condition_may_pick_is_linked(pages, marker, anchors):
    assert _anchors(pages, marker) == anchors


def test_each_alternative_is_marked_with_its_condition(pages):
    docs = (pages[1] / "pkg/compat.py_docs.md").read_text()
    run = symbol_section(docs, "run")
    calls = calls_line(run)
    assert "[`parse`](#sym-parse) (if sys.version\\_info &gt;= (3, 11))" in calls, calls
    assert "[`parse`](#sym-parse-2) (if not (sys.version\\_info &gt;= (3, 11)))" in calls
    assert "[`escape`](#sym-escape) (if the try block raises ImportError)" in calls, calls
    assert "outside this build: `pkg._speedups.escape`" in calls, calls
    assert "[`once`](#sym-once-2) ([line" in calls  # the only one left: no condition
    assert "[`Reader.read`](#sym-Reader.read) (if sys.platform == 'win32')" in calls, calls


@pytest.mark.parametrize("marker, callees", [
    ("n.weight())  # an element of nodes", {"lambdas:Node.weight"}),
    ("e.weight()), nodes, edges))  # n, e", {"lambdas:Node.name", "lambdas:Edge.weight"}),
    ("e.weight() < 2, edges))", {"lambdas:Edge.weight"}),
    ("f(acc), fns, x)  # each one", {"lambdas:double", "lambdas:square"}),
    ("n.name(), nodes)  # a method named map", set()),
])
def test_a_lambda_handed_to_map_or_reduce_takes_the_elements(pages, marker, callees):
    assert _calls(pages, "pkg/lambdas.py", marker) == callees


@pytest.mark.parametrize("marker, callees", [
    ("self._final(\"x\")  # a bare Final", {"aliases:Manager.execute"}),
    ("self._plain(\"x\")  # an alias of a Callable", {"aliases:Manager.execute"}),
    ("part.run()  # an alias of a list of Part", {"aliases:Part.run"}),
])
def test_a_type_alias_and_a_bare_final_say_what_they_stand_for(pages, marker, callees):
    assert _calls(pages, "pkg/aliases.py", marker) == callees


def test_a_subscript_of_the_instance_is_what_its_getitem_returns(pages):
    # __getitem__ returns {"block": self.block, "inline": self.inline}[name]: either
    assert _calls(pages, "pkg/parsers.py", "self[name].ruler.enable()") == {
        "parsers:Ruler.enable"}


@pytest.mark.parametrize("marker, callees", [
    ("renderer_cls(self)  # a default, or", {"defaults:RendererHTML.__init__",
                                            "defaults:RendererText.__init__"}),
    ("other()  # a keyword-only default", {"defaults:RendererHTML.__init__"}),
])
def test_a_parameter_a_caller_leaves_out_is_its_default(pages, marker, callees):
    assert _calls(pages, "pkg/defaults.py", marker) == callees


@pytest.mark.parametrize("marker, callees", [
    ("err.normalized()  # the name an except", {"errors:ValidationError.normalized"}),
    ("err.normalized()  # either class", {"errors:ValidationError.normalized",
                                          "errors:Other.normalized"}),
])
def test_an_except_clause_binds_an_instance_of_its_classes(pages, marker, callees):
    assert _calls(pages, "pkg/errors.py", marker) == callees


@pytest.mark.parametrize("marker, callees", [
    ("run()  # the type a bare cast names", {"casts:Job.run"}),
    ("run()  # the type typing.cast names", {"casts:Job.run"}),
    ("run()  # a type written as a string", {"casts:Job.run"}),
    ("run()  # the type, not what x was", {"casts:Job.run"}),
    ("drain()  # a builtin type", {"casts:Queue", "casts:Queue.drain"}),
])
def test_a_cast_is_the_type_it_names_or_the_value_it_is_given(pages, marker, callees):
    assert _calls(pages, "pkg/casts.py", marker) == callees


@pytest.mark.parametrize("marker, callees", [
    # the Callable's return type, and what the callers hand (some) for the call itself
    ("to_seq()  # what the Callable returns", {"callables:Option.to_seq", "callables:some"}),
    ("to_seq()  # an Optional Callable's return", {"callables:Option.to_seq"}),
    ("to_seq()  # the place a Callable", {"callables:some", "callables:Option.to_seq"}),
    ("to_seq()  # a field typed Callable", {"callables:steps",
                                           "callables:Option.to_seq"}),
])
def test_calling_a_callable_gives_what_its_annotation_says_it_returns(pages, marker, callees):
    assert _calls(pages, "pkg/callables.py", marker) == callees


def test_a_tuple_place_its_annotation_leaves_open_is_what_is_returned(pages):
    # split() -> tuple[list, Callable[[list], int]] returns ([x], _first)
    assert _calls(pages, "pkg/lambdas.py", "rebuild(flat)  # the place") == {"lambdas:_first"}


@pytest.mark.parametrize("marker, callees", [
    ("rule(state)  # one argument", {"rules:normalize"}),
    ("rule(state, False)  # two", {"rules:text", "rules:make_rule"}),
    ("v.check(data)  # a structural type", {"rules:Strict.check"}),
])
def test_a_call_reaches_the_functions_it_fits(pages, marker, callees):
    assert _calls(pages, "pkg/rules.py", marker) == callees


def test_a_dataclass_field_is_what_its_constructor_is_handed(pages):
    # found in the second round, from the call sites of Job: a first round that forgot the
    # field waits for them would keep its "not resolved" answer
    assert _calls(pages, "pkg/jobs.py", "job.action()  # a field") == {"jobs:work"}


@pytest.mark.parametrize("marker, callees", [
    ("return x()  # never a Cmd after the early", set()),
    ("return callback()  # never a Cmd after the rebinding", {"narrow2:Cmd.inner"}),
    ("return callback()  # a Cmd again", {"narrow2:Cmd.__call__"}),
])
def test_a_name_an_if_tested_is_no_longer_that_type_after_it(pages, marker, callees):
    # after `if isinstance(x, T): return`, x is no T; after `if isinstance(x, T): x = v`
    # (no else) it is no T, or v
    assert _calls(pages, "pkg/narrow2.py", marker) == callees


def test_a_lambdas_isinstance_test_says_nothing_of_another_lambdas_parameter(pages):
    assert _calls(pages, "pkg/lambda_tests.py", "go = lambda v: v.run()") == set()


@pytest.mark.parametrize("marker, callees", [
    ("return obj.source()  # a class held", {"exact:Base.source", "exact:Sub.source"}),
    ("return obj.source()  # Base by its own name", {"exact:Base.source"}),
])
def test_an_instance_of_a_class_held_in_a_name_may_be_of_a_subclass(pages, marker, callees):
    assert _calls(pages, "pkg/exact.py", marker) == callees


def test_a_callable_a_union_annotation_returns_is_what_the_returns_give(pages):
    # -> Cmd | Callable[[Any], Cmd]: the Callable is the nested decorator that is returned
    group = calls_line(symbol_section((pages[1] / "pkg/unionret.py_docs.md").read_text(),
                                      "group"))
    assert "command.&lt;locals&gt;.decorator" in group and "Cmd.__call__" in group


def test_an_attribute_of_an_outside_instances_attribute_is_unknown(pages):
    # frame.clear is types.FrameType's; frame.f_code.co_filename is no name of it
    where = symbol_section((pages[1] / "pkg/frames.py_docs.md").read_text(), "where")
    assert "`types.FrameType.clear`" in calls_line(where)
    assert "co_filename" not in where
    line = _source_line(pages, "pkg/frames.py", "co_filename.upper()")
    assert f"1 call (1 on a value of unknown type: [line {line}](#L{line}))" in where


def test_a_bound_method_kept_in_a_name_may_be_an_override(pages):
    assert _calls(pages, "pkg/bound.py", "return report()") == {"bound:Error.show",
                                                               "bound:UsageError.show"}


@pytest.mark.parametrize("marker, callees", [
    ("return a.run()  # the first place", {"tuples:A.run"}),
    ("name.run()  # a string", set()),
    ("if pred(x):  # the predicate", {"tuples:is_a"}),
    ("return fn(x)  # the handler", {"tuples:handle_a"}),
])
def test_a_tuple_literal_holds_each_value_in_its_place(pages, marker, callees):
    # a returned (A(), B()) unpacked: a is an A only; a table's rows unpacked likewise
    assert _calls(pages, "pkg/tuples.py", marker) == callees


def test_a_value_typed_by_an_outside_class_may_be_a_subclass_the_build_defines(pages):
    assert _calls(pages, "pkg/outside.py", "return out.write") == {"outside:CopyingIO.write"}
    docs = (pages[1] / "pkg/outside.py_docs.md").read_text()
    line = _source_line(pages, "pkg/outside.py", "return out.write")
    # the outside method and its override are one group, in the guide's "or an override
    # in" form (not "one of: CopyingIO.write ...; outside this build: io.BytesIO.write")
    lines = f"([line {line}](#L{line}))"
    assert calls_line(symbol_section(docs, "dump")) == (
        f"- **Calls**: outside this build: `io.BytesIO.write` {lines}, "
        f"or an override in: [`CopyingIO.write`](#sym-CopyingIO.write) {lines}")
    # the page reader takes it for an override group
    at = [e for e in page_call_edges(docs, "pkg/outside.py", overrides=True) if e[4] == line]
    assert at == [("pkg/outside.py", "sym-dump", "pkg/outside.py", "sym-CopyingIO.write", line)]
    assert not [e for e in page_call_edges(docs, "pkg/outside.py", overrides=False)
                if e[4] == line]


def test_what_an_outside_method_runs_is_no_override_of_it(pages):
    # Function.apply runs the forward of the class it is called on: Double.forward is one
    # of the callees, not an override of apply (only a method of apply's name would be)
    run = calls_line(symbol_section((pages[1] / "pkg/autofn.py_docs.md").read_text(),
                                    "Node.run"))
    line = _source_line(pages, "pkg/autofn.py", "return cls.apply(x)")
    lines = f"([line {line}](#L{line}))"
    assert run == (f"- **Calls**: one of: [`Double.forward`](#sym-Double.forward) {lines}; "
                   f"outside this build: `torch.autograd.Function.apply` {lines}")


def test_a_module_attribute_bound_to_a_method_calls_it(pages):
    assert _calls(pages, "pkg/conv_use.py", "return structure(x)") == {
        "conv:Converter.structure"}


@pytest.mark.parametrize("marker, callees", [
    ("self.cached(1)  # the method the cache", {"wrapped:C.m"}),
    ("return self.bound(2)  # the method partial", {"wrapped:C.m"}),
    ("return f(2)  # the function partial", {"wrapped:work"}),
])
def test_partial_and_lru_cache_give_back_the_function_they_are_handed(pages, marker, callees):
    assert _calls(pages, "pkg/wrapped.py", marker) == callees


def test_a_callable_typed_only_by_its_signature_is_counted_as_such(pages):
    run = symbol_section((pages[1] / "pkg/sig.py_docs.md").read_text(), "Job.run")
    line = _source_line(pages, "pkg/sig.py", "return self.action()")
    assert f"1 call (1 on a callable typed only by its signature: [line {line}](#L{line}))" in run


def test_a_call_the_first_round_resolved_from_less_is_widened_in_the_second(pages):
    # the first round knows job only as Plain (what main hands runner comes later): a
    # second round that asked again only the calls left unresolved would keep Plain alone
    assert _calls(pages, "pkg/widen.py", "job.run()  # resolved") == {"widen:Plain.run",
                                                                     "widen:Fancy.run"}


@pytest.mark.parametrize("marker, callees", [
    ("return nested()  # an instance called", set()),
    ("return nested()  # a class, an instance of its metaclass", {"meta:Child.__init__"}),
])
def test_a_class_is_an_instance_of_its_metaclass(pages, marker, callees):
    assert _calls(pages, "pkg/meta.py", marker) == callees


@pytest.mark.parametrize("marker, callees", [
    ("return fun(*args)  # each function @curry", {"curried:add", "curried:mul"}),
    ("fn()  # each function @announce", {"curried:hello"}),
    ("go()  # the closure", {"curried:twice"}),
])
def test_functions_travel_through_decorators_and_closures(pages, marker, callees):
    assert _calls(pages, "pkg/curried.py", marker) == callees


def test_a_closure_is_named_in_its_function(pages):
    docs = (pages[1] / "pkg/curried.py_docs.md").read_text()
    twice = symbol_section(docs, "twice")
    assert "[<code>twice.&lt;locals&gt;.go</code>](#sym-twice)" in twice, twice


@pytest.mark.parametrize("marker, callees", [
    ("super().__init__()  # object's", set()),
    ("super(Child, self).__init__()  # two", {"supers:Base.__init__"}),
    ("super(Child, self).make()  # Base's", {"supers:Base.make"}),
    ("super().make().run()", {"supers:Base.make", "supers:Part.run"}),
    ("super(Child, cls).build()", {"supers:Base.build"}),
    ("super(Child, self).make()  # past Child", {"supers:Base.make"}),
    ("super(Worker, self).__init__()", set()),
])
def test_super_looks_past_the_class_it_names(pages, marker, callees):
    assert _calls(pages, "pkg/supers.py", marker) == callees


@pytest.mark.parametrize("marker, callees", [
    ("return cls(line)", {"classes:ParseError.__init__", "classes:EmptyKey.__init__"}),
    ("return error(line)  # a class value", {"classes:ParseError.__init__",
                                             "classes:EmptyKey.__init__"}),
    ("return error(line)  # a local name", {"classes:ParseError.__init__"}),
    # narrowed by isinstance(error, type): the class it names (its subclasses' constructors
    # take arguments a call through a Union[C, type[C]] rarely knows)
    ("return error(1)  # narrowed", {"classes:ParseError.__init__"}),
    ("return error.at(2)  # not a class", {"classes:ParseError.at"}),
])
def test_calling_a_class_value_lists_the_subclasses_constructors(pages, marker, callees):
    assert _calls(pages, "pkg/classes.py", marker) == callees


@pytest.mark.parametrize("marker, callees", [
    ("self.parser.kind(text)", {"classes:Parser.kind", "classes:Fenced.kind"}),
    ("Parser.kind(text)", {"classes:Parser.kind"}),
])
def test_a_method_of_a_class_value_lists_the_overrides(pages, marker, callees):
    assert _calls(pages, "pkg/classes.py", marker) == callees


@pytest.mark.parametrize("marker, callees", [
    ('getattr(self, "visit_" + kind)()', {"visits:Visitor.visit_a", "visits:Sub.visit_b"}),
    ("return converter(value)", {"visits:Visitor._process_x"}),
    ('getattr(self, "visit_a")()', {"visits:Visitor.visit_a"}),
    ('getattr(self, "_" + name)()', set()),
    ("self.op(name)(1)", {"visits:Calc.op", "visits:Calc._op_add"}),
    ('READERS["body"][kind](1)', {"visits:ChunkedReader.__init__"}),
])
def test_getattr_reaches_the_methods_its_name_fits(pages, marker, callees):
    assert _calls(pages, "pkg/visits.py", marker) == callees


@pytest.mark.parametrize("marker, callees", [
    ("last.value.append(k, v)", {"tables:Container.append"}),
    ("table.value.render()", {"tables:Container.render"}),
])
def test_an_append_elsewhere_leaves_a_property_its_type(pages, marker, callees):
    assert _calls(pages, "pkg/tables.py", marker) == callees


@pytest.mark.parametrize("marker, callees", [
    ("return f(1)  # a callable protocol", {"protocols:Visitor.visit_a",
                                            "protocols:Visitor.visit_b"}),
    ("r().show()  # what the protocol's", {"protocols:Result.show"}),
])
def test_a_callable_protocol_reads_like_callable(pages, marker, callees):
    # a Protocol with __call__ is a callable type written as a class: calling a value it
    # types gives its __call__'s return annotation, and (like Callable[..., Any]) what the
    # function annotated by it returns is read for the call itself
    assert _calls(pages, "pkg/protocols.py", marker) == callees


@pytest.mark.parametrize("marker, callees", [
    ("r.measure()  # an alias", {"unions:Text.measure", "unions:Panel.measure"}),
    ("return type(arg)([])  # narrowed", set()),
    ("return type(arg)()  # the rest", {"unions:Text.__init__"}),
    ("return type(value)(1)  # one's", {"unions:Text.__init__"}),
    ("return type(value)(2)  # two's", {"unions:Panel.__init__"}),
])
def test_aliases_and_the_type_of_a_narrowed_value(pages, marker, callees):
    # X = Union[A, B] is a type alias as X: TypeAlias = ... is; type(x) reads x as the
    # isinstance test at its line narrows it, and as each method's own parameter
    assert _calls(pages, "pkg/unions.py", marker) == callees


@pytest.mark.parametrize("marker, callees", [
    ("@register  # bare", {"decos:register"}),
    ("@curry(1)  # with arguments", {"decos:curry"}),  # curry, and its nested deco
    ("@register  # on a class", {"decos:register"}),
    ("@functools.cache  # the standard", set()),
])
def test_a_decorator_is_called_where_it_decorates(pages, marker, callees):
    assert _calls(pages, "pkg/decos.py", marker) == callees


def test_a_slice_holds_the_elements_and_a_literal_is_a_builtin(pages):
    assert _calls(pages, "pkg/slices.py", "# a slice of the list") == {"slices:Hook.process"}
    docs = (pages[1] / "pkg/slices.py_docs.md").read_text()
    assert "Not resolved" not in symbol_section(docs, "Console.render")  # ", ".join: a builtin


@pytest.mark.parametrize("marker, callees", [
    ("return item.render(80)  # any", {"structural:Box.render", "structural:Wide.render",
                                      "structural:Full.render", "structural:Loose.render"}),
    ("return item.measure()  # what", {"structural:Base.measure", "structural:Full.measure",
                                       "structural:Loose.measure"}),
    ("return item.render(1)  # Cast", {"structural:Box.render", "structural:Wide.render",
                                      "structural:Full.render", "structural:Loose.render"}),
    ("return item.render(2)  # the members", {"structural:Full.render"}),
])
def test_a_protocol_method_runs_on_the_classes_that_conform(pages, marker, callees):
    # PEP 544: a value typed by a Protocol may be of any class that defines its methods
    # (its own or its project bases', and those of the protocol's protocol bases), each
    # taking the arguments the protocol's does, whether or not it inherits from it; the
    # protocol's stub never runs
    assert _calls(pages, "pkg/structural.py", marker) == callees


def test_conforming_classes_are_one_group_and_a_protocol_base_gives_no_member(pages):
    docs = (pages[1] / "pkg/structural.py_docs.md").read_text()
    calls = calls_line(symbol_section(docs, "show"))
    assert calls.startswith("- **Calls**: one of: "), calls  # no callee of its own
    assert "or an override in" not in calls
    either = symbol_section(docs, "either")  # Cast's missing render: not typing.Protocol's
    assert "outside this build" not in either and "Not resolved" not in either, either


def test_a_copy_of_a_registry_holds_its_functions(pages):
    assert _calls(pages, "pkg/environment.py", "# through the copy") == {
        "rules:normalize", "rules:balance"}


def test_a_local_assigned_a_value_of_unknown_type_is_not_a_run_time_name(pages):
    docs = (pages[1] / "pkg/environment.py_docs.md").read_text()
    labels = symbol_section(docs, "labels")  # table.get and func(1): unknown; fn(2): run time
    get, func, fn = (_source_line(pages, "pkg/environment.py", marker) for marker in
                     ("func = table.get(name)", "func(1)", "fn(2)"))
    # each reason names its calls' lines, linked as "Calls" links them
    assert (f"- **Not resolved statically**: 3 calls (2 on a value of unknown type: "
            f"lines [{get}](#L{get}), [{func}](#L{func}); "
            f"1 to a name bound at run time: [line {fn}](#L{fn}))") in labels


@pytest.mark.parametrize("marker, callees", [
    ("return self.__repr__()  # the built", set()),
    ("return self.__repr__()  # the Builder's own", {"factory:Builder.__repr__"}),
    ("return self.__repr__()  # annotated", {"factory:Builder.__repr__"}),
    ("return cls(**changes)  # what callers", set()),
])
def test_a_nested_scope_s_own_self_is_not_the_method_s(pages, marker, callees):
    # a function or lambda nested in a method that takes a self of its own is handed
    # another object (a class factory's __str__, attrs' evolve lambda): its calls on it
    # are not the method's class's, and what it hands on is not the method's instance
    assert _calls(pages, "pkg/factory.py", marker) == callees


@pytest.mark.parametrize("marker, callees", [
    ("func(stmt)  # each function", {"loops:first", "loops:second"}),
    ("fn(stmt, 1)  # of a tuple", {"loops:third"}),
])
def test_a_loop_over_a_literal_takes_each_element(pages, marker, callees):
    assert _calls(pages, "pkg/loops.py", marker) == callees


@pytest.mark.parametrize("marker, callees", [
    ("return s.area()  # the other branch", {"branches:Square.area"}),
    ("return s.area()  # after the inner if", {"branches:Square.area", "branches:Circle.area"}),
    ("s.area()  # a later turn", {"branches:Square.area", "branches:Circle.area"}),
])
def test_a_binding_in_one_branch_leaves_the_other_narrowed(pages, marker, callees):
    assert _calls(pages, "pkg/branches.py", marker) == callees


@pytest.mark.parametrize("marker, callees", [
    ("x = f.process(x)  # the pre", {"stacks:Upper.process", "stacks:Strip.process"}),
    ("x = f.process(x)  # the post", {"stacks:Serialize.process"}),
])
def test_a_loop_target_is_its_own_loop_s_element(pages, marker, callees):
    # f is bound by two loops: in each body it is that loop's element; what build puts
    # into the list of a parameter its caller hands (stack.pre.append) counts there
    assert _calls(pages, "pkg/stacks.py", marker) == callees


@pytest.mark.parametrize("marker, callees", [
    ("item = postprocess(item)  # handed through", {"ifexp:lower"}),
    ("return fn(1)  # handed by position", {"ifexp:lower"}),
])
def test_a_function_handed_through_a_conditional_expression(pages, marker, callees):
    # f if c else None, c and f: the one function the expression may give besides None is
    # handed all the same (c and f gives c when c is false: a bool, no function)
    assert _calls(pages, "pkg/ifexp.py", marker) == callees


def test_super_calls_are_accounted_for(pages):
    docs = (pages[1] / "pkg/supers.py_docs.md").read_text()
    assert "outside this build: `threading.Thread.__init__`" in symbol_section(
        docs, "Worker.__init__")
    assert "Not resolved" not in symbol_section(docs, "Base.__init__")
    line = _source_line(pages, "pkg/supers.py", "super().missing()")
    assert ("- **Not resolved statically**: 1 call (1 on a value of unknown type: "
            f"[line {line}](#L{line}))") in symbol_section(docs, "Oops.__init__")


def test_a_call_of_a_nested_function_says_so_on_the_called_by(pages):
    # steps() hands its nested combine to Step; Step.run calls it: the page of steps lists
    # that caller with the nested function's name, never as a call of steps itself
    root, out = pages
    docs = (out / "pkg/callables.py_docs.md").read_text()
    block = docs.split('<a id="sym-steps"></a>', 1)[1].split("<a id=", 1)[0]
    called_by = next(x for x in block.split("\n") if x.startswith("- **Called by**: "))
    assert "[`Step.run`](#sym-Step.run)" in called_by and ": its nested `combine`)" in called_by


def test_a_call_from_another_file_of_a_nested_function_says_so_too(pages):
    # use() in closing.py calls what adder returns (its nested add) and adder itself: both
    # at one line, the page of adder names the nested function beside that caller
    root, out = pages
    assert _calls(pages, "pkg/closing.py", "# a closure made") == {"callables:adder"}
    docs = (out / "pkg/callables.py_docs.md").read_text()
    block = docs.split('<a id="sym-adder"></a>', 1)[1].split("<a id=", 1)[0]
    called_by = next(x for x in block.split("\n") if x.startswith("- **Called by**: "))
    assert "`closing.use`" in called_by and ": its nested `add`)" in called_by, called_by
