"""The mkdocs plugin (``plugins: [indexgen]``, :mod:`indexgen.run.mkdocs_plugin`) on the
sample project, a site that does not commit its pages: a real ``mkdocs build --strict``
(with mkdocs's anchor validation on, so every link of every generated page and the
hand-written page's link into them must resolve), an incremental rebuild after a source
changed, a real ``mkdocs serve`` that rebuilds on a save, and the errors of a bad setup.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from ig_helpers import SAMPLE
from mkdocs.commands.build import build as mkdocs_build
from mkdocs.config import load_config as mkdocs_config
from mkdocs.exceptions import Abort

SITE_CONFIG = """\
site_name: shop
strict: true
validation:
  omitted_files: warn
  absolute_links: warn
  unrecognized_links: warn
  anchors: warn
plugins:
  - indexgen:
      jobs: 1
"""

INDEX = """\
# Shop

The cart's [add method](reference/shop/cart.py_docs.md#sym-Cart.add).
"""


def _project(tmp_path: Path, config: str = SITE_CONFIG) -> Path:
    project = tmp_path / "shop"
    for path in sorted(SAMPLE.rglob("*")):
        target = project / path.relative_to(SAMPLE)
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    (project / "mkdocs.yml").write_text(config)
    (project / "docs").mkdir()
    (project / "docs" / "index.md").write_text(INDEX)
    return project


def _edit(project: Path, old: str, new: str) -> None:
    cart = project / "src" / "shop" / "cart.py"
    cart.write_text(cart.read_text().replace(old, new))


def _built(project: Path, page: str) -> str:
    return (project / "site" / page / "index.html").read_text()


def test_strict_build_adds_the_pages_to_the_site(tmp_path):
    project = _project(tmp_path)
    # a source that does not parse does not fail a strict build: logged at INFO level
    (project / "src" / "shop" / "broken.py").write_text("def oops(:\n")
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict"], cwd=project,
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    assert "pages written" in result.stderr  # the plugin's log line
    listed = [x for x in result.stderr.splitlines() if "not analyzed: " in x]
    assert len(listed) == 1 and "broken.py" in listed[0] and listed[0].startswith("INFO")
    cart = _built(project, "reference/shop/cart.py_docs")
    assert "A shopping cart." in cart and 'id="sym-Cart.add"' in cart
    for page in ("reference/shop/cart.py_kw", "reference/shop/payments/gateway.py_docs",
                 "reference/shop/doc"):
        assert (project / "site" / page / "index.html").is_file(), page
    assert (project / "site" / "reference" / "index.html").is_file()  # the folder index
    assert 'href="reference/shop/cart.py_docs/#sym-Cart.add"' in _built(project, "")
    # The pages live beside the site, ignored by git; nothing was written into docs/.
    assert sorted(p.name for p in (project / "docs").iterdir()) == ["index.md"]
    cache = project / ".cache" / "indexgen"
    assert (cache / "shop" / "cart.py_docs.md").is_file()
    assert (cache / ".gitignore").read_text().splitlines()[-1] == "*"


def test_rebuild_rewrites_only_what_changed(tmp_path):
    project = _project(tmp_path)
    config_file = str(project / "mkdocs.yml")
    mkdocs_build(mkdocs_config(config_file))
    cache = project / ".cache" / "indexgen"
    before = {p: p.stat().st_mtime_ns for p in cache.rglob("*.md")}
    _edit(project, "A shopping cart.", "A trolley.")
    mkdocs_build(mkdocs_config(config_file))
    assert "A trolley." in _built(project, "reference/shop/cart.py_docs")
    changed = {p.relative_to(cache).as_posix() for p, t in before.items()
               if p.stat().st_mtime_ns != t}
    assert "shop/cart.py_docs.md" in changed
    assert changed < {p.relative_to(cache).as_posix() for p in before}, changed
    # Nothing changed: no page and not the manifest is written (the stat cache may be).
    after = {p: p.stat().st_mtime_ns for p in cache.rglob("*.md")}
    manifest = cache / ".indexgen-manifest.json"
    written = manifest.stat().st_mtime_ns
    mkdocs_build(mkdocs_config(config_file))
    assert {p: p.stat().st_mtime_ns for p in cache.rglob("*.md")} == after
    assert manifest.stat().st_mtime_ns == written


def test_excluded_files_get_no_pages_in_the_site(tmp_path):
    project = _project(tmp_path, SITE_CONFIG + "      exclude: [payments]\n")
    mkdocs_build(mkdocs_config(str(project / "mkdocs.yml")))
    assert (project / "site/reference/shop/cart.py_docs/index.html").is_file()
    assert not (project / "site/reference/shop/payments").exists()
    assert not (project / ".cache/indexgen/shop/payments").exists()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read().decode()
    except OSError:
        return ""


def _wait_for(url: str, text: str, proc: subprocess.Popen, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end and proc.poll() is None:
        if text in _get(url):
            return True
        time.sleep(0.2)
    return False


def test_serve_rebuilds_the_pages_of_a_saved_source(tmp_path):
    # not strict, as one serves while editing: a strict serve stops rebuilding at the first
    # warning (the source saved with a syntax error below would stop it, and so would the
    # link into its page, whose anchor is gone)
    project = _project(tmp_path, SITE_CONFIG.replace("strict: true\n", ""))
    port = _free_port()
    url = f"http://127.0.0.1:{port}/reference/shop/cart.py_docs/"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "mkdocs", "serve", "--dev-addr",
                             f"127.0.0.1:{port}"], cwd=project, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert _wait_for(url, "A shopping cart.", proc, 120), "the first build was not served"
        _edit(project, "A shopping cart.", "A trolley.")
        assert _wait_for(url, "A trolley.", proc, 60), "saving a source did not rebuild"
        # a source saved with a syntax error: its page says so, and serve warns (a build
        # lists it at INFO level, which --strict does not count: test_strict_build_...)
        _edit(project, '"""A trolley."""', '"""A trolley."""\ndef oops(:\n')
        assert _wait_for(url, "does not parse", proc, 60), "the broken source was not served"
    finally:
        proc.terminate()
        output = proc.communicate(timeout=30)[0]
    assert "pages written" in output
    warned = [x for x in output.splitlines() if "not analyzed: " in x and "cart.py" in x]
    assert warned and all("WARNING" in x for x in warned), warned


def _refused(project: Path, caplog) -> str:
    """The error a site build stops with (mkdocs logs a plugin's error, then aborts)."""
    caplog.clear()
    with pytest.raises(Abort):
        mkdocs_build(mkdocs_config(str(project / "mkdocs.yml")))
    return caplog.text


def test_cache_inside_docs_is_refused(tmp_path, caplog):
    project = _project(tmp_path, SITE_CONFIG + "      cache_dir: docs/generated\n")
    assert "lies inside docs_dir" in _refused(project, caplog)


def test_roots_are_needed_somewhere(tmp_path, caplog):
    project = _project(tmp_path)
    (project / "pyproject.toml").write_text("[project]\nname = 'shop'\n")
    error = _refused(project, caplog)
    assert "has no [tool.indexgen] table" in error and "give the plugin its roots" in error
    # A table with roots alone is enough (the plugin has its own output folder) ...
    (project / "pyproject.toml").write_text("[tool.indexgen]\nroots = ['src']\n")
    mkdocs_build(mkdocs_config(str(project / "mkdocs.yml")))
    assert "A shopping cart." in _built(project, "reference/shop/cart.py_docs")
    # ... and roots given in mkdocs.yml need no table, here under another dest.
    (project / "pyproject.toml").unlink()
    (project / "mkdocs.yml").write_text(SITE_CONFIG + "      roots: [src]\n      dest: api\n")
    (project / "docs" / "index.md").write_text(INDEX.replace("(reference/", "(api/"))
    mkdocs_build(mkdocs_config(str(project / "mkdocs.yml")))
    assert "A shopping cart." in _built(project, "api/shop/cart.py_docs")


def test_a_docs_file_in_the_way_is_refused(tmp_path, caplog):
    project = _project(tmp_path)
    (project / "docs" / "reference" / "shop").mkdir(parents=True)
    (project / "docs" / "reference" / "shop" / "cart.py_kw.md").write_text("# mine\n")
    assert "both a file of docs_dir and a generated page" in _refused(project, caplog)


def test_a_misspelt_option_stops_even_a_build_that_is_not_strict(tmp_path, caplog):
    # mkdocs only warns about an unknown option: the build would go on and read roots from
    # pyproject.toml instead of the ones the user meant to give
    config = SITE_CONFIG.replace("strict: true\n", "") + "      root: [src]\n"
    error = _refused(_project(tmp_path, config), caplog)
    assert "the indexgen plugin has no option 'root'; did you mean 'roots'?" in error, error


def test_the_analysis_limits_are_options_of_the_plugin(tmp_path, caplog):
    # max_bytes and time_budget as the pyproject's max-bytes and time-budget: a file over
    # the size limit gets pages that say it was not analyzed, in a build that still passes
    project = _project(tmp_path, SITE_CONFIG + "      max_bytes: 200\n")
    (project / "docs" / "index.md").write_text("# Shop\n")  # no link to an anchor of cart's
    mkdocs_build(mkdocs_config(str(project / "mkdocs.yml")))
    cart = _built(project, "reference/shop/cart.py_docs")
    assert "Not analyzed" in cart and "exceeds the 200-byte limit" in cart, cart[:2000]
    assert "A shopping cart." not in cart
    caplog.clear()
    # the rule of [tool.indexgen] and the command line, spelt as the plugin's options are
    size = ("max_bytes must be a whole number of bytes, 1 or more, not {} "
            "(e.g. max_bytes: 2000000, the default)")
    time = ("time_budget must be a number of seconds, 0 or more (0: no limit), not {} "
            "(e.g. time_budget: 20, the default)")
    for n, (bad, said) in enumerate((
            ("max_bytes: 0", size.format(0)),
            ("max_bytes: true", size.format("true")),  # once taken for 1
            ("max_bytes: 1.5", size.format(1.5)),
            ("time_budget: -1", time.format(-1)),
            ("time_budget: true", time.format("true")),  # once taken for 1 second
            ("time_budget: .nan", time.format("nan")),  # once a crash in the build
            ("jobs: true", "jobs must be a whole number of worker processes, 0 or more (0: one "
                           "per CPU), not true (e.g. jobs: 0, the default)"),  # once 1 worker
            ("jobs: -2", "jobs must be a whole number of worker processes, 0 or more (0: one "
                         "per CPU), not -2 (e.g. jobs: 0, the default)"))):
        project = _project(tmp_path / str(n), SITE_CONFIG + f"      {bad}\n")
        error = _refused(project, caplog)
        assert f"indexgen: {project / 'mkdocs.yml'}: the indexgen plugin's option {said}" \
            in error, error
