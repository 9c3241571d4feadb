"""Build settings: from ``[tool.indexgen]`` in ``pyproject.toml`` or from explicit arguments.

Keys of ``[tool.indexgen]`` (paths are relative to the folder holding ``pyproject.toml``):

- ``roots`` (list of folders, required): source roots to document.
- ``out`` (folder, required; the mkdocs plugin, :mod:`indexgen.run.mkdocs_plugin`, uses a
  folder of its own instead): output directory.
- ``tests`` (list of folders, default ``["tests"]`` when that folder exists): test files whose
  imports are shown under "Testing & Usage".
- ``max-bytes`` (whole number, 1 or more, default 2,000,000): larger files get pages saying
  they were not analyzed.
- ``jobs`` (whole number, 0 or more, default 0: one per CPU): worker processes.
- ``time-budget`` (seconds, 0 or more, default 20): a file whose analysis takes longer gets
  pages saying it was not analyzed (0: no limit; see :mod:`indexgen.extract.runtime`).
- ``exclude`` (list of patterns, default none): files and folders of the roots and test
  folders to leave out (:func:`indexgen.extract.discover.excluded`: ``tests``, ``*_pb2.py``,
  ``src/pkg/_vendor``).

Any other key is an error that names it (a misspelt key would otherwise be ignored).  The two
analysis limits follow one rule wherever they are set (here, the command line's ``--max-bytes``
and ``--time-budget``, the mkdocs plugin's ``max_bytes`` and ``time_budget``):
:func:`check_limits`; ``jobs`` likewise (``--jobs``, the plugin's ``jobs``): :func:`check_jobs`.
"""

from __future__ import annotations

import difflib
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from indexgen.errors import ConfigError
from indexgen.extract.discover import root_name_of, walk_python_files
from indexgen.paths import is_inside

DEFAULT_MAX_BYTES = 2_000_000
DEFAULT_TIME_BUDGET = 20.0
#: The keys of ``[tool.indexgen]``.
KEYS = ("roots", "out", "tests", "exclude", "max-bytes", "jobs", "time-budget")
#: How each place that sets the analysis limits and the workers spells ``max-bytes``,
#: ``time-budget`` and ``jobs``, and how it writes a value (for the example in an error): see
#: :func:`check_limits`.
LIMIT_SPELLINGS = {
    "pyproject": ("max-bytes", "time-budget", "jobs", "{} = {}"),
    "command line": ("--max-bytes", "--time-budget", "--jobs", "{} {}"),
    "plugin": ("max_bytes", "time_budget", "jobs", "{}: {}"),
}


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
        time_budget: Seconds one file's analysis may take (0: no limit).
        exclude: Patterns of files and folders to leave out (see
            :func:`indexgen.extract.discover.excluded`).
    """

    roots: list[Path]
    out: Path
    tests: list[Path] = field(default_factory=list)
    base: Path = field(default_factory=Path.cwd)
    max_bytes: int = DEFAULT_MAX_BYTES
    jobs: int = 0
    time_budget: float = DEFAULT_TIME_BUDGET
    exclude: list[str] = field(default_factory=list)


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


def load_config(start: Path | None = None, out: Path | None = None) -> Config:
    """Read ``[tool.indexgen]`` from the nearest ``pyproject.toml`` above ``start``.

    Args:
        start: Folder to search from (default: the current directory).
        out: The output directory to use instead of the table's ``out``, which may then be
            absent (the mkdocs plugin builds into a folder of its own).

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
    for unknown in sorted(set(table) - set(KEYS)):
        near = difflib.get_close_matches(unknown, KEYS, n=1)
        raise ConfigError(f"{pyproject}: [tool.indexgen] has no key {unknown!r}"
                          + (f"; did you mean {near[0]!r}?" if near else "")
                          + f" (its keys: {', '.join(KEYS)})")
    roots = table.get("roots")
    if not isinstance(roots, list) or not roots or not all(isinstance(r, str) for r in roots):
        raise ConfigError(f"{pyproject}: [tool.indexgen] roots must be a non-empty list of paths")
    if out is None and (not isinstance(table.get("out"), str) or not table.get("out")):
        raise ConfigError(f"{pyproject}: [tool.indexgen] out must be a path")
    tests = table.get("tests")
    if tests is None:
        tests = ["tests"] if (base / "tests").is_dir() else []
    if not isinstance(tests, list) or not all(isinstance(t, str) for t in tests):
        raise ConfigError(f"{pyproject}: [tool.indexgen] tests must be a list of paths")
    exclude = table.get("exclude", [])
    if not isinstance(exclude, list) or not all(isinstance(x, str) and x for x in exclude):
        raise ConfigError(f"{pyproject}: [tool.indexgen] exclude must be a list of patterns "
                          '(e.g. ["tests", "*_pb2.py", "src/pkg/_vendor"])')
    max_bytes, time_budget = check_limits(
        "pyproject", f"{pyproject}: [tool.indexgen]",
        table.get("max-bytes", DEFAULT_MAX_BYTES), table.get("time-budget", DEFAULT_TIME_BUDGET))
    jobs = check_jobs("pyproject", f"{pyproject}: [tool.indexgen]", table.get("jobs", 0))
    return Config([base / r for r in roots], out if out is not None else base / table["out"],
                  [base / t for t in tests], base, max_bytes, jobs, time_budget,
                  list(exclude))


