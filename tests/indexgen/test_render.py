"""Tests for indexgen.render.docs and render_folder, on the pages built for the sample project."""

from __future__ import annotations

import re

import pytest
from ig_helpers import anchors_of, broken_links, line_of, sample_config
from indexgen import MARKER, build
from indexgen.render.docs import SECTIONS
from indexgen.render.page import SHORT_SECTIONS


@pytest.fixture
def pages(sample):
    config = sample_config(sample)
    build(config)
    out = config.out
    return {p.relative_to(out).as_posix(): p.read_text() for p in out.rglob("*.md")}


def _section(page: str, title: str) -> str:
    start = page.index(f"\n## {title}\n")
    end = page.find("\n## ", start + 1)
    return page[start:end if end != -1 else None]


def test_page_set_mirrors_sources(pages):
    expected = {"shop/__init__.py", "shop/cart.py", "shop/inventory.py", "shop/ledger.py",
                "shop/orders.py", "shop/payments/__init__.py", "shop/payments/gateway.py"}
    assert {p[: -len("_docs.md")] for p in pages if p.endswith("_docs.md")} == expected
    assert {p[: -len("_kw.md")] for p in pages if p.endswith("_kw.md")} == expected
    for folder in ("", "shop/", "shop/payments/"):
        assert f"{folder}index.md" in pages and f"{folder}doc.md" in pages
    assert all(text.startswith(MARKER + "\n") for text in pages.values())


def test_analysis_sections_in_seed_order(pages):
    for name, text in pages.items():
        if name.endswith("_docs.md"):
            heads = re.findall(r"^## (.+)$", text, flags=re.M)
            empty = name == "shop/payments/__init__.py_docs.md"  # 0 bytes: nothing analyzed
            assert heads == list(SHORT_SECTIONS if empty else SECTIONS), name


def test_keyword_entries_link_to_exact_anchors(pages):
    kw = pages["shop/inventory.py_kw.md"]
    docs = pages["shop/inventory.py_docs.md"]
    ids = anchors_of(docs)
    entries = re.findall(r"^- \*\*`([^`]+)`\*\*: \[(\w[\w ]*), line (\d+)\]\(([^)]+)\)", kw,
                         flags=re.M)
    names = {e[0] for e in entries}
    assert {"Category", "Item", "Stock", "Stock.Entry", "Stock.add", "Stock.Entry.total",
            "Item.label", "restock", "MAX_STOCK", "default_currency"} <= names
    assert "represents" not in names and "if" not in names
    for _name, _kind, _line, target in entries:
        page, _, anchor = target.partition("#")
        assert page == "inventory.py_docs.md"
        assert anchor in ids
    add = line_of("src/shop/inventory.py", "def add(")
    assert ("Stock.add", "method", str(add), "inventory.py_docs.md#sym-Stock.add") in entries
    assert "### Classs" not in kw


def test_keyword_sections_and_identifier_index(pages):
    kw = pages["shop/cart.py_kw.md"]
    order = [h for h in re.findall(r"^##+ (.+)$", kw, flags=re.M)]
    assert order[:8] == ["File Information", "Keywords Extracted", "Classes", "Functions",
                         "Constants", "Module Attributes", "Imports", "Identifier Index (A–Z)"]
    assert order[-1] == "Keyword → Section Map"
    assert "No constants in this file." in kw
    assert "- **`Cart.add`**: [method, line 17](cart.py_docs.md#sym-Cart.add)" in kw
    assert "- **`json`**: [standard library, line 4](cart.py_docs.md#L4)" in kw
    ident = _section(kw, "Identifier Index (A–Z)")
    assert "- `pickle`: 2 occurrences, first at [line 5](cart.py_docs.md#L5)" in ident
    assert "`customer`" not in ident  # a docstring word, not an identifier
    mapping = _section(kw, "Keyword → Section Map")
    for title in SECTIONS:
        assert f"[{title.replace('&', '&amp;')}]" in mapping or f"[{title}]" in mapping


