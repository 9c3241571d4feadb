"""Call-graph rules from a new user's trial on jinja2 and more-itertools (issue 31): each
case is the trial's defect cut to a few lines, every expected callee read off the source by
hand (``sym-`` anchors), and what must not be listed beside it."""

from __future__ import annotations

import pytest
from ig_helpers import build_files, callees_at, symbol_section

FILES = {
    "pkg/__init__.py": "",
    "pkg/pick.py": '''
        import functools
        from functools import partial


        def full(a):
            return a


        def part(a, r):
            return a[:r]


        def choose(items, r):
            algorithm = full if r == len(items) else partial(part, r=r)
            return algorithm(items)  # mark: ifexp-partial


        def choose_dotted(items, r):
            algorithm = functools.partial(part, r=r) if r else full
            return algorithm(items)  # mark: ifexp-dotted-partial


        def choose_plain(items, r):
            algorithm = full if r else part
            return algorithm(items)  # mark: ifexp-arity
    ''',
    "pkg/fallback.py": '''
        import sys


        def dotproduct(a, b):
            return sum(x * y for x, y in zip(a, b))


        try:
            from math import sumprod as _sumprod
        except ImportError:
            _sumprod = dotproduct


        def _batched(xs, n):
            return [xs[i:i + n] for i in range(0, len(xs), n)]


        if sys.version_info >= (3, 13):
            def batched(xs, n):
                return list(xs)
        else:
            batched = _batched


        def _first(xs):
            return xs[0]


        first = _first  # bound once, unconditionally: first is _first


        def convolve(a, b):
            return _sumprod(a, b)  # mark: except-alias


        def matmul(xs):
            return batched(xs, 2)  # mark: else-alias


        def head(xs):
            return first(xs)  # mark: plain-alias
    ''',
    "pkg/native.py": '''
        concat = "".join


        def native_concat(values):
            return list(values)


        class Env:
            concat = "".join


        class NativeEnv(Env):
            concat = staticmethod(native_concat)


        class Template:
            environment_class = Env

            def __init__(self, env: Env):
                self.environment = env

            def render_plain(self, parts):
                return concat(parts)  # mark: module-str-join

            def render_env(self, parts):
                return self.environment.concat(parts)  # mark: assigned-override


        class NativeTemplate(Template):
            environment_class = NativeEnv

            def render(self, parts):
                return self.environment_class.concat(parts)  # mark: staticmethod-attr
    ''',
    "pkg/stubs.py": '''
        import typing as t

        if t.TYPE_CHECKING:
            import typing_extensions as te

            class _Basic(te.Protocol):
                def gettext(self, message: str) -> str: ...

            class _Context(_Basic):
                def pgettext(self, context: str, message: str) -> str: ...


        class Real:
            def pgettext(self, context: str, message: str) -> str:
                return message


        def install_callables(gettext, pgettext=None):
            return gettext, pgettext


        def install(translations: "_Context"):
            pgettext = getattr(translations, "pgettext", None)
            return install_callables(translations.gettext, pgettext=pgettext)  # mark: stub


        def install_real(translations: Real):
            pgettext = getattr(translations, "pgettext", None)
            return install_callables(pgettext, pgettext=pgettext)  # mark: real
    ''',
    "pkg/rebind.py": '''
        def wrap(func):
            def inner(x):
                return func(x)  # mark: wrapped-call
            return inner


        def install(fn):
            fn = wrap(fn)
            return fn


        def user(x):
            return x


        def main():
            return install(user)(1)
    ''',
    "pkg/registry.py": '''
        import typing as t


        class Extension:
            tags = {"x"}

            def parse(self, parser: "Parser") -> int:
                return 1


        class Parser:
            def __init__(self, extensions: t.List[Extension]):
                self.extensions: t.Dict[str, t.Callable[["Parser"], int]] = {}
                for extension in extensions:
                    for tag in extension.tags:
                        self.extensions[tag] = extension.parse

            def parse_statement(self, name: str):
                ext = self.extensions.get(name)
                if ext is not None:
                    return ext(self)  # mark: item-assigned
    ''',
    "pkg/abstract.py": '''
        import typing as t


        class LRUCache:
            def get(self, key, default=None):
                return default

            def keys(self):
                return []


        def create_cache(size: int) -> t.MutableMapping[str, int]:
            if size == 0:
                return {}
            return LRUCache()


        shared: t.Mapping[str, int] = LRUCache()


        def lookup(size, key):
            cache = create_cache(size)
            return cache.get(key)  # mark: abstract-return


        def shared_keys():
            return shared.keys()  # mark: abstract-module
    ''',
    "pkg/visitors.py": '''
        def _make_binop(op):
            def visitor(self, node, frame):
                return op
            return visitor


        def _make_unop(op):
            def visitor(self, node):
                return op
            return visitor


        def _plain(node, frame):
            return node


        class Visitor:
            def visit(self, node, frame):
                f = getattr(self, f"visit_{type(node).__name__}", None)
                if f is not None:
                    return f(node, frame)  # mark: pattern-bound
                return None


        class Gen(Visitor):
            visit_Add = _make_binop("+")
            visit_Neg = _make_unop("-")
            visit_Call = staticmethod(_plain)

            def visit_Mul(self, node, frame):
                return node
    ''',
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("trial") / "src", FILES)


