"""The Upstream section: ``indexgen`` pages for the installed torch's FSDP.

At docs build time (never committed, because it depends on the installed
torch) :func:`generate` runs ``indexgen`` over
``<site-packages>/torch/distributed/fsdp`` into a temporary folder; the hook
adds those pages under ``upstream/torch/distributed/fsdp/``.

:func:`pair_modules` then pairs every ``fsdp_ref`` source file with the
upstream file(s) it re-implements, so that each side's pages can link to the
other. The pairing is, in order of precedence:

1. :data:`COUNTERPARTS`, a curated table for modules whose names differ
   (``mesh.py`` re-implements the mesh bookkeeping of ``_fsdp_common.py``
   and ``_fsdp_init.py``);
2. a name rule: ``param_group.py`` pairs with ``_fsdp_param_group.py``
   (leading underscores and an ``fsdp_`` prefix are ignored).

Nothing here imports torch, so it is fast and works without a GPU.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import tempfile
from pathlib import Path

__all__ = [
    "UPSTREAM_PREFIX",
    "COUNTERPARTS",
    "IndexgenUnavailable",
    "indexgen_available",
    "torch_fsdp_dir",
    "torch_version",
    "normalized_stem",
    "pair_modules",
    "generate",
]

#: Where the upstream pages appear in the site (relative to ``docs/``).
UPSTREAM_PREFIX = "upstream/torch/distributed/fsdp"

#: fsdp_ref file (relative to ``src/fsdp_ref``) -> upstream files (relative to
#: ``torch/distributed/fsdp``) whose names do not give the pairing away.
COUNTERPARTS: dict[str, tuple[str, ...]] = {
    "__init__.py": ("__init__.py", "_fully_shard/__init__.py"),
    "api.py": ("_fully_shard/_fsdp_api.py",),
    "collectives.py": ("_fully_shard/_fsdp_collectives.py",),
    "buffer_plan.py": ("_fully_shard/_fsdp_collectives.py",),
    "mesh.py": ("_fully_shard/_fsdp_common.py", "_fully_shard/_fsdp_init.py"),
    "layout.py": ("_fully_shard/_fsdp_param.py", "_fully_shard/_fsdp_common.py"),
    "streams.py": ("_fully_shard/_fsdp_param_group.py",),
    "param.py": ("_fully_shard/_fsdp_param.py",),
    "param_group.py": ("_fully_shard/_fsdp_param_group.py",),
    "state.py": ("_fully_shard/_fsdp_state.py",),
    "fully_shard.py": ("_fully_shard/_fully_shard.py", "_fully_shard/_fsdp_init.py"),
    "module.py": ("_fully_shard/_fully_shard.py",),
    "group_state.py": ("_fully_shard/_fsdp_common.py", "_fully_shard/_fsdp_param.py"),
    "reduction.py": ("_fully_shard/_fsdp_collectives.py", "_fully_shard/_fsdp_param_group.py"),
}


class IndexgenUnavailable(RuntimeError):
    """Raised when ``indexgen`` (or its build entry point) cannot be imported."""


def torch_fsdp_dir() -> Path:
    """Locate ``torch/distributed/fsdp`` of the installed torch without importing torch.

    Returns:
        The folder.

    Raises:
        FileNotFoundError: If torch is not installed.
    """
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("torch is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / "distributed" / "fsdp"
    if not path.is_dir():
        raise FileNotFoundError(f"{path} does not exist")
    return path


def torch_version(fsdp_dir: Path | None = None) -> str:
    """Read the installed torch's version from ``torch/version.py`` (no import).

    Args:
        fsdp_dir: ``torch/distributed/fsdp``; located with :func:`torch_fsdp_dir`
            if omitted.

    Returns:
        The version string, e.g. ``"2.13.0+cpu"``, or ``"unknown"``.
    """
    fsdp_dir = fsdp_dir or torch_fsdp_dir()
    version_py = fsdp_dir.parents[1] / "version.py"
    try:
        match = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]",
                          version_py.read_text(encoding="utf-8"), re.M)
    except OSError:
        return "unknown"
    return match.group(1) if match else "unknown"


def normalized_stem(filename: str) -> str:
    """Name used by the pairing rule: no leading underscores, no ``fsdp_`` prefix.

    Args:
        filename: A file name such as ``"_fsdp_param_group.py"``.

    Returns:
        E.g. ``"param_group"``.
    """
    stem = Path(filename).stem.lstrip("_")
    return stem[len("fsdp_"):] if stem.startswith("fsdp_") else stem


def pair_modules(ref_files: list[str], upstream_files: list[str]) -> dict[str, list[str]]:
    """Pair fsdp_ref source files with the upstream files they re-implement.

    Args:
        ref_files: ``fsdp_ref`` files relative to the package folder, e.g.
            ``["api.py", "mesh.py"]``.
        upstream_files: Upstream files relative to ``torch/distributed/fsdp``,
            e.g. ``["_fully_shard/_fsdp_api.py", ...]``.

    Returns:
        ``{ref_file: [upstream_file, ...]}`` for every ref file that has at
        least one counterpart that exists upstream.
    """
    available = set(upstream_files)
    fully_shard = [u for u in upstream_files if u.startswith("_fully_shard/")]
    pairs: dict[str, list[str]] = {}
    for ref in ref_files:
        found = [u for u in COUNTERPARTS.get(ref, ()) if u in available]
        if not found and not ref.endswith("__init__.py"):
            # FSDP2 lives in _fully_shard/; prefer it over FSDP1 files with a similar name.
            found = [u for u in fully_shard if normalized_stem(u.rsplit("/", 1)[-1])
                     == normalized_stem(ref.rsplit("/", 1)[-1])]
        if found:
            pairs[ref] = found
    return pairs


def indexgen_available() -> bool:
    """Tell whether indexgen's library entry point can be imported.

    Returns:
        ``True`` once ``indexgen`` exposes its build function.
    """
    try:
        _indexgen_entry()
    except IndexgenUnavailable:
        return False
    return True


def _indexgen_entry():
    """Return indexgen's build function (the one place that knows its name)."""
    try:
        from indexgen import build  # type: ignore[attr-defined]
    except ImportError as exc:
        raise IndexgenUnavailable(str(exc)) from exc
    return build


