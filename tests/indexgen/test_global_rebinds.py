"""What a function binds to a module attribute it declares ``global`` is what the module's
attribute may hold (issue 31: a callable travels into a slot of the module and out).

``def set_handler(f): global _handler; _handler = f`` (a registry of one, or a decorator
that installs what it decorates), ``_REG = {**_REG, k: f}`` (a table rebuilt with one more
entry) and a singleton made on first use (``global _engine; _engine = Engine()``): a call
through the attribute in any function of the module, or through what such a function
returns in another module, lists them (before, those calls were not resolved: the
rebinding function's own reads took the name as a local, which for a getter that returns
it gave the right class).  A function that binds the name
without ``global`` binds its own local; an attribute whose annotation says what it is stays
that (``_typed: Engine | None``), as with any put.  Every expected edge is read off the
source by hand.
"""

from __future__ import annotations

from ig_helpers import callees_by_mark

FILES = {
    "pkg/__init__.py": "",
    "pkg/slots.py": '''
        _handler = None
        _default = None
        _REG = {}
        _engine = None
        _typed: "Engine | None" = None


        class Engine:
            def run(self):
                return 1


        class Other:
            def run(self):
                return 2


        def set_handler(f):
            global _handler
            _handler = f


        def set_default(f):
            global _default
            _default = f
            return f


        def register(k, f):
            global _REG
            _REG = {**_REG, k: f}


        def get_engine():
            global _engine
            if _engine is None:
                _engine = Engine()
            return _engine


        def set_typed():
            global _typed
            _typed = Other()


        def own(f):
            _handler = f
            return _handler


        def on_event(x):
            return x


        def on_key(x):
            return x


        def not_a_handler(x):
            return x


        @set_default
        def fallback(x):
            return x


        set_handler(on_event)
        register("k", on_key)
        own(not_a_handler)


        def use(x):
            _handler(x)  # HANDLER
            _default(x)  # DEFAULT
            _REG["k"](x)  # REG
            _engine.run()  # ENGINE
            _typed.run()  # TYPED
    ''',
    "pkg/user.py": '''
        from pkg import slots
        from pkg.slots import get_engine


        def go(x):
            slots._handler(x)  # THROUGH
            return get_engine().run()  # GET
    ''',
}


def test_what_a_function_binds_to_a_global_is_the_module_attribute():
    found = callees_by_mark(FILES, "pkg/slots.py")
    assert found["HANDLER"] == {"on_event"}, found
    assert found["DEFAULT"] == {"fallback"}, found
    assert found["REG"] == {"on_key"}, found
    assert found["ENGINE"] == {"Engine.run"}, found
    assert found["TYPED"] == {"Engine.run"}, found


def test_another_module_reads_the_attribute_and_the_getter():
    found = callees_by_mark(FILES, "pkg/user.py")
    assert found["THROUGH"] == {"on_event"}, found
    assert found["GET"] == {"get_engine", "Engine.run"}, found  # (the getter's own local before)
