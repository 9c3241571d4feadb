"""Unit tests of ``tools/docs_site``: navigation, upstream pairing, roles, API pages, table
code breaks, icon shortcodes.

The figures are tested in ``test_figures.py``."""

from __future__ import annotations

import re
from pathlib import Path

from docs_site import apipages, breaks, griffe_roles, icons, navgen, upstream

REPO = Path(__file__).resolve().parents[2]

# ---------------------------------------------------------------- navgen

TREE = [
    "reference/src/fsdp_ref/index.md",
    "reference/src/fsdp_ref/doc.md",
    "reference/src/fsdp_ref/api.py_docs.md",
    "reference/src/fsdp_ref/api.py_kw.md",
    "reference/src/fsdp_ref/__init__.py_docs.md",
    "reference/src/fsdp_ref/__init__.py_kw.md",
    "reference/src/fsdp_ref/_private.py_docs.md",
    "reference/src/fsdp_ref/sub/index.md",
    "reference/src/fsdp_ref/sub/x.py_docs.md",
    "reference/src/index.md",
    "figures/timeline.svg",
    "index.md",
]


def test_folder_nav_orders_index_doc_subfolders_then_files():
    nav = navgen.folder_nav(TREE, "reference/src/fsdp_ref/")
    assert nav[0] == "reference/src/fsdp_ref/index.md"
    assert nav[1] == {"About this folder": "reference/src/fsdp_ref/doc.md"}
    assert nav[2] == {"sub/": ["reference/src/fsdp_ref/sub/index.md",
                               {"x.py": [{"Analysis": "reference/src/fsdp_ref/sub/x.py_docs.md"}]}]}
    assert [next(iter(item)) for item in nav[3:]] == ["__init__.py", "api.py", "_private.py"]
    assert nav[4] == {"api.py": [{"Analysis": "reference/src/fsdp_ref/api.py_docs.md"},
                                 {"Keywords": "reference/src/fsdp_ref/api.py_kw.md"}]}


def test_expand_nav_replaces_placeholders_and_keeps_the_rest():
    nav = [{"Home": "index.md"}, {"Reference": ["index.md", {"src": "reference/src/"}]},
           "reference/src/fsdp_ref/sub/", {"Empty": "nothing/"}]
    out = navgen.expand_nav(nav, TREE)
    assert out[0] == {"Home": "index.md"}
    src = out[1]["Reference"][1]["src"]
    assert src[0] == "reference/src/index.md"
    assert {"fsdp_ref/": navgen.folder_nav(TREE, "reference/src/fsdp_ref")} in src
    # a bare placeholder is spliced into the enclosing list
    assert out[2:] == navgen.folder_nav(TREE, "reference/src/fsdp_ref/sub/")
    assert len(out) == 2 + 2  # sub/index.md and x.py; the empty placeholder is dropped
    assert navgen.placeholders(nav) == ["reference/src/", "reference/src/fsdp_ref/sub/", "nothing/"]


def test_source_of_recognises_only_per_file_pages():
    assert navgen.source_of("reference/src/a.py_docs.md") == ("reference/src/a.py", "analysis")
    assert navgen.source_of("reference/src/a.py_kw.md") == ("reference/src/a.py", "keywords")
    assert navgen.source_of("reference/src/doc.md") is None
    assert navgen.source_of("guides/my_docs.md") is None


def test_every_mkdocs_nav_page_exists_or_is_generated():
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)
    config = yaml.load((REPO / "mkdocs.yml").read_text(), Loader=Loader)

    def pages(items):
        for item in items:
            value = next(iter(item.values())) if isinstance(item, dict) else item
            if isinstance(value, list):
                yield from pages(value)
            elif not navgen.is_placeholder(value):
                yield value

    missing = [p for p in pages(config["nav"]) if not (REPO / "docs" / p).is_file()]
    assert not missing


# ---------------------------------------------------------------- upstream pairing

def test_normalized_stem():
    assert upstream.normalized_stem("_fsdp_param_group.py") == "param_group"
    assert upstream.normalized_stem("_fully_shard.py") == "fully_shard"
    assert upstream.normalized_stem("param.py") == "param"


def test_pair_modules_uses_table_then_names():
    up = ["__init__.py", "_fully_shard/__init__.py", "_fully_shard/_fsdp_param_group.py",
          "_fully_shard/_fsdp_common.py", "_fully_shard/_fsdp_init.py", "_fully_shard/_fsdp_new.py",
          "fully_sharded_data_parallel.py"]
    pairs = upstream.pair_modules(["mesh.py", "param_group.py", "new.py", "demo.py"], up)
    assert pairs == {"mesh.py": ["_fully_shard/_fsdp_common.py", "_fully_shard/_fsdp_init.py"],
                     "param_group.py": ["_fully_shard/_fsdp_param_group.py"],
                     "new.py": ["_fully_shard/_fsdp_new.py"]}


