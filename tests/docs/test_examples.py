"""The code shown on the home page runs as shown.

``docs/index.md`` includes ``docs/examples/quickstart.py`` verbatim (pymdownx.snippets),
so running that file is running the documentation: two gloo ranks on CPU, launched
exactly as the page says.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_quickstart_runs_under_torchrun():
    torchrun = Path(sys.executable).with_name("torchrun")
    cmd = [str(torchrun) if torchrun.exists() else sys.executable, "--standalone",
           "--nproc_per_node", "2", "docs/examples/quickstart.py"]
    if not torchrun.exists():
        cmd[1:1] = ["-m", "torch.distributed.run"]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert '--8<-- "docs/examples/quickstart.py"' in (REPO / "docs/index.md").read_text()
