"""The pre-commit hooks (.pre-commit-hooks.yaml), run by ``pre-commit run`` in a fixture
repository that keeps indexgen's pages and names the hooks in its
``.pre-commit-config.yaml``, as a user's repository would.

The hooks' repository is this one's working tree committed in a copy of its own (what
``pre-commit try-repo`` makes of a tree with changes, once for the module, so that the four
runs share one hook environment where ``try-repo`` installed one each).  pre-commit
installs that repository into a fresh environment.  The package also declares
torch, which the hooks never import; a stand-in torch wheel (made here, found through
``PIP_FIND_LINKS`` and pinned with ``PIP_CONSTRAINT``) keeps the environment from installing
a 200 MB wheel.  Everything else (griffe, Markdown, tqdm, setuptools) comes from the package
index as for any user.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from ig_helpers import SAMPLE
from indexgen import Config, build

REPO = Path(__file__).resolve().parents[2]
PRE_COMMIT = Path(sys.executable).with_name("pre-commit")


def _standin_torch(folder: Path) -> Path:
    """A wheel named torch 2.13.0+standin holding an empty package."""
    name, version = "torch", "2.13.0+standin"
    info = f"{name}-{version}.dist-info"
    files = {
        "torch/__init__.py": b'"""Stand-in for tests: the indexgen hooks never import torch."""\n',
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\n"
                         b"Tag: py3-none-any\n",
    }
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for path, data in files.items():
            zf.writestr(path, data)
    return wheel


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"})


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A git repository with the sample project and its committed pages, and the environment
    for pre-commit."""
    if not PRE_COMMIT.exists() or shutil.which("git") is None:
        pytest.fail("pre-commit (test extra) and git are needed")
    base = tmp_path_factory.mktemp("precommit")
    repo = base / "project"
    shutil.copytree(SAMPLE, repo)
    build(Config(roots=[repo / "src"], out=repo / "docs" / "reference", tests=[repo / "tests"],
                 base=repo, jobs=1))
    hooks, rev = _hooks_repo(base / "hooks")
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {hooks}\n  rev: {rev}\n  hooks:\n"
        "  - id: indexgen-check\n  - id: indexgen-build\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "sample with pages")
    wheels = base / "wheels"
    wheels.mkdir()
    _standin_torch(wheels)
    constraints = base / "constraints.txt"
    constraints.write_text("torch==2.13.0+standin\n")
    env = {**os.environ, "PRE_COMMIT_HOME": str(base / "cache"), "PIP_FIND_LINKS": str(wheels),
           "PIP_CONSTRAINT": str(constraints), "NO_COLOR": "1"}
    env.pop("VIRTUAL_ENV", None)
    return repo, env


def _hooks_repo(folder: Path) -> tuple[Path, str]:
    """This repository's working tree (its tracked files and those git does not ignore) as
    the one commit of a repository in ``folder``: that repository and the commit."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], cwd=REPO, capture_output=True,
                            check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        if (REPO / rel).is_file():  # (a file deleted but not yet staged is listed too)
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, folder / rel)
    _git(folder, "init", "-q")
    _git(folder, "add", "-A")
    _git(folder, "commit", "-q", "-m", "the working tree")
    rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=folder, capture_output=True,
                         text=True, check=True).stdout.strip()
    return folder, rev


def _run_hook(repo: Path, env: dict, hook: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(PRE_COMMIT), "run", hook, "--all-files", "--color", "never"],
                          cwd=repo, env=env, capture_output=True, text=True, check=False,
                          timeout=900)


def test_check_passes_on_a_clean_tree_and_lists_stale_pages(project):
    repo, env = project
    clean = _run_hook(repo, env, "indexgen-check")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "indexgen check" in clean.stdout and "Passed" in clean.stdout
    cart = repo / "src/shop/cart.py"
    cart.write_text(cart.read_text().replace("A shopping cart.", "A basket."))
    _git(repo, "add", "-A")  # staged, about to be committed without its pages
    stale = _run_hook(repo, env, "indexgen-check")
    assert stale.returncode == 1, stale.stdout + stale.stderr
    assert "stale: shop/cart.py_docs.md" in stale.stdout
    assert "Failed" in stale.stdout


def test_build_hook_rewrites_the_pages(project):
    repo, env = project
    cart = repo / "src/shop/cart.py"
    cart.write_text(cart.read_text().replace("A shopping cart.", "A trolley.")
                    .replace("A basket.", "A trolley."))
    _git(repo, "add", "-A")
    result = _run_hook(repo, env, "indexgen-build")
    assert result.returncode == 1  # pre-commit fails a hook that modified files
    assert "files were modified by this hook" in result.stdout
    assert "A trolley." in (repo / "docs/reference/shop/cart.py_docs.md").read_text()
    assert _run_hook(repo, env, "indexgen-check").returncode == 0


def test_a_local_hook_installs_indexgen_without_torch(project):
    # The guide's torch-free alternative: a hook of `repo: local` whose environment gets
    # indexgen-pages alone (here from this checkout's tools/, as a user's from its git URL)
    repo, env = project
    # a copy: pip builds a folder in place (tools/build/), which the next build of this
    # repository's pages would document
    tools = repo.parent / "indexgen-tools"
    shutil.copytree(REPO / "tools", tools, ignore=shutil.ignore_patterns(
        "build", "*.egg-info", "__pycache__"))
    config = repo / ".pre-commit-local.yaml"
    config.write_text(
        "repos:\n- repo: local\n  hooks:\n  - id: indexgen-check\n    name: indexgen check\n"
        "    entry: indexgen check\n    language: python\n"
        f"    additional_dependencies: [{str(tools)!r}]\n"
        "    pass_filenames: false\n    always_run: true\n")
    cache = Path(env["PRE_COMMIT_HOME"])
    before = set(cache.glob("repo*/py_env-*"))
    result = subprocess.run([str(PRE_COMMIT), "run", "-c", str(config), "indexgen-check",
                             "--all-files", "--color", "never"], cwd=repo, env=env,
                            capture_output=True, text=True, check=False, timeout=900)
    assert "indexgen check" in result.stdout, result.stdout + result.stderr
    assert result.returncode in (0, 1), result.stdout + result.stderr  # the check ran
    made = set(cache.glob("repo*/py_env-*")) - before
    assert made, sorted(cache.glob("*/*"))
    for folder in made:
        assert list(folder.glob("bin/indexgen")), folder
        assert not list(folder.glob("lib/python*/site-packages/torch")), folder
