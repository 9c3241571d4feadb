"""What a module's top level puts into its own tables is what a call through them reaches.

A registry filled at import, by statements of the module (``HANDLERS["json"] = dump_json``,
``HOOKS.append(on_exit)``, ``REGISTRY.setdefault("x", f)``, under a top-level ``if``, ``try`` or
``with`` too), holds those functions: ``HANDLERS[name](x)`` and ``for hook in HOOKS:
hook()`` in a function list them (before, both were counted as not resolved).  A function
that binds a local of the same name (``HANDLERS = {}`` in it) calls through its own table,
not the module's.  Every expected edge is read off the source by hand.
"""

from __future__ import annotations

from ig_helpers import callees_by_mark

FILES = {
    "pkg/__init__.py": "",
    "pkg/registry.py": '''
        import contextlib

        HANDLERS = {}
        HOOKS = []
        REGISTRY = {}


        def dump_json(x):
            return x


        def dump_yaml(x):
            return x


        def dump_toml(x):
            return x


        def on_exit():
            return 1


        def fallback(x):
            return x


        HANDLERS["json"] = dump_json
        HOOKS.append(on_exit)
        REGISTRY.setdefault("x", fallback)
        try:
            import yaml
        except ImportError:
            yaml = None
        else:
            HANDLERS["yaml"] = dump_yaml
        with contextlib.suppress(ImportError):
            import toml
            HANDLERS["toml"] = dump_toml


        def dump(name, x):
            return HANDLERS[name](x)  # DUMP


        def leave():
            for hook in HOOKS:
                hook()  # HOOK


        def get(name, x):
            return REGISTRY[name](x)  # GET


        def own(name, x):
            HANDLERS = {"x": fallback}
            return HANDLERS[name](x)  # OWN
    ''',
}


def test_a_table_filled_by_the_module_top_level():
    found = callees_by_mark(FILES, "pkg/registry.py")
    assert found["DUMP"] == {"dump_json", "dump_yaml", "dump_toml"}, found
    assert found["HOOK"] == {"on_exit"}, found
    assert found["GET"] == {"fallback"}, found
    assert found["OWN"] == {"fallback"}, found


IMPORTED = {
    "pkg/__init__.py": "",
    "pkg/registry.py": '''
        HANDLERS = {}
        HOOKS = []


        def dump(name, x):
            return HANDLERS[name](x)  # DUMP


        def leave():
            for hook in HOOKS:
                hook()  # HOOK
    ''',
    "pkg/plugins.py": '''
        from pkg import registry
        from pkg.registry import HANDLERS


        def dump_csv(x):
            return x


        def on_exit():
            return 1


        HANDLERS["csv"] = dump_csv
        registry.HOOKS.append(on_exit)
    ''',
}


def test_a_table_filled_by_the_top_level_of_a_module_that_imports_it():
    """``from .registry import HANDLERS`` then ``HANDLERS["csv"] = dump_csv``, and
    ``registry.HOOKS.append(on_exit)``, at another module's top level: the registry's own
    calls through the tables list them."""
    found = callees_by_mark(IMPORTED, "pkg/registry.py")
    assert found["DUMP"] == {"dump_csv"}, found  # (labels are qualnames)
    assert found["HOOK"] == {"on_exit"}, found


IN_FUNCTIONS = {
    "pkg/__init__.py": "",
    "pkg/registry.py": '''
        HANDLERS = {}


        def dump(name, x):
            return HANDLERS[name](x)  # DUMP
    ''',
    "pkg/plugins.py": '''
        from pkg.registry import HANDLERS


        def register(f):
            HANDLERS[f.__name__] = f
            return f


        @register
        def dump_ini(x):
            return x
    ''',
}


def test_a_table_filled_by_a_function_of_a_module_that_imports_it():
    """A decorator of another module that registers into the imported table (``from
    pkg.registry import HANDLERS``; ``HANDLERS[f.__name__] = f``): what it is handed is
    in the table."""
    assert callees_by_mark(IN_FUNCTIONS, "pkg/registry.py")["DUMP"] == {"dump_ini"}
