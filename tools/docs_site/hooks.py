"""MkDocs hooks of the fsdp-ref site (named under ``hooks:`` in ``mkdocs.yml``).

Event by event:

``on_config``
    Remembers the repository layout and the hand-written ``nav``; narrows the
    emoji shortcodes to the theme's icons (:mod:`docs_site.icons`).
``on_files``
    Adds the generated files: the SVG figures (:mod:`docs_site.figures`),
    the mkdocstrings API pages (:mod:`docs_site.apipages`) and the
    upstream pages (:mod:`docs_site.upstream`); points the *edit* / *view
    source* buttons of generated pages at the source file they describe;
    expands the folder placeholders of ``nav`` (:mod:`docs_site.navgen`).
``on_page_markdown``
    Adds the "Upstream counterpart" / "Re-implemented in fsdp_ref" boxes
    that link each ``fsdp_ref`` module's pages with the upstream module's
    pages and back; gives per-file pages a full title for the browser tab
    and search ("src/fsdp_ref/api.py · analysis"); fills the
    ``<!-- upstream:... -->`` and ``<!-- loc:... -->`` markers.
``on_page_content``
    Adds line-break opportunities to code in tables (:mod:`docs_site.breaks`).
``on_post_build``
    Deletes the temporary upstream folder.

A problem a reader would notice (a placeholder that expands to nothing while
its generator exists, indexgen failing on torch's sources) is logged as a
warning, which ``mkdocs build --strict`` turns into a failure.
"""

from __future__ import annotations

import logging
import posixpath
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_TOOLS = Path(__file__).resolve().parents[1]
if str(_TOOLS) not in sys.path:
    sys.path.insert(0, str(_TOOLS))

from docs_site import apipages, breaks, figures, icons, navgen, upstream  # noqa: E402

log = logging.getLogger("mkdocs.hooks.docs_site")

#: Packages whose API reference is rendered by mkdocstrings.
PACKAGES = [
    apipages.Package("fsdp_ref", "src/fsdp_ref",
                     "A readable reference implementation of `torch.distributed.fsdp.fully_shard` (FSDP2)."),
    apipages.Package("indexgen", "tools/indexgen",
                     "The static keyword-index and analysis-page generator that writes the Reference section."),
]

#: Where indexgen's committed pages for ``src/fsdp_ref`` live, relative to ``docs/``.
REFERENCE_FSDP_REF = "reference/src/fsdp_ref"


@dataclass
class BuildState:
    """What one build of the site computed, shared between the events.

    Attributes:
        root: Repository root.
        docs_rel: ``docs_dir`` relative to the root (``"docs"``).
        nav: The hand-written ``nav`` of ``mkdocs.yml``, before expansion.
        upstream_dir: Temporary folder with the upstream pages, if generated.
        upstream_note: Why the upstream pages are missing, if they are.
        torch_version: Version of the installed torch.
        pairs: fsdp_ref file -> upstream files (see :func:`upstream.pair_modules`).
        src_uris: Every file of the site, relative to ``docs/``.
    """

    root: Path
    docs_rel: str = "docs"
    nav: list[Any] = field(default_factory=list)
    upstream_dir: Path | None = None
    upstream_note: str = ""
    torch_version: str = "unknown"
    pairs: dict[str, list[str]] = field(default_factory=dict)
    src_uris: set[str] = field(default_factory=set)


_state: BuildState | None = None


def on_config(config: Any) -> Any:
    """Record the repository layout and the unexpanded ``nav``; icons, no emoji.

    Args:
        config: The MkDocs config.

    Returns:
        The config, with the emoji index narrowed to icons.
    """
    global _state
    root = Path(config.config_file_path).resolve().parent
    docs_rel = Path(config.docs_dir).resolve().relative_to(root).as_posix()
    _state = BuildState(root=root, docs_rel=docs_rel, nav=list(config.nav or []))
    emoji = config.mdx_configs.get("pymdownx.emoji")
    if emoji and emoji.get("emoji_index"):
        emoji["emoji_index"] = icons.icons_only(emoji["emoji_index"])
    return config


def _add_upstream(files: Any, config: Any, state: BuildState) -> None:
    from mkdocs.structure.files import File

    try:
        fsdp_dir = upstream.torch_fsdp_dir()
    except FileNotFoundError as exc:
        log.warning("Upstream section: %s", exc)
        state.upstream_note = str(exc)
        return
    state.torch_version = upstream.torch_version(fsdp_dir)
    ref_dir = state.root / "src" / "fsdp_ref"
    ref_files = sorted(p.relative_to(ref_dir).as_posix() for p in ref_dir.rglob("*.py")
                       if "__pycache__" not in p.parts)
    up_files = sorted(p.relative_to(fsdp_dir).as_posix() for p in fsdp_dir.rglob("*.py")
                      if "__pycache__" not in p.parts)
    state.pairs = upstream.pair_modules(ref_files, up_files)
    try:
        state.upstream_dir = upstream.generate(fsdp_dir=fsdp_dir)
    except upstream.IndexgenUnavailable as exc:
        state.upstream_note = f"indexgen is not available yet ({exc})"
        log.info("Upstream section skipped: %s", state.upstream_note)
        return
    except Exception as exc:  # a bug in indexgen on torch's sources must fail --strict
        state.upstream_note = f"indexgen failed on {fsdp_dir}: {exc!r}"
        log.warning("Upstream section: %s", state.upstream_note)
        return
    for path in sorted(state.upstream_dir.rglob("*")):
        rel_parts = path.relative_to(state.upstream_dir).parts
        if path.is_file() and not any(part.startswith(".") for part in rel_parts):
            uri = f"{upstream.UPSTREAM_PREFIX}/{path.relative_to(state.upstream_dir).as_posix()}"
            files.append(File.generated(config, uri, abs_src_path=str(path)))


