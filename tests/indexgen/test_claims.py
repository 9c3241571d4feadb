"""The claims of the analysis pages on the sample project: whole docstrings, overloads, the
call graph, what calls do through the shop's own wrappers, usage and tests."""

from __future__ import annotations

import pytest
from ig_helpers import line_of, sample_config
from indexgen import build


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    import shutil

    from ig_helpers import SAMPLE

    sample = tmp_path_factory.mktemp("claims") / "sample"
    shutil.copytree(SAMPLE, sample)
    config = sample_config(sample)
    build(config)
    return {p.relative_to(config.out).as_posix(): p.read_text()
            for p in config.out.rglob("*.md")}


def _section(page: str, title: str) -> str:
    start = page.index(f"\n## {title}\n")
    end = page.find("\n## ", start + 1)
    return page[start:end if end != -1 else None]


def _definition(page: str, anchor: str) -> str:
    start = page.index(f'<a id="{anchor}"></a>')
    end = page.find('<a id="sym-', start + 1)
    return page[start:end if end != -1 else None]


ORDERS = "src/shop/orders.py"


def test_whole_module_docstring_is_rendered_once(pages):
    overview = _section(pages["shop/orders.py_docs.md"], "High-Level Overview")
    assert ("An [`Order`](#sym-Order) wraps a [`Cart`](cart.py_docs.md#sym-Cart); "
            "[`place()`](#sym-place) writes it to the ledger ([`shop.ledger`](ledger.py_docs.md))"
            " with `write_entry`.") in overview
    assert '<pre class="indexgen-code"><code><span>&gt;&gt;&gt; order = place(' in overview
    assert "**Note**: Orders are never saved `concurrently`." in overview
    assert overview.count("Orders: a cart that was paid for.") == 1


def test_google_sections_of_a_method(pages):
    save = _definition(pages["shop/orders.py_docs.md"], "sym-Order.save")
    assert ("Record the order; see [`total()`](#sym-Order.total) and "
            "[`shop.ledger.write_entry()`](ledger.py_docs.md#sym-write_entry).") in save
    assert "**Parameters**\n\n- `path` (`str`): Where the ledger lives." in save
    assert "**Raises**\n\n- `ValueError`: When the order is empty." in save


def test_numpy_and_sphinx_docstrings(pages):
    ledger = pages["shop/ledger.py_docs.md"]
    assert "- `line` (`str`): What to append, without the newline." in _definition(
        ledger, "sym-write_entry")
    sync = _definition(ledger, "sym-sync_totals")
    assert "- `total`: the local total, a tensor." in sync
    assert "**Returns**\n\n- nothing; `total` holds the sum afterwards." in sync


def test_overload_stubs_are_marked_and_public_api_lands_on_the_implementation(pages):
    docs = pages["shop/orders.py_docs.md"]
    stub = _definition(docs, "sym-place-overload-1")
    assert "### `place` (overload stub 1)" in stub
    assert "the implementation is [`place`](#sym-place)." in stub
    assert "**Calls**" not in stub  # a stub has no body
    impl = _definition(docs, "sym-place")
    assert "### `place`\n" in impl and "overload stub" not in impl
    assert "[`place`](#sym-place)" in _section(docs, "High-Level Overview")
    kw = pages["shop/orders.py_kw.md"]
    n = line_of(ORDERS, "def place(cart: Cart")
    assert f"- **`place`**: [overload, line {n}](orders.py_docs.md#sym-place-overload-1)" in kw


