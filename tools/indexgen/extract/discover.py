"""Find the Python files of a source root, refusing paths that leave it.

Hidden entries and ``__pycache__`` are skipped, as is the output directory when it lies inside
the root (generated pages are never documented), and what the configuration's ``exclude``
patterns name (:func:`excluded`).  A symlink is followed only when its target
stays inside the root and is not one of its own ancestors; anything else raises
:class:`~indexgen.errors.UnsafePathError`.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from indexgen.errors import UnsafePathError
from indexgen.extract.source import module_name
from indexgen.paths import fs_relpath, is_inside


@dataclass(frozen=True)
class SourceFile:
    """A Python file to document.

    Attributes:
        root: Name of its source root.
        relpath: POSIX path relative to the root.
        path: Path to read it from.
        module: Dotted module name.
    """

    root: str
    relpath: str
    path: Path
    module: str

    @property
    def key(self) -> str:
        """Root-qualified path (``root/rel/path.py``), unique across roots."""
        return f"{self.root}/{self.relpath}"


def excluded(path: str, patterns: Sequence[str]) -> bool:
    """Whether the POSIX ``path`` of a file or folder (relative to the folder of the
    configuration, :func:`shown_path`) fits one of ``patterns``, each matched from the right
    end of the path as :meth:`pathlib.PurePath.match` does (``*`` within one part): ``tests``
    is any file or folder named so, ``*_pb2.py`` any such file, ``src/pkg/_vendor`` that
    folder and so all it holds."""
    pure = PurePosixPath(path)
    return any(pure.match(p.removeprefix("./").rstrip("/")) for p in patterns)


def shown_path(folder: Path, base: Path) -> str:
    """``folder`` as :func:`excluded` matches it: relative to ``base`` when inside it, else
    its own name."""
    real, real_base = os.path.realpath(folder), os.path.realpath(base)
    if real == real_base:
        return ""
    return fs_relpath(real, real_base) if is_inside(real, real_base) else root_name_of(folder)


def walk_python_files(root: Path, exclude: tuple[Path, ...] = (),
                      patterns: Sequence[str] = (), shown: str = "") -> list[str]:
    """POSIX paths (relative to ``root``) of the ``.py`` files under ``root``, sorted.

    Args:
        root: Folder to walk.
        exclude: Folders to leave out (e.g. the output directory).
        patterns: Patterns of files and folders to leave out (:func:`excluded`), matched
            against their paths below ``shown``, the root's path (:func:`shown_path`).

    Raises:
        UnsafePathError: A symlink points outside ``root``, is broken, or loops.
    """
    real_root = os.path.realpath(root)
    left_out = {os.path.realpath(p) for p in exclude}
    found: list[str] = []

    def visit(folder: str, rel: str, ancestors: tuple[str, ...]) -> None:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            raise UnsafePathError(f"cannot list {folder}: {exc.strerror or exc}") from exc
        for entry in entries:
            name = entry.name
            if name.startswith(".") or name == "__pycache__":
                continue
            child_rel = f"{rel}/{name}" if rel else name
            if patterns and excluded(f"{shown}/{child_rel}" if shown else child_rel, patterns):
                continue
            real = entry.path
            if entry.is_symlink():
                real = _resolve_link(entry.path)
                if not is_inside(real, real_root):
                    raise UnsafePathError(
                        f"symlink leaves the source root: {entry.path} -> {real} "
                        f"(root {real_root})")
                if real in ancestors:
                    raise UnsafePathError(f"symlink loop: {entry.path} -> {real}")
            if os.path.isdir(real):
                real_dir = os.path.realpath(real)
                if real_dir in left_out:
                    continue
                if real_dir in ancestors:
                    raise UnsafePathError(f"symlink loop: {entry.path} -> {real_dir}")
                visit(entry.path, child_rel, (*ancestors, real_dir))
            elif name.endswith(".py") and os.path.isfile(real):
                found.append(child_rel)

    visit(str(root), "", (real_root,))
    return sorted(found)


def _resolve_link(path: str) -> str:
    """The target of a symlink, or :class:`UnsafePathError` naming a loop or a broken link."""
    try:
        return os.path.realpath(path, strict=True)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafePathError(f"symlink loop: {path} (its chain of links never ends)") from exc
        if exc.errno == errno.ENOENT:
            raise UnsafePathError(f"broken symlink: {path} -> {os.readlink(path)}") from exc
        raise UnsafePathError(f"cannot resolve the symlink {path}: {exc.strerror}") from exc


def discover(root: Path, exclude: tuple[Path, ...] = (), patterns: Sequence[str] = (),
             base: Path | None = None) -> list[SourceFile]:
    """The documented files of one source root.

    Args:
        root: The source root; its folder name names it on pages.  If it holds an
            ``__init__.py`` it is itself a package and module names start with its name.
        exclude: Folders to leave out.
        patterns: Patterns of files and folders to leave out (:func:`excluded`), matched
            against paths relative to ``base`` (the configuration's folder).

    Returns:
        Files sorted by relative path.

    Raises:
        UnsafePathError: See :func:`walk_python_files`.
    """
    root_name = root_name_of(root)
    prefix = package_prefix(root)
    return [
        SourceFile(root_name, rel, root / rel, module_name(rel, prefix))
        for rel in walk_python_files(root, exclude, patterns,
                                     shown_path(root, base) if base is not None else "")
    ]


def package_prefix(root: Path) -> str:
    """Dotted package name of a root that is itself a package, else ''.

    The root and the folders above it that hold an ``__init__.py`` form the prefix, so the
    installed ``torch/distributed/fsdp`` gives ``torch.distributed.fsdp`` and imports such as
    ``from torch.distributed.fsdp._common_utils import x`` resolve to files of the root.
    """
    parts: list[str] = []
    folder = Path(os.path.realpath(root))
    while (folder / "__init__.py").is_file() and folder.name.isidentifier():
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts)


def root_name_of(root: Path) -> str:
    """Name of a source root as used in page paths: its folder name."""
    return Path(os.path.realpath(root)).name if root.name in ("", ".", "..") else root.name


def root_label(root: Path, base: Path) -> str:
    """How a root is shown on pages.

    A root that is a package shows as its package path (``torch/distributed/fsdp``), whatever
    folder it is installed in; another root shows relative to ``base`` if inside it, else by
    its folder name.  Never an absolute path.
    """
    prefix = package_prefix(root)
    if prefix:
        return prefix.replace(".", "/")
    real_root, real_base = os.path.realpath(root), os.path.realpath(base)
    if real_root != real_base and is_inside(real_root, real_base):
        return fs_relpath(real_root, real_base)
    return root_name_of(root)

