"""A fresh clone of committed pages (no stat cache, new modification times): a build or a
check finds in the manifest that nothing changed and runs no global pass
(``indexgen.run.settled``); anything that differs still gets the full build."""

from __future__ import annotations

import shutil

import pytest
from ig_helpers import read_tree, sample_config
from indexgen import build, check
from indexgen.layout import MANIFEST_NAME
from indexgen.run import plan


def _fresh_clone(sample, tmp_path):
    """The sample as a clone of a repository that commits its pages would be: the sources,
    the tests and the pages with their manifest, no stat cache, every file newly written."""
    build(sample_config(sample))
    clone = tmp_path / "clone"
    shutil.copytree(sample, clone, ignore=shutil.ignore_patterns(".indexgen-cache"))
    return clone, sample_config(clone)


@pytest.fixture
def no_pass(monkeypatch):
    """Call it to make the global pass fail from then on, so that a test sees whether it
    ran."""

    def refused(self):
        raise AssertionError("the global pass ran")

    return lambda: monkeypatch.setattr(plan.Plan, "relate", refused)


def test_a_fresh_clone_is_checked_and_built_without_the_global_pass(sample, tmp_path, no_pass):
    clone, config = _fresh_clone(sample, tmp_path)
    no_pass()
    assert not (config.out / ".indexgen-cache").exists()
    before = read_tree(config.out)
    report = check(config)
    assert report.up_to_date and report.files == 7 and report.extracted == 0
    report = build(config)
    assert report.written == [] and report.removed == [] and report.rendered == 0
    assert read_tree(config.out) == before
    assert (config.out / ".indexgen-cache" / "stat.json").is_file()  # the next reads nothing


def test_the_manifest_records_every_test_file(sample):
    config = sample_config(sample)
    build(config)
    recorded = plan.mf.read(config.out / MANIFEST_NAME)["tests"]
    assert sorted(recorded) == ["tests/test_cart.py", "tests/test_orders.py"]
    assert all(len(digest) == 64 for digest in recorded.values())


def test_a_changed_test_file_is_a_full_check(sample, tmp_path):
    # the pages' Testing & Usage read the test files: a test that now imports a module
    # changes that module's page, which only the global pass finds
    clone, config = _fresh_clone(sample, tmp_path)
    test = clone / "tests" / "test_orders.py"
    test.write_text(test.read_text() + "\nfrom shop.ledger import *  # noqa\n")
    report = check(config)
    assert "shop/ledger.py_docs.md" in report.stale, report
    assert build(config).written


def test_a_test_file_edited_without_a_page_change_still_checks_up_to_date(sample, tmp_path):
    # the manifest's test hashes only say whether a fresh clone has anything to compute:
    # a test edited without a build (a comment here) runs the full check, which passes
    clone, config = _fresh_clone(sample, tmp_path)
    test = clone / "tests" / "test_cart.py"
    test.write_text(test.read_text() + "\n# one more comment\n")
    report = check(config)
    assert report.up_to_date, report
    manifest = (config.out / MANIFEST_NAME).read_bytes()
    assert build(config).written == [MANIFEST_NAME]  # the build records the new hash
    assert (config.out / MANIFEST_NAME).read_bytes() != manifest


def test_an_edited_page_or_source_is_a_full_check(sample, tmp_path):
    clone, config = _fresh_clone(sample, tmp_path)
    page = config.out / "shop" / "cart.py_docs.md"
    text = page.read_text()
    page.write_text(text.replace("A shopping cart.", "A shopping cart!"))
    assert check(config).stale == ["shop/cart.py_docs.md"]
    page.write_text(text)
    source = clone / "src" / "shop" / "cart.py"
    source.write_text(source.read_text().replace("A shopping cart.", "A cart."))
    assert "shop/cart.py_docs.md" in check(config).stale


def test_a_new_or_removed_source_is_a_full_check(sample, tmp_path):
    clone, config = _fresh_clone(sample, tmp_path)
    (clone / "src" / "shop" / "refunds.py").write_text("def refund():\n    pass\n")
    assert "shop/refunds.py_docs.md" in check(config).missing
    (clone / "src" / "shop" / "refunds.py").unlink()
    (clone / "src" / "shop" / "ledger.py").unlink()
    assert "shop/ledger.py_docs.md" in check(config).orphaned


def test_a_page_nothing_produces_is_reported_as_by_a_full_build(sample, tmp_path, no_pass):
    clone, config = _fresh_clone(sample, tmp_path)
    no_pass()
    stray = config.out / "shop" / "gone.py_docs.md"  # a copy saved under another name
    shutil.copy(config.out / "shop" / "cart.py_docs.md", stray)
    kept = [("shop/gone.py_docs.md", "not listed in the manifest as written by indexgen")]
    assert check(config).kept == kept
    assert build(config).kept == kept and stray.exists()
