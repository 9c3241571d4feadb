"""Icon shortcodes without emoji: ``:material-api:`` renders, ``:py:`` stays text.

The Material theme's emoji index knows both its bundled icons (``:material-...:``,
``:fontawesome-...:``, drawn inline from local SVG files) and some 3,600 emoji, drawn
as ``<img>`` from a CDN. The site uses only the icons, while docstrings that reach the
upstream pages contain Sphinx roles such as ``:py:meth:`x```: with emoji on, ``:py:``
became the flag of Paraguay, loaded from the network by a site that must work
offline. :func:`icons_only` wraps the theme's index and keeps the icons; the MkDocs
hook installs it in ``on_config``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["icons_only"]


def icons_only(index: Callable[[Any, Any], dict]) -> Callable[[Any, Any], dict]:
    """An emoji index (for ``pymdownx.emoji``) holding only the icons of ``index``.

    Args:
        index: an index function, such as ``material.extensions.emoji.twemoji``.

    Returns:
        An index function with the same signature; its entries are those of ``index``
        drawn from a local SVG file (they carry a ``path``), without emoji or aliases.
    """
    def icons(options: Any, md: Any) -> dict:
        full = index(options, md)
        kept = {name: entry for name, entry in full["emoji"].items() if "path" in entry}
        return {"name": full["name"], "emoji": kept, "aliases": {}}

    return icons