def test_file_information_links_stay_in_docs(pages):
    kw = pages["shop/cart.py_kw.md"]
    assert ("- **Original File**: [`src/shop/cart.py`](cart.py_docs.md#original-source)"
            in kw)
    assert "- **Folder**: [`src/shop`](index.md)" in kw


def test_original_source_is_embedded_with_line_anchors(pages):
    docs = pages["shop/cart.py_docs.md"]
    ids = anchors_of(docs)
    source_lines = (len(docs.split('<span id="L')) - 1)
    assert {f"L{n}" for n in range(1, source_lines + 1)} <= ids
    assert '<span id="L1"> 1  &quot;' not in docs  # quotes are kept, only &<> escaped
    assert '<span id="L1"> 1  """A shopping cart."""</span>' in docs


def test_docstring_markup_is_escaped(pages):
    docs = pages["shop/inventory.py_docs.md"]
    overview = _section(docs, "High-Level Overview")
    assert "<script>" not in overview and "<b>" not in overview
    assert "&lt;script&gt;" in overview
    detail = _section(docs, "Detailed Analysis")
    # **name** is RST strong emphasis; the bar and the Markdown link stay literal.
    assert "**name** &#124; price \\[link\\](http://example.com)" in detail


def test_detailed_analysis_has_signature_lines_and_summary(pages):
    detail = _section(pages["shop/inventory.py_docs.md"], "Detailed Analysis")
    assert '<a id="sym-Stock.add"></a>' in detail
    assert "`def add(item: Item, count: int = 1) -> None`" in detail
    add = line_of("src/shop/inventory.py", "def add(")
    assert f"method · [lines {add}–{add + 3}](#L{add})" in detail
    assert '<a id="sym-restock-2"></a>' in detail
    n = line_of("src/shop/inventory.py", "MAX_STOCK = 1000")
    assert f'- <a id="sym-MAX_STOCK"></a>`MAX_STOCK = 1000` (constant, [line {n}](#L{n}))' in detail


def test_architecture_hierarchy(pages):
    arch = _section(pages["shop/cart.py_docs.md"], "Architecture & Design")
    assert "- [`Cart`](#sym-Cart) (bases: no explicit base)" in arch
    assert "  - [`DiscountCart`](#sym-DiscountCart) (bases: [`Cart`](#sym-Cart))" in arch
    arch = _section(pages["shop/payments/gateway.py_docs.md"], "Architecture & Design")
    assert "Class hierarchy" not in arch and "Structure: 3 module-level functions." in arch


def test_dependencies_split_and_imported_by(pages):
    deps = _section(pages["shop/cart.py_docs.md"], "Dependencies")
    std = deps.split("### Third party")[0]
    assert "`json`" in std and "`pickle`" in std and "`subprocess`" in std
    assert "Third party" not in deps  # a category without imports is left out
    assert ("- `shop.inventory`: [`Item`](inventory.py_docs.md#sym-Item), "
            "[`Stock`](inventory.py_docs.md#sym-Stock) ([line 8](#L8))") in deps
    assert "- [`src/shop/payments/gateway.py`](payments/gateway.py_docs.md): imports `Cart`" in deps
    deps = _section(pages["shop/inventory.py_docs.md"], "Dependencies")
    assert "only under `TYPE_CHECKING`" in deps
    assert "- `numpy` as `np`" in deps


def test_patterns(pages):
    pat = _section(pages["shop/inventory.py_docs.md"], "Code Patterns & Idioms")
    n = line_of("src/shop/inventory.py", "class Item")
    assert f"**Dataclasses**: `Item` ([line {n}](#L{n}))" in pat
    assert "**Enumerations**: `Category`" in pat
    assert "**Context manager classes**: `Stock`" in pat
    assert "**Properties**: `Item.label`" in pat
    pat = _section(pages["shop/cart.py_docs.md"], "Code Patterns & Idioms")
    assert "**Context manager functions**: `checkout`" in pat
    assert "**Generators**: `checkout`" in pat