def test_calls_resolve_through_aliases_super_self_and_reexports(pages):
    docs = pages["shop/orders.py_docs.md"]
    save = _definition(docs, "sym-Order.save")
    n = line_of(ORDERS, "record(path, str(self.total()))")
    # record = write_entry in ledger.py: the alias leads to the function
    assert f"[`ledger.write_entry`](ledger.py_docs.md#sym-write_entry) ([line {n}](#L{n}))" in save
    assert f"[`Order.total`](#sym-Order.total) ([line {n}](#L{n}))" in save
    rush = _definition(docs, "sym-RushOrder.save")
    n = line_of(ORDERS, "super().save(path)")
    assert f"[`Order.save`](#sym-Order.save) ([line {n}](#L{n}))" in rush
    assert "[`ledger.sync_totals`](ledger.py_docs.md#sym-sync_totals)" in rush
    main = _definition(docs, "sym-main")
    # `from shop import Cart`: the package re-exports cart.Cart, and calling it runs __init__
    assert "[`cart.Cart.__init__`](cart.py_docs.md#sym-Cart.__init__)" in main
    assert "outside this build: `argparse.ArgumentParser`" in main
    place = _definition(docs, "sym-place")
    n = line_of(ORDERS, "order.save(path)")
    # order = Order(cart): the local's type is the class it was made from
    assert f"[`Order.save`](#sym-Order.save) ([line {n}](#L{n}))" in place
    ledger = pages["shop/ledger.py_docs.md"]
    n = line_of(ORDERS, "record(path, str(self.total()))")
    assert (f"- **Called by**: [`orders.Order.save`](orders.py_docs.md#sym-Order.save) "
            f"([line {n}](orders.py_docs.md#L{n}))") in _definition(ledger, "sym-write_entry")


def test_wrappers_count_for_performance_and_safety(pages):
    docs = pages["shop/orders.py_docs.md"]
    perf = _section(docs, "Performance Considerations")
    n = line_of(ORDERS, "L.sync_totals(")
    assert (f"- [line {n}](#L{n}): `L.sync_totals` in `RushOrder.save`, through "
            "[`ledger.sync_totals`](ledger.py_docs.md#sym-sync_totals)") in perf
    sec = _section(docs, "Security & Safety")
    n = line_of(ORDERS, "record(path, str(self.total()))")
    assert (f"- [line {n}](#L{n}): `record` in `Order.save`, through "
            "[`ledger.write_entry`](ledger.py_docs.md#sym-write_entry)") in sec


def test_usage_of_a_main_module_and_tests_through_calls(pages):
    usage = _section(pages["shop/orders.py_docs.md"], "Testing & Usage")
    n = line_of(ORDERS, 'if __name__ == "__main__":')
    assert (f"Run: `python -m shop.orders ledger [--rush]` (`__main__` block at "
            f"[line {n}](#L{n}))") in usage
    tests = _section(pages["shop/ledger.py_docs.md"], "Testing & Usage")
    assert "- `tests/test_orders.py` reaches `write_entry` through calls" in tests


def test_imports_through_reexports_count_for_the_defining_file(pages):
    deps = _section(pages["shop/cart.py_docs.md"], "Dependencies")
    assert "- [`src/shop/orders.py`](orders.py_docs.md): imports `Cart`" in deps
    tests = _section(pages["shop/cart.py_docs.md"], "Testing & Usage")
    assert "- `tests/test_orders.py` (import at line 1) uses `Cart`" in tests


def test_each_imported_name_links_to_its_own_target(pages):
    deps = _section(pages["shop/orders.py_docs.md"], "Dependencies")
    assert ("- `shop`: [`Cart`](cart.py_docs.md#sym-Cart), [`ledger as L`](ledger.py_docs.md)"
            in deps)
    # record = write_entry: the link goes where the alias leads
    assert "- `shop.ledger`: [`record`](ledger.py_docs.md#sym-write_entry)" in deps


def test_source_is_folded_after_the_overview_heading(pages):
    docs = pages["shop/orders.py_docs.md"]
    source = _section(docs, "Original Source")
    assert source.count("<details") == 1 and "<summary>Show the source (" in source
    assert docs.index("## High-Level Overview") > docs.index("## Original Source")


def test_sections_without_anything_to_say_take_one_line(pages):
    cart = pages["shop/cart.py_docs.md"]
    body = _section(cart, "Performance Considerations").strip().split("\n")[2:]
    assert body == ["None found, directly or through the project functions it calls."]
    ledger = pages["shop/ledger.py_docs.md"]
    assert _section(ledger, "Code Patterns & Idioms").strip().split("\n")[2:] == [
        "None recognized."]
    assert _section(ledger, "Architecture & Design").strip().split("\n")[2:] == [
        "Structure: 3 module-level functions."]
