"""The parameters of the ``__init__`` a class decorator writes from the class body's fields:
which field a call hands by place, and by which keyword (issue 31; jsonschema's attrs
classes, 8 missed calls of its suite).

The global pass keeps no decorators, so the fields are read from the class body alone.  A
dataclass's fields are its annotated names, in order, each handed by its own name.  An attrs
class (``@define``, ``@attr.s``...) may bind fields by ``field()`` (``attr.ib()``) without an
annotation, which a dataclass never does (it refuses them): where the body binds one, the
fields are those ``field()`` binds, annotated or not, in order (attrs' ``auto_attribs``
off), else its annotated names.  attrs hands a field by its name without its leading
underscores (``_formatter = field()`` is set by ``cls(formatter=...)``) unless
``field(alias="resolver")`` names another keyword: that keyword is tried after the field's
own name (which a dataclass's ``_x`` takes).  A field of ``init=False`` takes no argument.
:func:`init_fields` is read by :meth:`indexgen.analyze.flows.Flows._field_flow`.
"""

from __future__ import annotations

import re

from indexgen.extract.model import Definition

#: What a class-body source of an attrs or dataclass field call starts with.
_FIELD_CALLS = ("=field(", "=attr.ib(", "=attr.attrib(", "=attr.field(", "=attrs.field(",
                "=attrib(", "=dataclasses.field(")
_ALIAS = re.compile(r'\balias="(\w+)"')


def init_fields(owner: Definition, attr: str) -> tuple[list[str], str]:
    """The fields of the class ``owner`` its written ``__init__`` takes, in order, and the
    keyword other than ``attr`` that may hand the field ``attr`` (see the module's
    docstring)."""
    calls: dict[str, str] = {}
    annotated: list[str] = []
    for n, given in owner.members.items():
        for a, x in given:
            if not a and x[0] == ":" and (not annotated or annotated[-1] != n):
                annotated.append(n)
            elif not a and x.startswith(_FIELD_CALLS):
                calls.setdefault(n, x)
    if any(n not in annotated for n in calls):
        fields = [n for n in owner.members if n in calls]
    else:
        fields = annotated
    fields = [n for n in fields if "init=#False" not in calls.get(n, "")]
    alias = _ALIAS.search(calls.get(attr, ""))
    return fields, alias.group(1) if alias else attr.lstrip("_")
