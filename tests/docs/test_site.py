"""The documentation site builds strictly and holds what the issue asks for."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from docs_site import navgen, upstream

REPO = Path(__file__).resolve().parents[2]


def test_strict_build_passes(built_site):
    assert built_site.returncode == 0, built_site.log[-6000:]
    assert "WARNING" not in built_site.log, built_site.log[-6000:]


def test_home_and_hand_written_pages(site):
    for rel in ["index.html", "getting-started/index.html", "comparison/index.html",
                "design/index.html", "design/lifecycle/index.html", "design/streams/index.html",
                "design/memory/index.html", "design/mixed-precision/index.html",
                "design/offload/index.html", "design/hsdp/index.html",
                "design/checkpointing/index.html", "guides/indexgen/index.html",
                "upstream/index.html"]:
        assert (site.path / rel).is_file(), rel
    home = site.page("index.html")
    assert "fully_shard" in home and "figures/timeline.svg" in home


def test_quickstart_snippet_is_inlined(site):
    example = (REPO / "docs/examples/quickstart.py").read_text()
    assert "init_device_mesh" in example
    assert "init_device_mesh" in site.page("index.html")


@pytest.mark.parametrize("name", ["timeline", "streams"])
def test_figures_are_generated_svg(site, name):
    root = ET.fromstring(site.page(f"figures/{name}.svg"))
    assert root.tag.endswith("svg")
    # drawn: matplotlib's bars are paths, its labels text
    assert len(root.findall(".//{http://www.w3.org/2000/svg}path")) > 10
    assert len(root.findall(".//{http://www.w3.org/2000/svg}text")) > 10


def test_api_pages_render_docstrings(site):
    page = site.page("api/fsdp_ref/index.html")
    assert "fully_shard" in page
    assert (site.path / "api/indexgen/index.html").is_file()
    for html in sorted((site.path / "api").rglob("index.html")):
        # Rendered docstrings, not the embedded source listings.
        text = re.sub(r"<pre.*?</pre>", "", html.read_text(encoding="utf-8"), flags=re.S)
        assert not re.search(r":(class|func|meth|mod|attr):`", text), f"Sphinx role left in {html}"


def test_search_index_knows_fully_shard(site):
    index = json.loads(site.page("search/search_index.json"))
    assert any("fully_shard" in doc["text"] or "fully_shard" in doc["title"]
               for doc in index["docs"])


def test_reference_pages_are_in_the_site(site):
    pages = sorted((REPO / "docs/reference/src/fsdp_ref").glob(f"*{navgen.ANALYSIS_SUFFIX}"))
    if not pages:
        pytest.fail("docs/reference/src/fsdp_ref has no analysis pages: run `indexgen build`")
    for md in pages:
        html = site.path / "reference/src/fsdp_ref" / md.name[:-3] / "index.html"
        assert html.is_file(), html


def test_upstream_section_and_cross_links(site):
    if not upstream.indexgen_available():
        pytest.fail("indexgen has no library build entry point yet (tools/indexgen/__init__.py)")
    base = site.path / "upstream/torch/distributed/fsdp/_fully_shard"
    analysis = base / f"_fsdp_param_group.py{navgen.ANALYSIS_SUFFIX[:-3]}" / "index.html"
    assert analysis.is_file()
    # upstream -> fsdp_ref
    assert "Re-implemented in fsdp_ref" in analysis.read_text(encoding="utf-8")
    # fsdp_ref -> upstream, on the reference page and on the API page
    ref = site.path / f"reference/src/fsdp_ref/param_group.py{navgen.ANALYSIS_SUFFIX[:-3]}/index.html"
    assert "_fsdp_param_group.py" in ref.read_text(encoding="utf-8")
    api = site.page("api/fsdp_ref/param_group/index.html")
    assert "Upstream counterpart" in api and "_fsdp_param_group.py_docs" in api


def test_api_page_shows_the_real_signature_before_the_overloads(site):
    import inspect
    import typing

    from fsdp_ref.fully_shard import fully_shard

    assert typing.get_overloads(fully_shard), "fully_shard no longer has @overload stubs"
    html = site.page("api/fsdp_ref/fully_shard/index.html")
    entry = html[html.index('id="fsdp_ref.fully_shard.fully_shard"'):]
    first, second = re.findall(r'doc-signature.*?</pre>', entry, re.S)[:2]
    first_text = re.sub(r"<[^>]+>", "", first)
    for name in inspect.signature(fully_shard).parameters:
        assert re.search(rf"\b{name}\b", first_text), (name, first_text)
    assert "kwargs" not in first_text and "kwargs" in re.sub(r"<[^>]+>", "", second)


# ---- issue 32 item 5: task pages two clicks from home, found by search -------------------

def _task_pages() -> list[str]:
    """Every task page as a site path: the Using FSDP2 pages, troubleshooting, migration."""
    docs = REPO / "docs"
    pages = [p.relative_to(docs).with_suffix("").as_posix() for p in (docs / "using").glob("*.md")]
    pages = [p[: -len("index")] if p.endswith("index") else p + "/" for p in pages]
    return sorted(pages + ["troubleshooting/", "migration/"])


def _article_links(site, page: str) -> set[str]:
    """The pages linked from ``page``'s article (not its navigation), as site paths."""
    import posixpath
    import urllib.parse

    html = site.page(page + "index.html")
    article = re.search(r"<article[^>]*>(.*?)</article>", html, re.S)
    assert article, f"{page}: no article"
    out = set()
    for href in re.findall(r'href="([^"#?]*)[^"]*"', article.group(1)):
        if not href or "://" in href or href.startswith("mailto:"):
            continue
        target = posixpath.normpath(posixpath.join(page, urllib.parse.unquote(href)))
        target = "" if target == "." else target.rstrip("/") + "/"
        if (site.path / target / "index.html").is_file():
            out.add(target)
    return out