def test_a_yield_in_a_nested_function_makes_only_that_one_a_generator(tmp_path):
    # more-itertools' chunked returns list(ret()) of a nested generator ret: it was listed
    # among the generators, as were sliced, padded and partition
    from ig_helpers import build_files

    _root, out = build_files(tmp_path / "src", {"pkg/__init__.py": """
        def chunked(xs, n):
            def ret():
                yield xs[:n]
            class Walker:
                def __iter__(self):
                    yield 1
            return list(ret()), Walker


        def real_gen(xs):
            yield from xs
        """})
    pat = _section((out / "pkg/__init__.py_docs.md").read_text(), "Code Patterns & Idioms")
    assert "- **Generators**: `real_gen` ([line 10](#L10))\n" in pat


def test_performance_and_security_with_lines(pages):
    gw = pages["shop/payments/gateway.py_docs.md"]
    perf = _section(gw, "Performance Considerations")
    rel = "src/shop/payments/gateway.py"
    n = line_of(rel, "dist.all_reduce")
    assert f"- [line {n}](#L{n}): `dist.all_reduce` in `settle`" in perf
    n = line_of(rel, "torch.empty")
    assert f"- [line {n}](#L{n}): `torch.empty` in `settle`" in perf
    sec = _section(gw, "Security & Safety")
    n = line_of(rel, 'torch.load("ledger.pt")')
    assert f"- [line {n}](#L{n}): `torch.load` in `settle` — torch.load without weights\\_only" in sec
    n = line_of(rel, "weights_only=True")
    assert f"line {n}" not in sec  # weights_only=True is safe
    assert "Subprocesses" not in sec  # only categories that occur are summarized
    cart = pages["shop/cart.py_docs.md"]
    assert _section(cart, "Performance Considerations").strip().split("\n")[2:] == [
        "None found, directly or through the project functions it calls."]
    sec = _section(cart, "Security & Safety")
    assert "`eval` in `evaluate`" in sec and "`pickle.loads` in `Cart.load_pickled`" in sec
    assert "`subprocess.run` in `receipt_printer`" in sec and "`open` in `Cart.save`" in sec


def test_testing_section(pages):
    test = _section(pages["shop/cart.py_docs.md"], "Testing & Usage")
    assert "- `tests/test_cart.py` (import at line 1) uses `Cart`, `checkout`" in test
    assert "Import: `from shop.cart import Cart, DiscountCart, checkout, evaluate, " in test
    test = _section(pages["shop/payments/gateway.py_docs.md"], "Testing & Usage")
    assert ("No test file in `tests` imports from `shop.payments.gateway` or reaches it "
            "through calls the static call graph can follow.") in test


def test_related_and_cross_references(pages):
    docs = pages["shop/cart.py_docs.md"]
    rel = _section(docs, "Related Files")
    assert "- [`src/shop/inventory.py`](inventory.py_docs.md): Items and stock levels." in rel
    assert "ledger.py" not in rel  # in the same folder, but unrelated by imports or calls
    xref = _section(docs, "Cross-References")
    assert "- [`Cart`](#sym-Cart): [`src/shop/__init__.py`](__init__.py_docs.md)" in xref
    assert "[`doc.md`](doc.md)" in xref and "[`index.md`](index.md)" in xref


def test_bad_files_get_pages_that_say_so(pages):
    empty = pages["shop/payments/__init__.py_docs.md"]
    assert "The file is empty; there is no source to show." in empty
    assert "No keywords: empty file (0 bytes)." in pages["shop/payments/__init__.py_kw.md"]


def test_folder_pages(pages):
    index = pages["shop/index.md"]
    assert "- [`payments/`](payments/index.md): 2 Python files" not in index
    assert "[`cart.py`](cart.py_docs.md) ([keywords](cart.py_kw.md)): A shopping cart." in index
    assert "- [`payments/`](payments/index.md)" in index
    doc = pages["shop/doc.md"]
    assert "A tiny shop used to test indexgen." in doc
    assert "- [`Cart`](cart.py_docs.md" not in doc  # Cart is re-exported, not defined here
    assert "`shop` exports 3 names (`__all__`)" in doc
    assert "- [`cart.py`](cart.py_docs.md) → [`inventory.py`](inventory.py_docs.md) (line 8)" in doc


