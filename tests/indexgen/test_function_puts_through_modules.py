"""What a function puts into another module's table through that module (issue 31).

``from pkg import registry`` (or ``import pkg.registry``, or an import inside the function)
then, in a function, ``registry.HANDLERS[f.__name__] = f``,
``pkg.registry.HOOKS.append(f)`` or ``registry.REG.setdefault(k, f)``: the table holds what the function is handed, so that
``HANDLERS[name](x)`` in the registry and ``registry.HANDLERS["ini"](x)`` or ``for h in
registry.HOOKS: h()`` in any module list those functions (before, none of them: such a put
was read only at a module's top level, or through a table imported by name).  A function
whose parameter bears the module's name (``def keep(registry, f)``) puts into its own
argument, not the module's table.  Every expected edge is read off the source by hand.
"""

from __future__ import annotations

from ig_helpers import callees_by_mark

FILES = {
    "pkg/__init__.py": "",
    "pkg/registry.py": '''
        HANDLERS = {}
        HOOKS = []
        REG = {}


        def dump(name, x):
            return HANDLERS[name](x)  # DUMP


        def get(name, x):
            return REG[name](x)  # GET


        def default(k, f):
            REG.setdefault(k, f)


        def fallback(x):
            return x


        default("x", fallback)


        def leave():
            for hook in HOOKS:
                hook()  # HOOK
    ''',
    "pkg/plugins.py": '''
        import pkg.registry
        from pkg import registry


        def register(f):
            registry.HANDLERS[f.__name__] = f
            return f


        def on_exit(f):
            pkg.registry.HOOKS.append(f)
            return f


        def provide(f):
            registry.REG.setdefault(f.__name__, f)
            return f


        def register_late(f):
            from pkg import registry as late
            late.HANDLERS["late"] = f
            return f


        def keep(registry, f):
            registry.HANDLERS["kept"] = f


        @register
        def dump_ini(x):
            return x


        @register_late
        def dump_late(x):
            return x


        @provide
        def get_ini(x):
            return x


        @on_exit
        def close():
            return 1


        def not_a_handler(x):
            return x


        keep(object(), not_a_handler)
    ''',
    "pkg/user.py": '''
        from pkg import registry


        def run(x):
            registry.HANDLERS["ini"](x)  # RUN
            for h in registry.HOOKS:
                h()  # EACH
    ''',
}


def test_a_function_puts_into_a_table_through_its_module():
    found = callees_by_mark(FILES, "pkg/registry.py")
    assert found["DUMP"] == {"dump_ini", "dump_late"}, found  # (labels are qualnames)
    assert found["HOOK"] == {"close"}, found


def test_a_value_set_by_default_in_a_function():
    """``REG.setdefault(k, f)`` in a function of the registry and
    ``registry.REG.setdefault(f.__name__, f)`` in another module's decorator put as
    ``REG[k] = f`` does."""
    assert callees_by_mark(FILES, "pkg/registry.py")["GET"] == {"fallback", "get_ini"}


def test_a_call_through_the_module_in_another_module_reaches_them():
    found = callees_by_mark(FILES, "pkg/user.py")
    assert found["RUN"] == {"dump_ini", "dump_late"}, found
    assert found["EACH"] == {"close"}, found
