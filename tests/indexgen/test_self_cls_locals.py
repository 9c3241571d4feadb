"""``self`` and ``cls`` where they are not the method's own instance or class.

- A method that assigns a local ``cls`` (or ``self``) itself, its first parameter being
  another name: the local is what it is assigned (jinja2's ``Environment.from_string``:
  ``cls = template_class or self.template_class; cls.from_code(...)``), not the method's
  class, whose overrides of the method it calls are no callees;
- a local bound only to classes by their own names (torch's
  ``ExternKernelCaller.output_node``: ``cls = ir.ExternKernelOut if ... else
  ir.ExternKernelAlloc; cls(...)``) is exactly those classes: the ``__init__`` of their
  subclasses does not run;
- a class method that rebinds its own ``cls`` (``cls = cls.base``) may be either: its class
  and what it assigns;
- ``self`` in a function outside a class, annotated (jinja2's ``_make_binop``: ``def
  visitor(self: "CodeGenerator", ...)`` nested in a module function) is what the annotation
  says, and a call on it may run the overrides of the subclasses, as on any parameter.

Guards (these pass before the change too): a nested function's own ``cls = type(m)`` is not
the method's (torch's ``ScriptMeta.__init__``); an annotated ``self: Keeper`` and a static
``__new__``'s ``cls`` stay the method's class.

Every expected edge is read off the source by hand.
"""

from __future__ import annotations

import pytest
from ig_helpers import build_files, calls_at

FILES = {
    "pkg/__init__.py": "",
    "pkg/env.py": '''
        from __future__ import annotations


        class Template:
            @classmethod
            def from_code(cls, code):
                return code

            def __init__(self, code=None):
                self.code = code


        class Fancy(Template):
            @classmethod
            def from_code(cls, code):
                return code

            def __init__(self, code=None):
                self.code = code


        class Plain:
            def __init__(self, code=None):
                self.code = code


        class Env:
            template_class: type[Template] = Template

            @classmethod
            def from_code(cls, code):
                return code

            def from_string(self, source, template_class: type[Template] | None = None):
                cls = template_class or self.template_class
                return cls.from_code(source)  # FROM_STRING

            def make(self, flag):
                cls = Template if flag else Plain
                return cls(1)  # MAKE

            def make_named(self, flag):
                cls = Template if flag else Plain
                return cls.from_code(1)  # MAKE_NAMED

            @classmethod
            def rebind(cls, other: type[Plain]):
                if other is not None:
                    cls = other
                return cls.from_code(1)  # REBIND


        class SubEnv(Env):
            @classmethod
            def from_code(cls, code):
                return code

            def __init__(self):
                pass


        class Meta(type):
            def __init__(cls, name, bases, attrs):
                def stubs(module):
                    cls = type(module)
                    return cls
                cls.prepare()  # META

            def prepare(cls):
                pass


        class Keeper:
            def helper(self):
                pass

            def run(self: Keeper, other):
                self.helper()  # ANNOTATED_SELF

            @staticmethod
            def __new__(cls, *args):
                cls.helper(1)  # NEW
                return object.__new__(cls)


        class SubKeeper(Keeper):
            def helper(self):
                pass
    ''',
    "pkg/gen.py": '''
        from __future__ import annotations


        class CodeGenerator:
            def write(self, x):
                pass


        class Sub(CodeGenerator):
            def write(self, x):
                pass


        def make_binop(op):
            def visitor(self: "CodeGenerator", node):
                self.write(node)  # VISIT
            return visitor


        def visit_top(self: CodeGenerator, node):
            self.write(node)  # TOP
    ''',
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("selfcls") / "src", FILES)


@pytest.mark.parametrize(("marker", "expected"), [
    # cls is Template (or a subclass: type[Template]), never Env or its subclasses
    ("FROM_STRING", {"env:Template.from_code", "env:Fancy.from_code"}),
    # cls is one of two classes named by their names: their own __init__, no subclass's
    ("MAKE", {"env:Template.__init__", "env:Plain.__init__"}),
    ("MAKE_NAMED", {"env:Template.from_code"}),
])
def test_assigned_cls_is_what_it_is_assigned(pages, marker, expected):
    assert calls_at(pages, "pkg/env.py", marker) == expected


@pytest.mark.parametrize(("marker", "expected"), [
    # a nested function's own cls is not the method's: cls is the Meta instance
    ("META", {"env:Meta.prepare"}),
    # an annotated self, and a static __new__'s cls handed by callers: the class's own
    ("ANNOTATED_SELF", {"env:Keeper.helper", "env:SubKeeper.helper"}),
    ("NEW", {"env:Keeper.helper", "env:SubKeeper.helper"}),
])
def test_the_method_own_self_and_cls(pages, marker, expected):
    assert calls_at(pages, "pkg/env.py", marker) == expected


def test_class_method_rebinding_cls_may_be_either(pages):
    # Env (or a subclass: SubEnv's override), or a Plain, which has no from_code
    assert calls_at(pages, "pkg/env.py", "REBIND") == {"env:Env.from_code",
                                                      "env:SubEnv.from_code"}


@pytest.mark.parametrize("marker", ["VISIT", "TOP"])
def test_annotated_self_outside_a_class_reaches_overrides(pages, marker):
    assert calls_at(pages, "pkg/gen.py", marker) == {"gen:CodeGenerator.write", "gen:Sub.write"}