def _shown(value: object) -> str:
    """A value as a TOML or YAML file (or a command line) writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return f'"{value}"' if isinstance(value, str) else repr(value)


def _whole(value: object, least: int) -> bool:
    """Whether ``value`` is a whole number (not a bool: TOML's and YAML's ``true``) of at
    least ``least``."""
    return not isinstance(value, bool) and isinstance(value, int) and value >= least


def check_limits(source: str, where: str, max_bytes: object = None, time_budget: object = None
                 ) -> tuple[int | None, float | None]:
    """The one rule for the analysis limits, wherever they are set; None stands for not set.

    ``max-bytes`` must be a whole number of bytes, 1 or more; ``time-budget`` a finite number of
    seconds, 0 or more (0: no limit).  A bool is not a number (TOML's and YAML's ``true`` would
    otherwise pass as 1).

    Args:
        source: Which spelling the error uses, a key of :data:`LIMIT_SPELLINGS`:
            ``"pyproject"``, ``"command line"`` or ``"plugin"``.
        where: What set the values, at the start of an error (``"PATH: [tool.indexgen]"``).
        max_bytes: The size limit as given.
        time_budget: The time limit as given.

    Returns:
        ``(max_bytes, time_budget)``, the time limit as a float.

    Raises:
        ConfigError: A value breaks the rule; the message names the setting, where it was set,
            what a valid value is and the default.
    """
    size_name, time_name, _jobs, written = LIMIT_SPELLINGS[source]
    if max_bytes is not None and not _whole(max_bytes, 1):
        example = written.format(size_name, DEFAULT_MAX_BYTES)
        raise ConfigError(f"{where} {size_name} must be a whole number of bytes, 1 or more, "
                          f"not {_shown(max_bytes)} (e.g. {example}, the default)")
    if time_budget is not None and (
            isinstance(time_budget, bool) or not isinstance(time_budget, (int, float))
            or not math.isfinite(time_budget) or time_budget < 0):
        example = written.format(time_name, f"{DEFAULT_TIME_BUDGET:g}")
        raise ConfigError(f"{where} {time_name} must be a number of seconds, 0 or more (0: no "
                          f"limit), not {_shown(time_budget)} (e.g. {example}, the default)")
    return max_bytes, None if time_budget is None else float(time_budget)


def check_jobs(source: str, where: str, jobs: object = None) -> int | None:
    """The rule for the number of worker processes, wherever it is set (None: not set): a
    whole number, 0 or more, 0 meaning one per CPU; a bool is not a number.  ``source`` and
    ``where`` as for :func:`check_limits`.

    Raises:
        ConfigError: ``jobs`` breaks the rule; the message names the setting, where it was
            set and what a valid value is.
    """
    _size, _time, name, written = LIMIT_SPELLINGS[source]
    if jobs is not None and not _whole(jobs, 0):
        raise ConfigError(f"{where} {name} must be a whole number of worker processes, 0 or "
                          f"more (0: one per CPU), not {_shown(jobs)} (e.g. "
                          f"{written.format(name, 0)}, the default)")
    return jobs


def validate(config: Config) -> list[str]:
    """Check the roots, the output directory and the test folders before a build.

    Roots must be folders with distinct names; the output directory must not contain a root,
    and when it lies inside a root it must hold no Python files (they would vanish from the
    pages); an empty or pages-only output folder inside a root is left out of the docs, and a
    note says so.

    Returns:
        Notes for the report (the output directory left out of a root).

    Raises:
        ConfigError: When a check fails; the message names the path and the fix.
    """
    names = [root_name_of(r) for r in config.roots]
    if len(set(names)) != len(names):
        raise ConfigError(f"source roots must have distinct folder names: {names}")
    reals = [os.path.realpath(r) for r in config.roots]
    for root, real in zip(config.roots, reals):
        if not os.path.isdir(real):
            raise ConfigError(f"source root is not a folder: {root}")
    notes = []
    for root in config.roots:
        if is_inside(root, config.out):
            raise ConfigError(f"the output directory {config.out} contains the source root "
                              f"{root}: a build would write pages among the sources; choose a "
                              "folder beside them (--out docs/reference, [tool.indexgen] out)")
        if is_inside(config.out, root):
            inside = walk_python_files(config.out) if os.path.isdir(config.out) else []
            if inside:
                raise ConfigError(
                    f"the output directory {config.out} lies inside the source root {root} and "
                    f"holds {len(inside)} Python file(s) (first: {inside[0]}) that would be left "
                    "out of the pages; choose an output directory outside the source tree")
            notes.append(f"the output directory {config.out} lies inside the source root "
                         f"{root}; it is left out of the pages")
    for test in config.tests:
        if not os.path.isdir(test):
            raise ConfigError(f"test folder is not a folder: {test}")
    for pattern in config.exclude:  # matched against relative paths: these would fit none
        if pattern.startswith(("/", "~")) or ".." in pattern.split("/") or "\\" in pattern:
            raise ConfigError(f"exclude pattern {pattern!r} fits no path: patterns are written "
                              f"relative to {config.base}, with '/' (e.g. 'src/pkg/_vendor')")
    return notes