def _set_edit_uris(files: Any, state: BuildState) -> None:
    """Point generated per-file pages' edit buttons at the source file they describe."""
    for file in files:
        uri = file.src_uri
        if uri.startswith("reference/"):
            split = navgen.source_of(uri)
            # reference/<root>/<path>.py_docs.md documents <root>/<path>.py of the repo.
            file.edit_uri = (posixpath.relpath(split[0][len("reference/"):], state.docs_rel)
                             if split else None)


def on_files(files: Any, config: Any) -> Any:
    """Add generated files, fix edit links and expand the nav placeholders.

    Args:
        files: The site's files.
        config: The MkDocs config.

    Returns:
        The files, with the generated ones added.
    """
    from mkdocs.structure.files import File

    state = _state
    assert state is not None, "on_config did not run"
    for uri, svg in figures.all_figures().items():
        files.append(File.generated(config, uri, content=svg))
    for uri, api_page in apipages.api_pages(state.root, PACKAGES).items():
        file = File.generated(config, uri, content=api_page.markdown)
        if api_page.source:
            file.edit_uri = posixpath.relpath(api_page.source, state.docs_rel)
        files.append(file)
    _add_upstream(files, config, state)
    _set_edit_uris(files, state)

    state.src_uris = {f.src_uri for f in files}
    have_indexgen = upstream.indexgen_available()
    for folder in navgen.placeholders(state.nav):
        if not navgen.folder_nav(state.src_uris, folder):
            if have_indexgen:
                log.warning("nav placeholder %r matches no page", folder)
            else:
                log.info("nav placeholder %r is empty (indexgen not written yet)", folder)
    config.nav = navgen.expand_nav(state.nav, state.src_uris)
    return files


def _counterpart_box(page_uri: str, state: BuildState) -> str:
    """The cross-link box for one page, or ``""`` if the page has no counterpart."""
    uris = state.src_uris
    if page_uri.startswith(upstream.UPSTREAM_PREFIX + "/"):
        split = navgen.source_of(page_uri)
        if not split:
            return ""
        up_file = split[0][len(upstream.UPSTREAM_PREFIX) + 1:]
        lines = []
        for ref, ups in sorted(state.pairs.items()):
            if up_file not in ups:
                continue
            links = _ref_links(page_uri, ref, uris)
            if links:
                lines.append(f"    - `src/fsdp_ref/{ref}`: " + " · ".join(links))
        if not lines:
            return ""
        return '!!! abstract "Re-implemented in fsdp_ref"\n' + "\n".join(lines) + "\n\n"

    ref = None
    split = navgen.source_of(page_uri)
    if split and split[0].startswith(REFERENCE_FSDP_REF + "/"):
        ref = split[0][len(REFERENCE_FSDP_REF) + 1:]
    elif page_uri.startswith("api/fsdp_ref/"):
        module = page_uri[len("api/fsdp_ref/"):-len(".md")]
        ref = "__init__.py" if module == "index" else module + ".py"
        if ref not in state.pairs and module + "/__init__.py" in state.pairs:
            ref = module + "/__init__.py"
    if not ref or ref not in state.pairs:
        return ""
    lines = []
    for up in state.pairs[ref]:
        base = f"{upstream.UPSTREAM_PREFIX}/{up}"
        links = [f"[{kind}]({navgen.page_link(page_uri, base + suffix)})"
                 for kind, suffix in (("analysis", navgen.ANALYSIS_SUFFIX),
                                      ("keywords", navgen.KEYWORD_SUFFIX))
                 if base + suffix in uris]
        text = f"`torch/distributed/fsdp/{up}`"
        lines.append(f"    - {text}: " + (" · ".join(links) if links else
                                           "(upstream pages are generated at build time "
                                           "once indexgen is available)"))
    own = [link for link in _ref_links(page_uri, ref, uris) if not link.endswith(f"({posixpath.basename(page_uri)})")]
    box = (f'!!! abstract "Upstream counterpart (torch {state.torch_version})"\n'
           + "\n".join(lines) + "\n")
    if own:
        box += "\n    This module elsewhere on this site: " + " · ".join(own) + "\n"
    return box + "\n"