def test_counterpart_table_points_at_files_the_installed_torch_has():
    fsdp = upstream.torch_fsdp_dir()
    missing = sorted({u for ups in upstream.COUNTERPARTS.values() for u in ups
                      if not (fsdp / u).is_file()})
    assert not missing
    assert upstream.torch_version(fsdp)[0].isdigit()


def test_every_fsdp_ref_module_with_an_upstream_twin_is_paired():
    ref_dir = REPO / "src/fsdp_ref"
    refs = sorted(p.name for p in ref_dir.glob("*.py"))
    fsdp = upstream.torch_fsdp_dir()
    ups = sorted(p.relative_to(fsdp).as_posix() for p in fsdp.rglob("*.py"))
    pairs = upstream.pair_modules(refs, ups)
    for core in ("api.py", "collectives.py", "param.py", "param_group.py", "state.py",
                 "fully_shard.py"):
        if core in refs:
            assert core in pairs, core


# ---------------------------------------------------------------- roles and API pages

def test_convert_roles():
    out = griffe_roles.convert_roles(
        "See :class:`~fsdp_ref.param.FSDPParam`, :func:`fully_shard`, "
        ":meth:`Mod.run <fsdp_ref.Mod.run>` and ``code``.",
        resolve=lambda name: {"fully_shard": "fsdp_ref.fully_shard.fully_shard"}.get(name),
    )
    assert '<autoref identifier="fsdp_ref.param.FSDPParam" optional><code>FSDPParam</code>' in out
    assert ('<autoref identifier="fsdp_ref.fully_shard.fully_shard" optional>'
            "<code>fully_shard()</code>") in out
    assert '<autoref identifier="fsdp_ref.Mod.run" optional><code>Mod.run</code>' in out
    assert "``code``" in out


def test_api_pages_cover_every_module(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    for rel in ("__init__.py", "a.py", "_b.py", "sub/__init__.py", "sub/c.py"):
        (pkg / rel).write_text('"""Doc."""\n')
    (tmp_path / "pkg" / "notpkg").mkdir()
    (tmp_path / "pkg" / "notpkg" / "d.py").write_text("")
    package = apipages.Package("pkg", "pkg", "Blurb.")
    assert apipages.discover_modules(tmp_path, package) == [
        "pkg", "pkg._b", "pkg.a", "pkg.sub", "pkg.sub.c"]
    pages = apipages.api_pages(tmp_path, [package])
    assert set(pages) == {"api/pkg/index.md", "api/pkg/_b.md", "api/pkg/a.md", "api/pkg/sub.md",
                          "api/pkg/sub/c.md"}
    assert "::: pkg.sub.c" in pages["api/pkg/sub/c.md"].markdown
    assert pages["api/pkg/sub.md"].source == "pkg/sub/__init__.py"
    missing = apipages.api_pages(tmp_path, [apipages.Package("nope", "nope", "x")])
    assert missing["api/nope/index.md"].source is None


# ---------------------------------------------------------------- table code breaks

def test_code_in_tables_gets_break_opportunities_after_separators():
    html = ('<p><code>a_b.c</code></p><table><tr><td><code>stage3_max_live</code> and '
            '<code class="x"><a href="u_v.html">torch.distributed</a>/x</code> a_b '
            '<code>_private(x=1)</code></td></tr></table>')
    out = breaks.add_code_breaks(html)
    assert out.startswith("<p><code>a_b.c</code></p>")  # outside tables: untouched
    assert "<code>stage3_<wbr>max_<wbr>live</code>" in out
    assert '<a href="u_v.html">torch.<wbr>distributed</a>/x</code>' in out  # not in tags
    assert "</code> a_b <code>" in out  # prose: untouched
    assert "<code>_private(<wbr>x=1)</code>" in out  # not after a leading separator
    assert re.sub(r"<[^>]+>", "", out) == re.sub(r"<[^>]+>", "", html)  # same text


# ---------------------------------------------------------------- icons, no emoji

def test_icons_only_keeps_local_icons_and_drops_emoji():
    from material.extensions import emoji

    index = icons.icons_only(emoji.twemoji)({}, None)
    assert ":material-api:" in index["emoji"]
    assert ":flag_py:" not in index["emoji"] and not index["aliases"]  # `:py:` stays text
    assert all("path" in entry for entry in index["emoji"].values())
