"""indexgen as a distribution of its own (``tools/pyproject.toml``): its wheel, built from a
copy of ``tools/`` (so the repository gets no ``build/`` folder that a build of ``tools``
would document), installs into a fresh virtual environment that has neither torch nor
fsdp_ref, and its ``indexgen`` command there writes the same pages as the library here.

The environment is made without pip (``venv --without-pip``) and filled by this
environment's pip through ``pip --python``: faster than bootstrapping pip, and the
dependencies (griffelib, Markdown, tqdm) come from the package index as configured on the
machine, the way a user's install gets them. The wheel is built with
``--no-build-isolation`` from the setuptools already installed here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from ig_helpers import SAMPLE, read_tree, sample_config
from indexgen import build

REPO = Path(__file__).resolve().parents[2]


def _run(*cmd, cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    result = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True,
                            text=True, timeout=timeout, check=False)
    assert result.returncode == 0, f"{cmd}:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path]:
    """(the wheel, the fresh environment's folder) after installing the wheel there."""
    base = tmp_path_factory.mktemp("install")
    source = base / "source"
    source.mkdir()
    shutil.copy(REPO / "tools" / "pyproject.toml", source)
    shutil.copytree(REPO / "tools" / "indexgen", source / "indexgen",
                    ignore=shutil.ignore_patterns("__pycache__"))
    wheels = base / "wheels"
    _run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-index", "--no-deps",
         "--no-build-isolation",
         "-w", wheels, source, cwd=base)
    (wheel,) = wheels.glob("*.whl")
    venv = base / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=base)
    _run(sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install",
         "--quiet", wheel, cwd=base)
    return wheel, venv


def test_the_wheel_holds_indexgen_alone(installed):
    wheel, _venv = installed
    names = zipfile.ZipFile(wheel).namelist()
    packages = {n.split("/")[0] for n in names if n.endswith(".py")}
    assert packages == {"indexgen"}
    for stage in ("extract", "analyze", "render", "run"):
        assert f"indexgen/{stage}/__init__.py" in names
    assert wheel.name.startswith("indexgen_pages-")


def test_fresh_environment_has_neither_torch_nor_fsdp_ref(installed):
    _wheel, venv = installed
    python = venv / "bin" / "python"
    probe = ("import importlib.util as u; "
             "print(*(u.find_spec(m) is not None for m in ('torch', 'fsdp_ref', 'indexgen')))")
    assert _run(python, "-c", probe, cwd=venv).stdout.split() == ["False", "False", "True"]
    plugins = _run(python, "-c", "from importlib.metadata import entry_points; "
                   "print(entry_points(group='mkdocs.plugins')['indexgen'].value)", cwd=venv)
    assert plugins.stdout.strip() == "indexgen.run.mkdocs_plugin:IndexgenPlugin"


def test_installed_command_builds_and_checks_a_tree(installed, tmp_path):
    _wheel, venv = installed
    project = tmp_path / "project"
    shutil.copytree(SAMPLE, project)
    command = venv / "bin" / "indexgen"
    built = _run(command, "build", "-j", "1", cwd=project)  # settings from [tool.indexgen]
    assert "0 not analyzed" in built.stdout
    assert "pages up to date" in _run(command, "check", cwd=project).stdout
    # The same pages as the indexgen of this checkout writes, byte for byte.
    here = tmp_path / "here"
    shutil.copytree(SAMPLE, here)
    build(sample_config(here))
    assert read_tree(project / "docs" / "reference") == read_tree(here / "docs" / "reference")
