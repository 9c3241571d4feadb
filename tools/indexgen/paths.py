"""Path arithmetic shared by every stage: one relative-path helper and one containment test.

Page paths are POSIX strings relative to the output directory; :func:`relpath` computes links
between them by string arithmetic alone, so the result never depends on the current directory.
File-system paths go through :func:`fs_relpath` (the same arithmetic on absolute paths) and
:func:`is_inside` (containment of resolved paths).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path


@functools.lru_cache(maxsize=1 << 16)  # pages link to the same few pages over and over
def relpath(target: str, start: str) -> str:
    """Relative POSIX path from the folder ``start`` to ``target``.

    Both are POSIX paths relative to the same base (or both absolute); ``.`` components and
    empty components are ignored.  The result never starts with ``/``.

    Args:
        target: Path of the file or folder to reach.
        start: Folder the path is relative from.

    Returns:
        ``../b/c.md`` for ``relpath("a/b/c.md", "a/d")``; ``.`` when both are the same folder.
    """
    src = [p for p in start.split("/") if p and p != "."]
    dst = [p for p in target.split("/") if p and p != "."]
    common = 0
    while common < min(len(src), len(dst)) and src[common] == dst[common]:
        common += 1
    parts = [".."] * (len(src) - common) + dst[common:]
    return "/".join(parts) or "."


def fs_relpath(path: Path | str, base: Path | str) -> str:
    """POSIX path of a file-system ``path`` relative to the folder ``base``.

    Both are made absolute (without resolving symlinks) first.
    """
    return relpath(Path(os.path.abspath(path)).as_posix(), Path(os.path.abspath(base)).as_posix())


def is_inside(path: Path | str, folder: Path | str) -> bool:
    """Whether ``path`` is ``folder`` or lies below it, after resolving symlinks of both."""
    real, real_folder = os.path.realpath(path), os.path.realpath(folder)
    return real == real_folder or real.startswith(real_folder.rstrip(os.sep) + os.sep)
