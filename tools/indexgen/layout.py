"""Where pages go: the mapping from source files and folders to page paths.

For a source file ``ROOT/a/b/name.py`` the pages are ``a/b/name.py_kw.md`` and
``a/b/name.py_docs.md`` under the output directory; with several roots each root gets its own
subfolder (``OUT/<root-name>/a/b/...``).  Each folder gets ``index.md`` and ``doc.md``.
All paths are POSIX and relative to the output directory.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

KW_SUFFIX = "_kw.md"
DOCS_SUFFIX = "_docs.md"
MANIFEST_NAME = ".indexgen-manifest.json"


@dataclass(frozen=True)
class Layout:
    """Page paths for one build.

    Attributes:
        roots: Names of the source roots, in configuration order.
        labels: How each root is shown on pages (its path relative to the project folder,
            e.g. ``src`` or ``torch/distributed/fsdp``), same order as ``roots``.
    """

    roots: tuple[str, ...]
    labels: tuple[str, ...] = ()

    def display(self, key: str) -> str:
        """Path of a file as shown on pages (``src/pkg/name.py``); never absolute."""
        root, _, rel = key.partition("/")
        if self.labels and root in self.roots:
            label = self.labels[self.roots.index(root)]
            return posixpath.join(label, rel) if label else rel
        return key

    def display_folder(self, root: str, folder: str) -> str:
        """Path of a source folder as shown on pages."""
        label = self.labels[self.roots.index(root)] if self.labels else root
        return posixpath.join(label, folder) if folder else (label or ".")

    @property
    def multi_root(self) -> bool:
        """Whether pages are grouped under one subfolder per root."""
        return len(self.roots) > 1

    def prefix(self, root: str) -> str:
        """Output subfolder of a root ('' with a single root)."""
        return root if self.multi_root else ""

    def _join(self, root: str, relpath: str) -> str:
        prefix = self.prefix(root)
        return posixpath.join(prefix, relpath) if prefix else relpath

    def kw_page(self, key: str) -> str:
        """Keyword index page of the file ``key`` (``root/rel/path.py``)."""
        root, _, rel = key.partition("/")
        return self._join(root, rel) + KW_SUFFIX

    def docs_page(self, key: str) -> str:
        """Analysis page of the file ``key``."""
        root, _, rel = key.partition("/")
        return self._join(root, rel) + DOCS_SUFFIX

    def folder_dir(self, root: str, folder: str) -> str:
        """Output folder of a source folder (``folder`` relative to its root)."""
        return self._join(root, folder) if folder else self.prefix(root)

    def folder_index(self, root: str, folder: str) -> str:
        """``index.md`` of a source folder."""
        return posixpath.join(self.folder_dir(root, folder), "index.md")

    def folder_doc(self, root: str, folder: str) -> str:
        """``doc.md`` of a source folder."""
        return posixpath.join(self.folder_dir(root, folder), "doc.md")