def test_no_broken_links_or_absolute_paths(pages, sample):
    assert broken_links(sample / "docs" / "reference") == []
    for text in pages.values():
        assert str(sample) not in text and "/tmp/" not in text


def test_unparsable_undecodable_and_huge_files_get_explaining_pages(tmp_path):
    from indexgen import Config

    src = tmp_path / "src" / "odd"
    src.mkdir(parents=True)
    (src / "broken.py").write_text('"""Broken."""\ndef f(:\n    <b>pass</b>\n')
    (src / "binary.py").write_bytes(b"x = '\xff'\n")
    (src / "big.py").write_text("x = 1\n" * 40)
    out = tmp_path / "out"
    build(Config(roots=[tmp_path / "src"], out=out, max_bytes=100, jobs=1))
    broken = (out / "odd/broken.py_docs.md").read_text()
    assert "does not parse: invalid syntax (line 2)" in broken
    assert '<span id="L3">3      &lt;b&gt;pass&lt;/b&gt;</span>' in broken  # still embedded
    assert "No keywords: does not parse" in (out / "odd/broken.py_kw.md").read_text()
    binary = (out / "odd/binary.py_docs.md").read_text()
    assert "Source not embedded: not decodable as source text: invalid utf-8 byte 0xff" in binary
    big = (out / "odd/big.py_docs.md").read_text()
    assert "Not analyzed: 240 bytes exceeds the 100-byte limit." in big
    assert "not analyzed: not analyzed" not in big.lower()
    # Only the sections its context or its bytes still fill, and no filler line repeated
    # in each of the others; the keyword page's section map lists those sections.
    (src / "empty.py").write_text("")
    (src / "user.py").write_text("import odd.big\n")
    build(Config(roots=[tmp_path / "src"], out=out, max_bytes=100, jobs=1))
    for name in ("broken", "binary", "big", "empty"):
        page = (out / f"odd/{name}.py_docs.md").read_text()
        assert re.findall(r"^## (.+)$", page, flags=re.M) == list(SHORT_SECTIONS), name
        assert "Not analyzed (see the overview)" not in page and "### Usage" not in page
        kw = (out / f"odd/{name}.py_kw.md").read_text()
        listed = re.findall(r"^- \*\*\[([^\]]+)\]", kw.split("## Keyword → Section Map")[1],
                            flags=re.M)
        assert [t.replace("&amp;", "&") for t in listed] == list(SHORT_SECTIONS), name
    big = (out / "odd/big.py_docs.md").read_text()
    assert "[`src/odd/user.py`](user.py_docs.md): imports the module" in big  # importers
    # ... by a name imported from it too (from odd.broken import f), whose definition the
    # page cannot claim
    (src / "user.py").write_text("import odd.big\nfrom odd.broken import f\n")
    build(Config(roots=[tmp_path / "src"], out=out, max_bytes=100, jobs=1))
    broken = (out / "odd/broken.py_docs.md").read_text()
    assert "[`src/odd/user.py`](user.py_docs.md): imports `f`" in broken
    assert "Names other files of the project import from it (not analyzed: whether it " \
           "defines them is not known):\n\n- `f`: [`src/odd/user.py`](user.py_docs.md)" in broken
    empty = (out / "odd/empty.py_docs.md").read_text()
    assert "The file is empty (0 bytes): it defines, imports and calls nothing." in empty
    assert broken_links(out) == []


def test_class_attributes_from_griffe(pages):
    detail = _section(pages["shop/inventory.py_docs.md"], "Detailed Analysis")
    n = line_of("src/shop/inventory.py", "self.levels")
    assert f"- **Assigned attributes**: `levels: dict[str, int]` ([line {n}](#L{n}))" in detail
    n = line_of("src/shop/inventory.py", "    price: float")
    assert f"`price: float` ([line {n}](#L{n}))" in detail


