"""Generated navigation: expand folder placeholders in ``mkdocs.yml``'s ``nav``.

Generated pages (``indexgen``'s reference pages, the build-time upstream
pages, the mkdocstrings API pages) are never listed by hand. Instead the
``nav`` in ``mkdocs.yml`` names a *folder* with a trailing slash::

    nav:
      - Reference:
          - reference.md
          - reference/            # spliced: reference/index.md, src/, tools/ ...
      - API:
          - fsdp_ref: api/fsdp_ref/   # a section titled "fsdp_ref"

and :func:`expand_nav` replaces each such entry with the folder's pages, built
by :func:`folder_nav` from the list of files MkDocs knows about (on disk and
generated). ``Title: folder/`` becomes a section with that title; a bare
``folder/`` entry is spliced: its pages take its place in the enclosing list.

Within a folder the order is: the folder's ``index.md`` (which Material turns
into the section's landing page), ``indexgen``'s ``doc.md``, other loose
pages, sub-folders, and finally one sub-section per source file that groups
its analysis page (``name.py_docs.md``) and keyword page (``name.py_kw.md``).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from typing import Any

from indexgen.layout import DOCS_SUFFIX, KW_SUFFIX
from indexgen.paths import relpath

__all__ = ["NavItem", "ANALYSIS_SUFFIX", "KEYWORD_SUFFIX", "page_link", "folder_nav", "expand_nav",
           "source_of", "is_placeholder", "placeholders"]

#: A ``nav`` item as MkDocs accepts it: a path, or a one-key mapping of title to a
#: path or a list of items.
NavItem = Any

#: Suffixes of the analysis and keyword pages ``indexgen`` writes for ``name.py``.
ANALYSIS_SUFFIX, KEYWORD_SUFFIX = DOCS_SUFFIX, KW_SUFFIX


def page_link(from_page: str, to_page: str) -> str:
    """The relative link from the page ``from_page`` to ``to_page`` (site-relative paths)."""
    return relpath(to_page, posixpath.dirname(from_page))

_FOLDER_PAGES = ("index.md", "doc.md")


def is_placeholder(value: Any) -> bool:
    """Tell whether a nav value is a folder placeholder (a string ending in ``/``).

    Args:
        value: A nav item or the value of a titled nav item.

    Returns:
        ``True`` for strings such as ``"reference/src/"``.
    """
    return isinstance(value, str) and value.endswith("/") and "://" not in value


def source_of(src_uri: str) -> tuple[str, str] | None:
    """Split a generated per-file page path into its source file and page kind.

    Args:
        src_uri: Page path relative to ``docs/``, e.g.
            ``"reference/src/fsdp_ref/api.py_docs.md"``.

    Returns:
        ``("reference/src/fsdp_ref/api.py", "analysis")``, ``(..., "keywords")``,
        or ``None`` if the page is not a per-file page.
    """
    for suffix, kind in ((ANALYSIS_SUFFIX, "analysis"), (KEYWORD_SUFFIX, "keywords")):
        if src_uri.endswith(suffix):
            stem = src_uri[: -len(suffix)]
            if posixpath.splitext(stem)[1]:  # "name.py" -- a real per-file page
                return stem, kind
    return None


def _sort_key(name: str) -> tuple[int, str]:
    # ``__init__.py`` first, then alphabetical with private names after public ones.
    if name.startswith("__init__"):
        return (0, name)
    return (2 if name.startswith("_") else 1, name.lower())


def folder_nav(src_uris: Iterable[str], folder: str) -> list[NavItem]:
    """Build the nav items for every Markdown page under ``folder``.

    Args:
        src_uris: All page paths relative to ``docs/`` (non-Markdown paths are
            ignored).
        folder: Folder prefix, with or without the trailing slash.

    Returns:
        Nav items in the order described in the module docstring. Empty if
        the folder holds no pages.
    """
    folder = folder.rstrip("/") + "/"
    pages = sorted(u for u in src_uris if u.startswith(folder) and u.endswith(".md"))
    direct: list[str] = []
    subfolders: dict[str, None] = {}
    for uri in pages:
        rest = uri[len(folder):]
        if "/" in rest:
            subfolders.setdefault(rest.split("/", 1)[0])
        else:
            direct.append(rest)

    items: list[NavItem] = []
    if "index.md" in direct:
        items.append(folder + "index.md")
    if "doc.md" in direct:
        items.append({"About this folder": folder + "doc.md"})

    per_file: dict[str, dict[str, str]] = {}
    loose: list[str] = []
    for name in direct:
        if name in _FOLDER_PAGES:
            continue
        split = source_of(name)
        if split:
            per_file.setdefault(split[0], {})[split[1]] = folder + name
        else:
            loose.append(name)
    items.extend(folder + name for name in sorted(loose, key=_sort_key))
    for sub in sorted(subfolders, key=_sort_key):
        children = folder_nav(pages, folder + sub)
        if children:
            items.append({sub + "/": children})
    for source in sorted(per_file, key=_sort_key):
        kinds = per_file[source]
        children = [{title: kinds[kind]} for kind, title in
                    (("analysis", "Analysis"), ("keywords", "Keywords")) if kind in kinds]
        items.append({source: children})
    return items


def expand_nav(nav: list[NavItem], src_uris: Iterable[str]) -> list[NavItem]:
    """Return a copy of ``nav`` with every folder placeholder expanded.

    Args:
        nav: The ``nav`` list from ``mkdocs.yml``.
        src_uris: All page paths MkDocs knows about.

    Returns:
        The expanded nav. A placeholder whose folder holds no pages is
        dropped (MkDocs would otherwise report a missing page); the hook
        logs it.
    """
    uris = list(src_uris)
    out: list[NavItem] = []
    for item in nav:
        if is_placeholder(item):
            out.extend(folder_nav(uris, item))
        elif isinstance(item, dict):
            (title, value), = item.items()
            if is_placeholder(value):
                children = folder_nav(uris, value)
                if children:
                    out.append({title: children})
            elif isinstance(value, list):
                out.append({title: expand_nav(value, uris)})
            else:
                out.append(item)
        else:
            out.append(item)
    return out


def placeholders(nav: list[NavItem]) -> list[str]:
    """List the folder placeholders used in ``nav``.

    Args:
        nav: The ``nav`` list from ``mkdocs.yml``.

    Returns:
        Every placeholder folder, in order of appearance.
    """
    found: list[str] = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        if is_placeholder(value):
            found.append(value)
        elif isinstance(value, list):
            found.extend(placeholders(value))
    return found