def test_every_task_page_is_two_clicks_from_home(site):
    one = _article_links(site, "")
    two = set(one)
    for page in one:
        two |= _article_links(site, page)
    missing = [p for p in _task_pages() if p not in two]
    assert not missing, f"not reachable from the home page's text in two clicks: {missing}"
    assert "using/" in one and "troubleshooting/" in one


#: What a reader types, and the page the answer is on: error texts as printed, and
#: method names (material's search splits on white space and hyphens only, so a
#: ``snake_case`` name is one term).
SEARCHES = [
    ("Parameter is shared with a parameter already managed by another FSDP group",
     "troubleshooting/"),
    ("stream cannot be set when using native HSDP", "troubleshooting/"),
    ("got mixed torch.Tensor and DTensor", "troubleshooting/"),
    ("Cannot use ReduceOp.PREMUL_SUM with Gloo", "troubleshooting/"),
    ("FSDP does not support deepcopy", "troubleshooting/"),
    ("set_reduce_scatter_unused_params", "using/control-flow/"),
    ("register_fsdp_forward_method", "using/train/"),
    ("set_requires_gradient_sync", "using/accumulate/"),
    ("summon_full_params", "migration/"),
    ("clip_grad_norm_ full_tensor", "using/gradients/"),
]


@pytest.mark.parametrize(("query", "page"), SEARCHES, ids=[q[:30] for q, _ in SEARCHES])
def test_search_index_finds_the_page(site, query, page):
    """Every term of the query (lower case, the index's separator) in one indexed section
    of the expected page: lunr's match for a query whose terms must all appear."""
    index = json.loads(site.page("search/search_index.json"))
    separator = re.compile(index["config"]["separator"])
    terms = [t for t in separator.split(query.lower()) if t]
    hits = [doc["location"] for doc in index["docs"]
            if all(t in (doc["title"] + " " + doc["text"]).lower() for t in terms)]
    assert any(h.startswith(page) for h in hits), (query, hits[:10])
