"""A griffe extension that renders Sphinx cross-reference roles in Google docstrings.

Docstrings in this repository follow the Google style, but like torch's they often name
other objects with Sphinx roles (``:class:`~fsdp_ref.param.FSDPParam```). mkdocstrings
would print those roles literally. This extension, listed under ``extensions:`` of the
mkdocstrings python handler in ``mkdocs.yml``, rewrites every role into an *optional*
mkdocs-autorefs cross-reference once griffe has loaded the whole package:

* the target is resolved in the docstring's scope when it is not a full path;
* ``~a.b.C`` shows ``C``; ``Title <a.b.C>`` shows ``Title``; functions and methods get ``()``;
* an unresolvable target (``torch.Tensor``, a private helper that is not rendered)
  degrades to plain code instead of failing the strict build.

The docstring text in the source is never changed; only the rendered page is.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

__all__ = ["SphinxRoles", "ROLE", "convert_roles"]

#: A Sphinx role: ``:role:`target``` or ``:py:role:`Title <target>```.
ROLE = re.compile(
    r":(?:py:)?(?P<role>class|func|meth|mod|attr|data|obj|exc|const|ref|term)"
    r":`(?P<body>[^`]+)`"
)
_TITLED = re.compile(r"^(?P<title>.+?)\s*<(?P<target>[^<>]+)>$")
_CALLABLE_ROLES = {"func", "meth"}


def convert_roles(text: str, resolve: Any = None) -> str:
    """Rewrite the Sphinx roles in ``text`` as optional autorefs.

    Args:
        text: Docstring text.
        resolve: Optional ``name -> full path`` callable used for targets that are
            not dotted paths; it may raise or return ``None`` when it cannot resolve.

    Returns:
        The text with every role replaced by an ``<autoref ... optional>`` element
        whose title is a code span.
    """

    def replace(match: re.Match[str]) -> str:
        role, body = match["role"], match["body"].strip()
        titled = _TITLED.match(body)
        if titled:
            title, target = titled["title"], titled["target"].strip()
        else:
            target = body
            short = target.startswith("~")
            target = target.lstrip("~.!")
            title = target.rsplit(".", 1)[-1] if short else target
            if role in _CALLABLE_ROLES and not title.endswith(")"):
                title += "()"
        target = target.lstrip("~.!")
        identifier = target
        if resolve is not None:
            try:
                identifier = resolve(target) or target
            except Exception:  # noqa: BLE001 - unresolvable names stay as written
                identifier = target
        safe_title = title.replace("<", "&lt;").replace(">", "&gt;")
        return (f'<autoref identifier="{identifier}" optional>'
                f"<code>{safe_title}</code></autoref>")

    return ROLE.sub(replace, text)


class SphinxRoles(griffe.Extension):
    """Rewrite Sphinx roles in every docstring once the object tree is complete."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Convert the roles of one object's docstring.

        Args:
            obj: The object whose docstring to rewrite.
            **kwargs: Other hook arguments (unused).
        """
        docstring = obj.docstring
        if docstring is None or ":`" not in docstring.value:
            return

        def resolve(name: str) -> str | None:
            if "." in name and name.split(".", 1)[0] in {"fsdp_ref", "indexgen", "torch"}:
                return name
            scope = obj if isinstance(obj, (griffe.Module, griffe.Class)) else obj.parent
            return scope.resolve(name) if scope is not None else None

        docstring.value = convert_roles(docstring.value, resolve)