def _indexgen_build(src_root: Path, out_dir: Path) -> None:
    """Call indexgen's library API on one source root.

    Args:
        src_root: Folder to index (``torch/distributed/fsdp``).
        out_dir: Folder that receives the pages for ``src_root``'s files
            directly (``out_dir/_fully_shard/_fsdp_api.py_docs.md``, ...).

    Raises:
        IndexgenUnavailable: If indexgen or its build function is missing.
    """
    build = _indexgen_entry()
    from indexgen import Config

    # One root: its files' pages land directly in out_dir. Paths shown on the pages are
    # relative to site-packages, i.e. they read "torch/distributed/fsdp/...".
    build(Config(roots=[src_root], out=out_dir, base=src_root.parents[2]))


def generate(out_dir: Path | None = None, fsdp_dir: Path | None = None) -> Path:
    """Generate the upstream pages and return the folder that holds them.

    Args:
        out_dir: Destination; a fresh temporary folder if omitted. Its
            contents are replaced.
        fsdp_dir: Source root; the installed torch's by default.

    Returns:
        ``out_dir``; pages for ``fsdp_dir/x/y.py`` are at ``out_dir/x/y.py_docs.md``.

    Raises:
        IndexgenUnavailable: If indexgen cannot be used yet.
    """
    fsdp_dir = fsdp_dir or torch_fsdp_dir()
    out_dir = out_dir or Path(tempfile.mkdtemp(prefix="fsdp-ref-upstream-"))
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    _indexgen_build(fsdp_dir, out_dir)
    return out_dir