def _callees(pages, rel: str, marker: str) -> set[str]:
    """The callee anchors the page of ``rel`` lists at the line marked ``# mark: marker``,
    checked against the callees' Called by."""
    source = (pages[0] / rel).read_text().split("\n")
    line = next(n for n, text in enumerate(source, 1) if text.endswith(f"# mark: {marker}"))
    return callees_at(pages, rel, line)


@pytest.mark.parametrize("marker, callees", [
    # a partial binds arguments the call's count does not show: both branches may run
    ("ifexp-partial", {"sym-full", "sym-part"}),
    ("ifexp-dotted-partial", {"sym-full", "sym-part"}),
    # without the partial, part takes 2 arguments and the call hands 1: full only
    ("ifexp-arity", {"sym-full"}),
])
def test_a_conditional_binding_keeps_each_function_the_call_fits(pages, marker, callees):
    assert _callees(pages, "pkg/pick.py", marker) == callees


@pytest.mark.parametrize("marker, callees", [
    # _sumprod is math.sumprod, or dotproduct when the import fails
    ("except-alias", {"sym-dotproduct"}),
    # batched is the def on 3.13, _batched before
    ("else-alias", {"sym-batched", "sym-_batched"}),
    ("plain-alias", {"sym-_first"}),
])
def test_a_name_assigned_a_function_under_a_condition_may_be_that_function(pages, marker,
                                                                          callees):
    assert _callees(pages, "pkg/fallback.py", marker) == callees


def _section(pages, rel: str, anchor: str) -> str:
    """The part of ``rel``'s analysis page about the symbol ``sym-<anchor>``."""
    return symbol_section((pages[1] / f"{rel}_docs.md").read_text(), anchor)


def test_the_condition_of_an_assigned_fallback_is_shown(pages):
    convolve = _section(pages, "pkg/fallback.py", "convolve")
    assert "[`dotproduct`](#sym-dotproduct) (if the try block raises ImportError)" in convolve
    assert "`math.sumprod`" in convolve  # the import, when it succeeds
    matmul = _section(pages, "pkg/fallback.py", "matmul")
    assert "[`_batched`](#sym-_batched) (if not (sys.version\\_info" in matmul


def test_a_class_attribute_bound_by_staticmethod_is_the_function(pages):
    assert _callees(pages, "pkg/native.py", "staticmethod-attr") == {"sym-native_concat"}
    section = _section(pages, "pkg/native.py", "NativeTemplate.render")
    assert "Not resolved" not in section


