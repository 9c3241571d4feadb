"""Regenerate the expected pages of the snapshot test (review the diff before committing).

Usage: ``.venv/bin/python tests/indexgen/regen_snapshots.py``
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

HERE = Path(__file__).parent
SAMPLE = HERE / "fixtures" / "sample"
EXPECTED = HERE / "fixtures" / "expected"


def snapshot_config(sample: Path, out: Path):
    """The configuration the snapshot test uses (kept here so both agree)."""
    from indexgen import Config

    return Config(roots=[sample / "src"], out=out, tests=[sample / "tests"], base=sample, jobs=1)


#: What the snapshot's manifest says instead of the code version (``indexgen.run.manifest.
#: CODE_VERSION``, a hash of indexgen's modules, which any edit of indexgen changes).
VERSION = "<indexgen>"


def without_code_version(manifest: bytes) -> bytes:
    """A manifest with its code version replaced by :data:`VERSION`."""
    from indexgen.run.manifest import CODE_VERSION

    return manifest.replace(f'"version":"{CODE_VERSION}"'.encode(),
                            f'"version":"{VERSION}"'.encode(), 1)


def main() -> int:
    from indexgen import build
    from indexgen.layout import MANIFEST_NAME

    if EXPECTED.exists():
        shutil.rmtree(EXPECTED)
    report = build(snapshot_config(SAMPLE, EXPECTED))
    manifest = EXPECTED / MANIFEST_NAME
    manifest.write_bytes(without_code_version(manifest.read_bytes()))
    print(f"wrote {len(report.written)} files to {EXPECTED}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
