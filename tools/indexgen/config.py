"""Build settings: from ``[tool.indexgen]`` in ``pyproject.toml`` or from explicit arguments.

Keys of ``[tool.indexgen]`` (paths are relative to the folder holding ``pyproject.toml``):

- ``roots`` (list of folders, required): source roots to document.
- ``out`` (folder, required): output directory.
- ``tests`` (list of folders, default ``["tests"]`` when that folder exists): test files whose
  imports are shown under "Testing & Usage".
- ``max-bytes`` (int, default 2,000,000): larger files get pages saying they were not analyzed.
- ``jobs`` (int, default: CPU count): worker processes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from indexgen.discover import root_name_of
from indexgen.errors import ConfigError
from indexgen.paths import is_inside

DEFAULT_MAX_BYTES = 2_000_000


@dataclass
class Config:
    """Everything a build or check needs.

    Attributes:
        roots: Source roots, in order.
        out: Output directory.
        tests: Folders holding test files (may be empty).
        base: Folder that test paths are shown relative to.
        max_bytes: Size limit for analysis.
        jobs: Worker processes (0 means one per CPU).
    """

    roots: list[Path]
    out: Path
    tests: list[Path] = field(default_factory=list)
    base: Path = field(default_factory=Path.cwd)
    max_bytes: int = DEFAULT_MAX_BYTES
    jobs: int = 0


def find_pyproject(start: Path) -> Path | None:
    """The nearest ``pyproject.toml`` in ``start`` or one of its parents, or None."""
    current = start.resolve()
    for folder in (current, *current.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def _load_toml(path: Path) -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ModuleNotFoundError as exc:
            raise ConfigError("reading pyproject.toml needs Python 3.11+ or tomli") from exc
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc


def load_config(start: Path | None = None) -> Config:
    """Read ``[tool.indexgen]`` from the nearest ``pyproject.toml`` above ``start``.

    Args:
        start: Folder to search from (default: the current directory).

    Returns:
        The configuration with absolute paths.

    Raises:
        ConfigError: No ``pyproject.toml``, no ``[tool.indexgen]`` table, or invalid values.
    """
    pyproject = find_pyproject(start or Path.cwd())
    if pyproject is None:
        raise ConfigError("no pyproject.toml found in the current directory or its parents; "
                          "pass SRC_ROOT and --out")
    table = _load_toml(pyproject).get("tool", {}).get("indexgen")
    if not isinstance(table, dict):
        raise ConfigError(f"{pyproject} has no [tool.indexgen] table")
    base = pyproject.parent
    roots = table.get("roots")
    out = table.get("out")
    if not isinstance(roots, list) or not roots or not all(isinstance(r, str) for r in roots):
        raise ConfigError(f"{pyproject}: [tool.indexgen] roots must be a non-empty list of paths")
    if not isinstance(out, str) or not out:
        raise ConfigError(f"{pyproject}: [tool.indexgen] out must be a path")
    tests = table.get("tests")
    if tests is None:
        tests = ["tests"] if (base / "tests").is_dir() else []
    if not isinstance(tests, list) or not all(isinstance(t, str) for t in tests):
        raise ConfigError(f"{pyproject}: [tool.indexgen] tests must be a list of paths")
    max_bytes = table.get("max-bytes", DEFAULT_MAX_BYTES)
    jobs = table.get("jobs", 0)
    if not isinstance(max_bytes, int) or max_bytes <= 0:
        raise ConfigError(f"{pyproject}: [tool.indexgen] max-bytes must be a positive integer")
    if not isinstance(jobs, int) or jobs < 0:
        raise ConfigError(f"{pyproject}: [tool.indexgen] jobs must be a non-negative integer")
    return Config([base / r for r in roots], base / out, [base / t for t in tests], base,
                  max_bytes, jobs)


def validate(config: Config) -> None:
    """Check that roots exist, have distinct names and do not contain each other.

    Raises:
        ConfigError: When they do not.
    """
    names = [root_name_of(r) for r in config.roots]
    if len(set(names)) != len(names):
        raise ConfigError(f"source roots must have distinct folder names: {names}")
    reals = [os.path.realpath(r) for r in config.roots]
    for root, real in zip(config.roots, reals):
        if not os.path.isdir(real):
            raise ConfigError(f"source root is not a folder: {root}")
    for root in config.roots:
        if is_inside(root, config.out):
            raise ConfigError(f"the output directory {config.out} contains the source root {root}")
    for test in config.tests:
        if not os.path.isdir(test):
            raise ConfigError(f"test folder is not a folder: {test}")