def test_names_for_type_checkers_only_are_marked_and_not_offered_for_import(tmp_path):
    from indexgen import Config

    pkg = tmp_path / "src" / "vis"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("import typing as t\n\nif t.TYPE_CHECKING:\n"
                                     "    class Hook(t.Protocol): ...\n\nclass Walker: ...\n")
    (pkg / "only.py").write_text("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                                 "    def a(): ...\n    def b(): ...\n")
    out = tmp_path / "out"
    build(Config(roots=[pkg], out=out, jobs=1, base=tmp_path / "src"))
    page = (out / "__init__.py_docs.md").read_text()
    overview = _section(page, "High-Level Overview")
    assert ("[`Hook`](#sym-Hook) (type checkers only: under `if TYPE_CHECKING:`), "
            "[`Walker`](#sym-Walker).") in overview
    usage = _section(page, "Testing & Usage")
    assert "Import: `from vis import Walker`\n" in usage
    assert "`Hook` is bound only under `if TYPE_CHECKING:`: type checkers see it, but " \
           "importing it fails at run time" in usage
    usage = _section((out / "only.py_docs.md").read_text(), "Testing & Usage")
    assert "Import: `import vis.only` (no public names importable at run time)." in usage
    assert "`a`, `b` are bound only under `if TYPE_CHECKING:`" in usage
    doc = (out / "doc.md").read_text()
    assert "- [`Hook`](__init__.py_docs.md#sym-Hook) (type checkers only: under " \
           "`if TYPE_CHECKING:`)\n- [`Walker`](__init__.py_docs.md#sym-Walker)\n" in doc
    (pkg / "only.py").write_text("X = 1\n")  # the next build reads __init__.py's manifest entry
    build(Config(roots=[pkg], out=out, jobs=1, base=tmp_path / "src"))
    assert (out / "doc.md").read_text() == doc


def test_names_of_all_that_nothing_binds_are_not_called_re_exported(tmp_path):
    # attrs' __author__, __url__ ... are in __all__ and answered by a module __getattr__:
    # pages called them "(re-exported)" and offered them in the import line.
    from ig_helpers import build_files

    _root, out = build_files(tmp_path / "src", {
        "pkg/__init__.py": """
            from pkg.core import f
            __all__ = ["f", "__author__", "__doc__", "core", "missing"]
            def __getattr__(name):
                raise AttributeError(name)
            """,
        "pkg/core.py": "__all__ = ['f', 'gone']\ndef f():\n    return 1\n",
        "pkg/dyn.py": "__all__ = ['made']\nglobals().update({'made': 1})\n"})
    page = (out / "pkg/__init__.py_docs.md").read_text()
    overview = _section(page, "High-Level Overview")
    assert ("Public API (`__all__`): `__author__` (not bound here), `__doc__` (set for every "
            "module), [`core`](core.py_docs.md) (submodule), `f` (re-exported), `missing` (not "
            "bound here).") in overview
    assert ("`__author__`, `missing` are listed in `__all__` but bound by no statement here: "
            "the module's `__getattr__` answers for them") in overview
    assert "Import: `from pkg import __doc__, core, f`\n" in _section(page, "Testing & Usage")
    core = (out / "pkg/core.py_docs.md").read_text()
    assert ("`gone` is listed in `__all__` but bound by no statement here: importing it fails"
            in core)
    assert "Import: `from pkg.core import f`\n" in core
    dyn = (out / "pkg/dyn.py_docs.md").read_text()
    assert "the module binds names through `globals()`, which may make it." in dyn
    doc = (out / "pkg/doc.md").read_text()
    assert "- `__author__` (not bound in `__init__.py`)\n- `__doc__`\n" in doc
    assert "- [`core`](core.py_docs.md) (submodule)\n" in doc
    assert broken_links(out) == []
