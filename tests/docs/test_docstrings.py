"""Every public name of ``fsdp_ref`` and ``indexgen`` has a Google-style docstring.

The walk is static (griffe, nothing is imported). Public means: not starting with
``_``, and reachable as

* a name in a package's or public module's ``__all__``;
* a public module of the package (recursively through public sub-packages);
* a class or function *defined* in a public module, and the public methods and
  properties defined in such a class.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import griffe
import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGES = {"fsdp_ref": REPO / "src", "indexgen": REPO / "tools"}

# Markers of the other docstring styles (reST field lists, numpydoc underlined sections).
_OTHER_STYLES = re.compile(
    r"^\s*(:(param|type|returns?|rtype|raises?)\b[^:]*:"
    r"|(Parameters|Returns|Raises|Yields|Attributes)\n\s*-{3,}\s*$)",
    re.M,
)


def _load(name: str) -> griffe.Module:
    package_dir = PACKAGES[name] / name
    if not (package_dir / "__init__.py").is_file():
        pytest.fail(f"{package_dir}/__init__.py does not exist yet", pytrace=False)
    return griffe.load(name, search_paths=[str(PACKAGES[name])], resolve_aliases=False)


def _public(name: str) -> bool:
    return not name.startswith("_")


def _target(obj: griffe.Object | griffe.Alias) -> griffe.Object | None:
    if isinstance(obj, griffe.Alias):
        try:
            return obj.final_target
        except (griffe.AliasResolutionError, griffe.CyclicAliasError):
            return None
    return obj


def public_objects(package: griffe.Module) -> dict[str, griffe.Object]:
    """Map the path of every public object of ``package`` to the object.

    Args:
        package: The loaded package.

    Returns:
        ``{"fsdp_ref.api.MixedPrecisionPolicy": <Class>, ...}``; names in ``__all__``
        that cannot be resolved map to ``None``.
    """
    found: dict[str, griffe.Object | None] = {}

    def add_class(cls: griffe.Class) -> None:
        found[cls.path] = cls
        for member in cls.members.values():
            if isinstance(member, griffe.Alias) or not _public(member.name):
                continue
            if member.is_function or member.is_class:
                found[member.path] = member
                if member.is_class:
                    add_class(member)

    def visit(module: griffe.Module) -> None:
        found[module.path] = module
        exported = module.members.get("__all__")
        names = set()
        if exported is not None and isinstance(exported, griffe.Attribute):
            value = exported.value
            names = {str(v).strip("'\"") for v in getattr(value, "elements", [])}
        for name in filter(_public, names):
            member = module.members.get(name)
            found[f"{module.path}.{name}"] = _target(member) if member is not None else None
        for member in module.members.values():
            if isinstance(member, griffe.Alias) or not _public(member.name):
                continue
            if member.is_module:
                visit(member)
            elif member.is_class:
                add_class(member)
            elif member.is_function:
                found[member.path] = member

    visit(package)
    return found


@pytest.mark.parametrize("name", sorted(PACKAGES))
def test_every_public_name_has_a_docstring(name):
    objects = public_objects(_load(name))
    unresolved = sorted(path for path, obj in objects.items() if obj is None)
    missing = sorted(path for path, obj in objects.items()
                     if obj is not None and not (obj.docstring and obj.docstring.value.strip()))
    assert not unresolved, f"names in __all__ that do not exist: {unresolved}"
    assert not missing, f"{len(missing)} public names without a docstring:\n  " + "\n  ".join(missing)


@pytest.mark.parametrize("name", sorted(PACKAGES))
def test_docstrings_are_google_style(name, caplog):
    objects = public_objects(_load(name))
    other_style = sorted(path for path, obj in objects.items()
                         if obj is not None and obj.docstring
                         and _OTHER_STYLES.search(obj.docstring.value))
    assert not other_style, "reST/numpydoc sections (use Google style):\n  " + "\n  ".join(other_style)
    problems = []
    with caplog.at_level(logging.WARNING, logger="griffe"):
        for obj in objects.values():
            if obj is not None and obj.docstring:
                caplog.clear()
                obj.docstring.parse("google", warn_missing_types=False)
                problems += [r.getMessage() for r in caplog.records]
    assert not problems, "griffe cannot render these cleanly:\n  " + "\n  ".join(sorted(set(problems)))


def test_public_objects_sees_members_defined_and_exported(tmp_path):
    pkg = tmp_path / "toy"
    pkg.mkdir()
    (pkg / "__init__.py").write_text('"""Toy."""\nfrom .mod import Thing\n__all__ = ["Thing"]\n')
    (pkg / "mod.py").write_text(
        '"""Mod."""\n\nclass Thing:\n    """A thing."""\n\n    def run(self):\n        pass\n\n'
        '    def _hidden(self):\n        pass\n\n\ndef helper():\n    """Help."""\n\n'
        'def _private():\n    pass\n'
    )
    (pkg / "_internal.py").write_text("def undocumented():\n    pass\n")
    objects = public_objects(griffe.load("toy", search_paths=[str(tmp_path)],
                                         resolve_aliases=False))
    assert set(objects) == {"toy", "toy.Thing", "toy.mod", "toy.mod.Thing",
                            "toy.mod.Thing.run", "toy.mod.helper"}
    assert objects["toy.Thing"] is objects["toy.mod.Thing"]
    assert objects["toy.mod.Thing.run"].docstring is None