def _ref_links(page_uri: str, ref: str, uris: set[str]) -> list[str]:
    """Links from ``page_uri`` to the pages of fsdp_ref file ``ref`` that exist."""
    base = f"{REFERENCE_FSDP_REF}/{ref}"
    module = ref[:-len(".py")].removesuffix("/__init__").removesuffix("__init__").strip("/")
    api = "api/fsdp_ref/" + (module + ".md" if module else "index.md")
    links = []
    for label, uri in (("analysis", base + navgen.ANALYSIS_SUFFIX),
                       ("keywords", base + navgen.KEYWORD_SUFFIX), ("API", api)):
        if uri in uris:
            links.append(f"[{label}]({navgen.page_link(page_uri, uri)})")
    return links


def _insert_after_title(markdown: str, box: str) -> str:
    lines = markdown.splitlines(keepends=True)
    for i, line in enumerate(lines[:15]):
        if line.startswith("# "):
            return "".join(lines[: i + 1]) + "\n" + box + "".join(lines[i + 1:])
    return box + markdown


def _pairs_table(page_uri: str, state: BuildState) -> str:
    if not state.pairs:
        return "_No fsdp_ref module is paired with an upstream module yet._\n"
    rows = ["| fsdp_ref | pages | upstream (torch/distributed/fsdp/…) |", "|---|---|---|"]
    for ref, ups in sorted(state.pairs.items()):
        links = " · ".join(_ref_links(page_uri, ref, state.src_uris)) or "—"
        up_links = []
        for up in ups:
            target = f"{upstream.UPSTREAM_PREFIX}/{up}{navgen.ANALYSIS_SUFFIX}"
            up_links.append(f"[`{up}`]({navgen.page_link(page_uri, target)})" if target in state.src_uris
                            else f"`{up}`")
        rows.append(f"| `{ref}` | {links} | {'<br>'.join(up_links)} |")
    return "\n".join(rows) + "\n"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Add counterpart links and upstream edit links; fill upstream markers.

    Args:
        markdown: The page's Markdown.
        page: The page.
        config: The MkDocs config.
        files: The site's files.

    Returns:
        The Markdown to render.
    """
    state = _state
    if state is None:
        return markdown
    uri = page.file.src_uri
    split = navgen.source_of(uri)
    if split and uri.startswith(("reference/", "upstream/")):
        # The nav says just "Analysis" / "Keywords" under the file's entry; the browser
        # title and the search results need the file: "src/fsdp_ref/api.py · analysis".
        page.meta.setdefault("title", f"{split[0].split('/', 1)[1]} · {split[1]}")
    if uri.startswith(upstream.UPSTREAM_PREFIX + "/"):
        rel = uri[len(upstream.UPSTREAM_PREFIX) + 1:]
        split = navgen.source_of(uri)
        tag = "v" + state.torch_version.split("+")[0]
        page.edit_url = ("https://github.com/pytorch/pytorch/blob/"
                         f"{tag}/torch/distributed/fsdp/{split[0][len(upstream.UPSTREAM_PREFIX) + 1:] if split else rel}")
        if not split:
            page.edit_url = None
    markdown = markdown.replace("<!-- upstream:version -->", state.torch_version)
    markdown = _LOC.sub(lambda m: _count_lines(m.group(1), state), markdown)
    markdown = markdown.replace("<!-- upstream:note -->",
                                f"!!! warning \"Upstream pages missing\"\n    {state.upstream_note}\n"
                                if state.upstream_note else "")
    if "<!-- upstream:pairs -->" in markdown:
        markdown = markdown.replace("<!-- upstream:pairs -->", _pairs_table(uri, state))
    box = _counterpart_box(uri, state)
    return _insert_after_title(markdown, box) if box else markdown


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    """Let code in tables wrap at its separators (see :mod:`docs_site.breaks`).

    Args:
        html: The page's rendered HTML.
        page: The page.
        config: The MkDocs config.
        files: The site's files.

    Returns:
        The HTML to show.
    """
    return breaks.add_code_breaks(html)


_LOC = re.compile(r"<!-- loc:([^ ]+) -->")


def _count_lines(spec: str, state: BuildState) -> str:
    """Expand a ``<!-- loc:SPEC -->`` marker: lines of Python under a folder.

    ``SPEC`` is a folder relative to the repository (``src/fsdp_ref``), or
    ``torch:<folder>`` relative to the installed ``torch/distributed/fsdp``
    (``torch:_fully_shard``); ``torch:fsdp1`` counts the files directly in
    ``torch/distributed/fsdp`` (FSDP1 and shared utilities).
    """
    if spec.startswith("torch:"):
        try:
            base = upstream.torch_fsdp_dir()
        except FileNotFoundError:
            return "?"
        sub = spec[len("torch:"):]
        paths = list(base.glob("*.py")) if sub == "fsdp1" else list((base / sub).rglob("*.py"))
    else:
        paths = list((state.root / spec).rglob("*.py"))
    total = sum(len(p.read_text(encoding="utf-8", errors="replace").splitlines())
                for p in paths if "__pycache__" not in p.parts)
    return f"{total:,}"


def on_post_build(config: Any) -> None:
    """Remove the temporary upstream folder.

    Args:
        config: The MkDocs config.
    """
    if _state and _state.upstream_dir and _state.upstream_dir.exists():
        shutil.rmtree(_state.upstream_dir, ignore_errors=True)