def test_a_subclass_that_binds_a_method_by_assignment_overrides_it(pages):
    """``self.environment: Env``, whose ``concat`` is ``"".join``, may be a ``NativeEnv``,
    whose body binds ``concat = staticmethod(native_concat)``: that function is listed
    (the base's builtin gives no edge)."""
    assert _callees(pages, "pkg/native.py", "assigned-override") == {"sym-native_concat"}


def test_a_method_of_a_string_literal_bound_to_a_name_is_a_builtins(pages):
    """``concat = "".join; concat(parts)``: a builtin's method, which the pages leave out,
    not a call of unknown type."""
    section = _section(pages, "pkg/native.py", "Template.render_plain")
    assert "Not resolved" not in section and "**Calls**" not in section


def _callbacks(pages, rel: str, anchor: str) -> str:
    """The **Passes as a callback** line of a definition ('' for none)."""
    section = _section(pages, rel, anchor)
    return next((x for x in section.split("\n") if x.startswith("- **Passes as a callback**")),
                "")


def test_a_method_of_a_class_only_type_checkers_see_is_no_callback(pages):
    """``_Context`` exists under ``if TYPE_CHECKING:`` alone: its ``pgettext`` is a stub no
    object has at run time, so handing ``getattr(translations, "pgettext")`` on hands no
    function of the tree; a real class's method, in the same shape, is a callback."""
    assert "pgettext" not in _callbacks(pages, "pkg/stubs.py", "install")
    assert "[`Real.pgettext`](#sym-Real.pgettext)" in _callbacks(pages, "pkg/stubs.py",
                                                                "install_real")


def test_a_name_rebound_from_itself_hands_on_its_value_before_the_line(pages):
    """``fn = wrap(fn)`` hands ``wrap`` what ``fn`` was before the line (here ``user``,
    from ``main``), never ``wrap``'s own result: ``inner`` calls ``user``, not itself."""
    assert _callees(pages, "pkg/rebind.py", "wrapped-call") == {"sym-user"}


def test_a_function_assigned_to_an_item_is_what_the_table_holds(pages):
    """``self.extensions[tag] = extension.parse``: the table holds that bound method, so a
    call of what ``get`` returns from it reaches ``Extension.parse`` (no longer "a callable
    typed only by its signature")."""
    assert _callees(pages, "pkg/registry.py", "item-assigned") == {"sym-Extension.parse"}
    assert "Not resolved" not in _section(pages, "pkg/registry.py", "Parser.parse_statement")


@pytest.mark.parametrize("marker", ["abstract-return", "abstract-module"])
def test_a_value_typed_by_an_abstract_container_is_also_the_class_the_code_makes(pages,
                                                                                 marker):
    """``-> MutableMapping[str, int]`` and ``x: Mapping[str, int] = LRUCache()`` say some
    mapping: the ``return LRUCache()`` and the constructor say which, so the call reaches
    that class's method (a plain ``dict``'s, the other return, is a builtin's: no edge)."""
    callee = {"abstract-return": "sym-LRUCache.get", "abstract-module": "sym-LRUCache.keys"}
    assert _callees(pages, "pkg/abstract.py", marker) == {callee[marker]}


def test_a_function_a_class_body_binds_is_a_bound_method_on_an_instance(pages):
    """``visit_Add = _make_binop("+")`` in a subclass: ``getattr(self, "visit_...")`` in the
    base may read it, and called on the instance it gets ``self`` first, so a call handing
    two arguments fits ``visitor(self, node, frame)``, not ``visitor(self, node)``; a
    ``staticmethod`` binds no ``self``: ``_plain(node, frame)`` fits."""
    assert _callees(pages, "pkg/visitors.py", "pattern-bound") == {
        "sym-Gen.visit_Mul", "sym-_make_binop", "sym-_plain"}
