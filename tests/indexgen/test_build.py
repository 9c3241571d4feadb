"""Tests for indexgen.run.build: determinism, incremental writes, check, safety of writes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import indexgen
import pytest
from ig_helpers import read_tree, sample_config
from indexgen import MARKER, ConfigError, ConflictError, UnsafePathError, build, check
from indexgen.layout import MANIFEST_NAME
from indexgen.run import manifest as mf
from indexgen.run import plan


def _mtimes(root):
    return {p: p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


def test_same_tree_gives_identical_bytes_whatever_the_order(sample, tmp_path):
    first = sample_config(sample)
    build(first)
    other = tmp_path / "elsewhere"
    shutil.copytree(sample / "src", other / "src")
    shutil.copytree(sample / "tests", other / "tests")
    second = sample_config(other, jobs=2)
    build(second)
    assert read_tree(first.out) == read_tree(second.out)


def test_rebuild_with_nothing_changed_writes_nothing(sample):
    config = sample_config(sample)
    build(config)
    before = _mtimes(config.out)
    report = build(config)
    assert report.written == [] and report.removed == []
    assert report.extracted == 0 and report.rendered == 0
    assert _mtimes(config.out) == before


def test_the_code_version_follows_every_module_of_indexgen(tmp_path):
    package = Path(indexgen.__file__).parent
    copy = tmp_path / "indexgen"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert mf.code_version(copy) == mf.CODE_VERSION
    (copy / "render" / "notes.txt").write_text("not code")
    assert mf.code_version(copy) == mf.CODE_VERSION
    module = copy / "extract" / "bindings.py"
    module.write_text(module.read_text() + "\n# an edit\n")
    assert mf.code_version(copy) != mf.CODE_VERSION


def test_a_build_by_other_code_renders_every_page_again(sample, monkeypatch):
    # Cached summaries and page hashes were made by the code that wrote the manifest: an
    # edit of indexgen's extraction or render must not leave pages as older code made them.
    config = sample_config(sample)
    first = build(config)
    monkeypatch.setattr(plan, "CODE_VERSION", mf.CODE_VERSION + "-edited")
    report = build(config)
    assert report.extracted == report.rendered == first.files == report.files > 0
    assert build(config).rendered == 0  # and the next build, by the same code, nothing


def test_changing_a_source_rewrites_its_pages_and_dependents_only(sample):
    config = sample_config(sample)
    build(config)
    gateway = sample / "src/shop/payments/gateway.py"
    gateway.write_text(gateway.read_text() + "\n\ndef refund() -> None:\n    pass\n")
    report = build(config)
    assert "shop/payments/gateway.py_docs.md" in report.written
    assert "shop/payments/gateway.py_kw.md" in report.written
    assert not any(p.startswith("shop/inventory") for p in report.written)
    assert "refund" in (config.out / "shop/payments/gateway.py_kw.md").read_text()
    # the result equals a fresh build
    fresh = sample_config(sample)
    fresh.out = sample / "fresh"
    build(fresh)
    assert read_tree(config.out) == read_tree(fresh.out)


def test_context_change_rerenders_unchanged_importers(sample):
    config = sample_config(sample)
    build(config)
    (sample / "src/shop/loyalty.py").write_text('"""Points."""\nfrom shop.cart import Cart\n')
    report = build(config)
    assert "shop/loyalty.py_docs.md" in report.written
    assert "shop/cart.py_docs.md" in report.written  # now imported by loyalty.py
    assert "loyalty.py" in (config.out / "shop/cart.py_docs.md").read_text()


def test_deleted_source_pages_are_removed(sample):
    config = sample_config(sample)
    build(config)
    shutil.rmtree(sample / "src/shop/payments")
    report = build(config)
    assert "shop/payments/gateway.py_docs.md" in report.removed
    assert not (config.out / "shop/payments").exists()
    assert "payments" not in (config.out / "shop/index.md").read_text()


def test_foreign_files_are_never_touched(sample):
    config = sample_config(sample)
    config.out.mkdir(parents=True)
    mine = config.out / "notes.md"
    mine.write_text("# my notes\n")
    build(config)
    shutil.rmtree(sample / "src/shop/payments")
    build(config)
    assert mine.read_text() == "# my notes\n"


def test_foreign_file_in_the_way_is_a_conflict(sample):
    config = sample_config(sample)
    target = config.out / "shop/cart.py_kw.md"
    target.parent.mkdir(parents=True)
    target.write_text("hand written\n")
    with pytest.raises(ConflictError, match="shop/cart.py_kw.md") as err:
        build(config)
    assert str(target) in str(err.value) and "move them out of" in str(err.value)
    assert target.read_text() == "hand written\n"
    report = check(config)
    assert report.conflicts == ["shop/cart.py_kw.md"] and not report.up_to_date


def test_no_temporary_files_remain(sample):
    config = sample_config(sample)
    build(config)
    leftovers = [p for p in config.out.rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []


def test_check_is_clean_after_build_and_writes_nothing(sample):
    config = sample_config(sample)
    report = check(config)
    assert not config.out.exists()
    assert "shop/cart.py_docs.md" in report.missing and MANIFEST_NAME in report.missing
    build(config)
    before = read_tree(config.out)
    report = check(config)
    assert report.up_to_date
    assert read_tree(config.out) == before


def test_check_reports_stale(sample):
    config = sample_config(sample)
    build(config)
    page = config.out / "shop/cart.py_docs.md"
    page.write_text(page.read_text().replace("A shopping cart.", "Edited by hand."))
    report = check(config)
    assert report.stale == ["shop/cart.py_docs.md"]
    assert not report.missing and not report.orphaned


def test_check_reports_stale_after_source_change(sample):
    config = sample_config(sample)
    build(config)
    cart = sample / "src/shop/cart.py"
    cart.write_text(cart.read_text().replace("A shopping cart.", "A basket."))
    report = check(config)
    assert "shop/cart.py_docs.md" in report.stale
    assert "shop/cart.py_kw.md" not in report.stale  # no keyword changed
    assert "shop/index.md" in report.stale  # the folder index shows the summary line


def test_check_reports_missing(sample):
    config = sample_config(sample)
    build(config)
    (config.out / "shop/inventory.py_kw.md").unlink()
    report = check(config)
    assert report.missing == ["shop/inventory.py_kw.md"] and not report.stale


def test_check_reports_orphaned_and_kept(sample):
    config = sample_config(sample)
    build(config)
    (config.out / "shop/old.py_docs.md").write_text(MARKER + "\n# old\n")
    (sample / "src/shop/cart.py").unlink()
    report = check(config)
    assert report.orphaned == ["shop/cart.py_docs.md", "shop/cart.py_kw.md"]
    assert report.kept == [("shop/old.py_docs.md",
                            "not listed in the manifest as written by indexgen")]
    assert not report.up_to_date


def test_annotated_copy_and_edited_orphan_are_kept(sample):
    config = sample_config(sample)
    build(config)
    docs = config.out / "shop/cart.py_docs.md"
    copy = config.out / "shop/cart_notes.md"  # a user's annotated copy, marker included
    copy.write_text(docs.read_text() + "\nMy note: checkout is slow.\n")
    kw = config.out / "shop/cart.py_kw.md"
    kw.write_text(kw.read_text() + "\nedited\n")
    (sample / "src/shop/cart.py").unlink()
    report = build(config)
    assert report.removed == ["shop/cart.py_docs.md"]  # unchanged since written: removed
    assert sorted(report.kept) == [
        ("shop/cart.py_kw.md", "changed since indexgen wrote it"),
        ("shop/cart_notes.md", "not listed in the manifest as written by indexgen")]
    assert "My note" in copy.read_text() and kw.exists() and not docs.exists()
    assert check(config).up_to_date  # what build keeps does not fail check


def test_without_a_manifest_nothing_is_deleted(sample):
    config = sample_config(sample)
    build(config)
    (config.out / MANIFEST_NAME).unlink()
    (sample / "src/shop/inventory.py").unlink()
    report = build(config)
    assert report.removed == []
    assert ("shop/inventory.py_docs.md", "not listed in the manifest as written by indexgen") \
        in report.kept


def test_check_without_manifest_still_compares_pages(sample):
    config = sample_config(sample)
    build(config)
    (config.out / MANIFEST_NAME).unlink()
    report = check(config)
    assert report.missing == [MANIFEST_NAME] and not report.stale


def test_output_inside_a_root_is_left_out_and_said(sample):
    config = sample_config(sample)
    config.out = sample / "src" / "shop" / "generated"
    report = build(config)
    assert report.notes == [f"the output directory {config.out} lies inside the source root "
                            f"{sample / 'src'}; it is left out of the pages"]
    build(config)
    assert not list(config.out.rglob("*.md_docs.md"))
    assert not (config.out / "shop/generated").exists()


def test_output_holding_sources_is_refused(sample):
    config = sample_config(sample)
    config.out = sample / "src" / "shop" / "payments"  # a subpackage: it would vanish
    with pytest.raises(ConfigError, match=r"holds 2 Python file\(s\) \(first: __init__.py\)"):
        build(config)
    assert not (config.out / "index.md").exists()


def test_symlink_loop_is_refused(sample):
    os.symlink(sample / "src/shop", sample / "src/shop/payments/loop")
    with pytest.raises(UnsafePathError, match="loop"):
        build(sample_config(sample))


def test_mutual_symlink_loop_is_called_a_loop(sample):
    os.symlink(sample / "src/shop/b", sample / "src/shop/a")
    os.symlink(sample / "src/shop/a", sample / "src/shop/b")
    with pytest.raises(UnsafePathError, match="symlink loop"):
        build(sample_config(sample))


def test_broken_symlink_is_called_broken(sample):
    os.symlink(sample / "src/shop/nowhere.py", sample / "src/shop/dangling.py")
    with pytest.raises(UnsafePathError, match="broken symlink"):
        build(sample_config(sample))


def test_symlink_outside_root_is_refused(sample, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("x = 1\n")
    os.symlink(outside, sample / "src/shop/linked")
    with pytest.raises(UnsafePathError, match="leaves the source root"):
        build(sample_config(sample))


def test_several_roots_go_under_their_names(sample):
    tools = sample / "tools" / "helper"
    tools.mkdir(parents=True)
    (tools / "__init__.py").write_text('"""Helpers."""\n')
    config = sample_config(sample)
    config.roots.append(sample / "tools")
    build(config)
    assert (config.out / "src/shop/cart.py_docs.md").is_file()
    assert (config.out / "tools/helper/__init__.py_kw.md").is_file()
    assert (config.out / "src/index.md").is_file() and (config.out / "tools/doc.md").is_file()
    text = (config.out / "src/shop/cart.py_kw.md").read_text()
    assert "[`src/shop`](index.md)" in text


def _age(root, seconds=60):
    """Move every file's modification time into the past (out of the stat cache's racy
    window, as for sources edited before a build)."""
    import time

    past = time.time() - seconds
    for p in root.rglob("*"):
        if p.is_file():
            os.utime(p, (past, past))


def test_no_change_rebuild_reads_nothing(sample, monkeypatch):
    from indexgen.run import plan

    _age(sample)
    config = sample_config(sample)
    build(config)
    cache = config.out / ".indexgen-cache"
    assert (cache / ".gitignore").read_text().endswith("*\n")

    def no_reading(self):
        raise AssertionError("the fast path must not hash sources")

    monkeypatch.setattr(plan.Plan, "hash_sources", no_reading)
    report = build(config)
    assert report.written == [] and report.files == 7
    assert check(config).up_to_date


def test_stat_changes_fall_back_to_content(sample):
    _age(sample)
    config = sample_config(sample)
    build(config)
    cart = sample / "src/shop/cart.py"
    cart.write_bytes(cart.read_bytes())  # touched, same content: nothing to write
    report = build(config)
    assert report.written == [] and report.extracted == 0
    page = config.out / "shop/cart.py_docs.md"
    text = page.read_text()
    page.write_text(text.replace("A shopping cart.", "A shopping cart!"))  # same size
    assert check(config).stale == ["shop/cart.py_docs.md"]
    assert build(config).written == ["shop/cart.py_docs.md"]
    assert page.read_text() == text


def test_folder_pages_made_in_a_process_of_their_own_are_the_same(sample, tmp_path,
                                                                   monkeypatch):
    # with more than two cores the folder pages are made by a forked process during the
    # global pass (Plan.relate); a 2-core machine never takes that path unless told to
    from indexgen.run import fanout, plan

    serial = sample_config(sample, jobs=1)
    build(serial)
    made = []

    class Counted(fanout.Forked):
        def __init__(self, func):
            made.append(func.__name__)
            super().__init__(func)

    monkeypatch.setattr(plan.fanout, "shard_count", lambda jobs: 4)
    monkeypatch.setattr(plan.fanout, "Forked", Counted)
    other = tmp_path / "elsewhere"
    shutil.copytree(sample / "src", other / "src")
    shutil.copytree(sample / "tests", other / "tests")
    forked = sample_config(other, jobs=4)
    report = build(forked)
    assert made == ["_emit_folders"]
    assert read_tree(serial.out) == read_tree(forked.out)
    folder_pages = [p for p in report.written if p.endswith(("/index.md", "/doc.md"))]
    assert folder_pages and all((forked.out / p).is_file() for p in folder_pages)
    manifest = (forked.out / MANIFEST_NAME).read_text()
    assert all(p in manifest for p in folder_pages)  # their hashes came back


def test_contexts_sealed_in_forked_processes_rerender_only_what_changed(sample, monkeypatch):
    # with more than two pass processes each context is sealed (its hash, and its render
    # input when its pages must change) in the process that finished it (Plan._seal); a
    # 2-core machine never takes that path unless told to
    from indexgen.run import plan

    monkeypatch.setattr(plan.fanout, "shard_count", lambda jobs: 4)
    config = sample_config(sample, jobs=4)
    build(config)
    gateway = sample / "src/shop/payments/gateway.py"
    gateway.write_text(gateway.read_text() + "\n\ndef refund() -> None:\n    pass\n")
    page = config.out / "shop/cart.py_docs.md"
    text = page.read_text()
    page.write_text(text.replace("A shopping cart.", "A shopping cart!"))  # edited by hand
    report = build(config)
    assert {"shop/payments/gateway.py_docs.md", "shop/cart.py_docs.md"} <= set(report.written)
    assert not any(p.startswith("shop/inventory") for p in report.written)
    assert 0 < report.rendered < report.files  # the others were sealed with no render input
    assert page.read_text() == text
    fresh = sample_config(sample, jobs=1)
    fresh.out = sample / "fresh"
    build(fresh)
    assert read_tree(config.out) == read_tree(fresh.out)
