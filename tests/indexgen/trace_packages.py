"""The packages nobody here wrote whose own test suites measure the call graph (issue 31).

Each entry pins a source distribution on PyPI (its sources and its test suite) and the
exact test-only dependencies its suite needs.  :func:`obtain` downloads and unpacks them
once with pip into a cache outside the repository (``.venv/indexgen-trace/`` of the
checkout, so ``make clean`` removes it), the dependencies into a folder of their own that
only the traced process puts on its path: they never enter the project's environment, where
a pytest plugin such as ``pytest-asyncio`` would change every other test run.

The four are of different styles: a class hierarchy with many overrides (marshmallow's
fields), a plugin registry (pluggy), a rule-chain parser (markdown-it-py) and a functional
library (expression).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("INDEXGEN_TRACE_CACHE", ROOT / ".venv" / "indexgen-trace"))


@dataclass(frozen=True)
class Package:
    """One package measured by its own test suite.

    Attributes:
        name: The distribution's name on PyPI.
        version: The exact version.
        folder: The package folder inside the unpacked source distribution.
        tests: Its test folder there.
        deps: Exact ``name==version`` of what its tests need besides pytest.
        pytest_args: More pytest arguments (to leave out what the pinned versions cannot
            run); none leave out a test of the call graph's sake.
        max_examples: For a suite of ``hypothesis`` properties: examples per property.
    """

    name: str
    version: str
    folder: str
    tests: str
    deps: tuple[str, ...] = ()
    pytest_args: tuple[str, ...] = field(default=())
    max_examples: int = 0

    @property
    def dist(self) -> str:
        """The unpacked source distribution's folder name."""
        return f"{self.name.replace('-', '_')}-{self.version}"


PACKAGES = {
    "marshmallow": Package("marshmallow", "4.4.0", "src/marshmallow", "tests",
                           ("simplejson==4.3.0",)),
    "pluggy": Package("pluggy", "1.7.0", "src/pluggy", "testing"),
    "markdown-it-py": Package("markdown-it-py", "4.3.0", "markdown_it", "tests",
                              ("mdurl==0.1.2", "pytest-regressions==2.11.0",
                               "pytest-datadir==1.9.0", "pyyaml==6.0.4")),
    "expression": Package("expression", "5.8.0", "expression", "tests",
                          ("typing-extensions==4.16.0", "hypothesis==6.165.9",
                           "sortedcontainers==2.4.0", "pytest-asyncio==1.5.0",
                           "pydantic==2.13.4", "pydantic-core==2.46.4",
                           "annotated-types==0.7.0", "typing-inspection==0.4.2"),
                          max_examples=10),
}


def obtain(p: Package) -> tuple[Path, Path, Path]:
    """(package folder, test folder, dependency folder) of one package, downloaded with pip
    on first use; raises with the command that failed when PyPI cannot be reached."""
    dist = CACHE / p.dist
    deps = CACHE / f"{p.dist}-deps"
    done = CACHE / f"{p.dist}.ok"
    if not done.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        _pip("download", "--no-deps", "--no-binary", ":all:", "-d", str(CACHE / "sdists"),
             f"{p.name}=={p.version}")
        archive = next((CACHE / "sdists").glob(f"{p.dist}.tar.gz"), None) or next(
            (CACHE / "sdists").glob(f"{p.name}-{p.version}.tar.gz"))
        with tarfile.open(archive) as tar:
            tar.extractall(CACHE, filter="data")
        if not dist.exists():
            (CACHE / archive.name.removesuffix(".tar.gz")).rename(dist)
        deps.mkdir(exist_ok=True)
        if p.deps:
            _pip("install", "--no-deps", "--target", str(deps), *p.deps)
        done.write_text("ok\n")
    return dist / p.folder, dist / p.tests, deps


def _pip(*args: str) -> None:
    command = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"`{' '.join(command)}` failed (the trace recall of the packages "
                           f"needs PyPI once):\n{done.stderr[-2000:]}")
