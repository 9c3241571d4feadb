"""Fixtures of the documentation tests.

``built_site`` builds the whole site once per session with ``mkdocs build --strict``
into a temporary folder; the site tests and the browser test read it. The build
runs in a subprocess so that MkDocs' logging and plugin state never leak into the
other tests.

While iterating on a test, ``FSDP_REF_DOCS_SITE=/path/to/site`` reuses a site built
beforehand (``mkdocs build -d /path/to/site``) instead of building one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TOOLS = REPO / "tools"
if str(TOOLS) not in sys.path:
    sys.path.insert(0, str(TOOLS))


@dataclass
class BuiltSite:
    """Result of one ``mkdocs build --strict``.

    Attributes:
        path: The site folder.
        returncode: Exit status of the build.
        log: Its combined output.
    """

    path: Path
    returncode: int
    log: str

    def page(self, rel: str) -> str:
        """Read one built file (``rel`` is relative to the site root)."""
        return (self.path / rel).read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> BuiltSite:
    """Build the site once, strictly, into a temporary folder."""
    prebuilt = os.environ.get("FSDP_REF_DOCS_SITE")
    if prebuilt:
        return BuiltSite(Path(prebuilt), 0, f"prebuilt site {prebuilt}")
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--clean", "-d", str(out)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600,
    )
    return BuiltSite(out, proc.returncode, proc.stdout + proc.stderr)


@pytest.fixture(scope="session")
def site(built_site: BuiltSite) -> BuiltSite:
    """The built site; fails with MkDocs' log when the strict build failed."""
    if built_site.returncode != 0:
        pytest.fail("mkdocs build --strict failed:\n" + built_site.log[-6000:], pytrace=False)
    return built_site
