"""Stage 3b: render the per-folder pages ``index.md`` and ``doc.md``, and the top index.

``index.md`` lists the folder's files and subfolders with one-line summaries; ``doc.md`` states
the folder's role from its ``__init__`` docstring, the names the package exports and the import
graph among its files.
"""

from __future__ import annotations

import posixpath

from indexgen.analyze.context import FolderInfo
from indexgen.analyze.exports import public_names, served_only, star_names, unbound_exports
from indexgen.extract.model import FileSummary, definition_anchors
from indexgen.layout import Layout
from indexgen.paths import relpath
from indexgen.render.docrender import summary_markdown
from indexgen.render.markdown import MARKER, code, escape_text, link
from indexgen.render.page import CHECKING_NOTE, count
from indexgen.render.rst import Linker, to_markdown


def _title(info: FolderInfo, layout: Layout) -> str:
    return layout.display_folder(info.root, info.relpath)


def render_folder_index(
    info: FolderInfo, files: dict[str, FileSummary], folders: dict[tuple[str, str], FolderInfo],
    layout: Layout,
) -> str:
    """Render ``index.md`` of one folder.

    Args:
        info: The folder.
        files: Compact summaries by key (for one-line summaries).
        folders: All folders by (root, relpath) (for subfolder summaries).
        layout: Page paths of this build.
    """
    here = layout.folder_dir(info.root, info.relpath)
    out = [MARKER, f"# Folder Index: {code(_title(info, layout))}", ""]
    out.append(f"Folder documentation: {link(code('doc.md'), 'doc.md')}.")
    if info.relpath:
        target = layout.folder_index(info.root, posixpath.dirname(info.relpath))
        out.append(f"Parent folder: {link(code('index.md'), relpath(target, here))}.")
    out += ["", "## Subfolders", ""]
    if not info.subfolders:
        out.append("No subfolders with Python files.")
    for sub in info.subfolders:
        sub_info = folders[(info.root, sub)]
        target = relpath(layout.folder_index(info.root, sub), here)
        line = files[sub_info.package].summary_line if sub_info.package else ""
        out.append(f"- {link(code(posixpath.basename(sub) + '/'), target)}"
                   + (f": {summary_markdown(line)}" if line else f": {_count_files(sub_info)}"))
    out += ["", "## Files", ""]
    if not info.files:
        out.append("No Python files directly in this folder.")
    for key in info.files:
        s = files[key]
        name = posixpath.basename(s.relpath)
        docs = relpath(layout.docs_page(key), here)
        kw = relpath(layout.kw_page(key), here)
        line = summary_markdown(s.summary_line) if s.summary_line else "no module docstring"
        out.append(f"- {link(code(name), docs)} ({link('keywords', kw)}): {line}")
    return "\n".join(out) + "\n"


def _linker(files: dict[str, FileSummary], by_module: dict[str, str], layout: Layout,
            here: str) -> Linker:
    """Links for the cross-references of a package docstring: a module of the build, or a
    top-level definition of one (``:class:`pkg.mod.Name```); ``by_module``: file key by
    module name."""

    def resolve(role: str, target: str) -> str | None:
        parts = target.lstrip("~.").split(".")
        for i in range(len(parts), 0, -1):
            key = by_module.get(".".join(parts[:i]))
            if key is None:
                continue
            page = relpath(layout.docs_page(key), here)
            rest = ".".join(parts[i:])
            if not rest:
                return page
            anchor = definition_anchors(files[key].definitions).get(rest)
            return f"{page}#{anchor}" if anchor else None
        return None

    return resolve


def _count_files(info: FolderInfo) -> str:
    n = len(info.files)
    return f"{n} Python file{'s' if n != 1 else ''}" + (
        f", {len(info.subfolders)} subfolder{'s' if len(info.subfolders) != 1 else ''}"
        if info.subfolders else "")


def render_folder_doc(info: FolderInfo, files: dict[str, FileSummary], layout: Layout,
                      by_module: dict[str, str] | None = None) -> str:
    """Render ``doc.md`` of one folder: role, exported names and the internal import graph.
    ``by_module``: file key by module name, made from ``files`` when not given (a build
    makes it once for all its folders)."""
    here = layout.folder_dir(info.root, info.relpath)
    out = [MARKER, f"# Folder Documentation: {code(_title(info, layout))}", ""]
    out.append(f"Folder index: {link(code('index.md'), 'index.md')}.")
    out += ["", "## Role", ""]
    pkg = files.get(info.package) if info.package else None
    if pkg is None:
        out.append(f"{code(_title(info, layout))} has no `__init__.py`; it is not a regular package.")
    elif pkg.status != "ok":
        out.append(f"The `__init__.py` was not analyzed: {escape_text(pkg.error, line_start=False)}.")
    elif pkg.docstring.strip():
        if by_module is None:
            by_module = {s.module: key for key, s in files.items()}
        for block in to_markdown(pkg.docstring, _linker(files, by_module, layout, here)):
            out += [block, ""]
        out.pop()
    else:
        out.append(f"The package {code(pkg.module)} has no docstring in its `__init__.py`.")
    out += ["", "## Exported names", ""]
    if pkg is None or pkg.status != "ok":
        out.append("No package `__init__.py` to export names.")
    else:
        docs = relpath(layout.docs_page(pkg.key), here)
        anchors = {d.qualname: d.anchor for d in pkg.definitions if not d.parent}
        anchors.update({a.name: a.anchor for a in pkg.attributes})
        by_module = by_module or {s.module: key for key, s in files.items()}
        star = star_names(pkg, lambda m: files.get(by_module.get(m, "")))
        names = public_names(pkg, star)
        subs = {n for n in (*pkg.served, *names) if f"{pkg.module}.{n}" in by_module}
        served = served_only(pkg, subs)
        origin = "`__all__`" if pkg.exports is not None else \
            "public names defined in `__init__.py` or imported from the package's modules " + (
                "(its `__all__` is computed, not read)" if pkg.all_computed else "(no `__all__`)")
        if not names:
            out.append(f"{code(pkg.module)} exports no names.")
        else:
            out.append(f"{code(pkg.module)} exports {count(len(names), 'name')} ({origin}):")
            out.append("")
            sources = {i.bound_name: i for i in pkg.imports if i.scope == "module"}
            unbound = unbound_exports(pkg, subs)
            for name in names:
                item, sub = code(name), by_module.get(f"{pkg.module}.{name}")
                if name in anchors:
                    item = link(item, f"{docs}#{anchors[name]}")
                elif name in sources:
                    imp = sources[name]
                    item += f" (from {code(imp.written if imp.name else imp.module)})"
                elif name in star:
                    item += f" (from {code(star[name])}, by its `*` import)"
                elif sub:
                    item = link(item, relpath(layout.docs_page(sub), here)) + " (submodule)"
                elif name in unbound:
                    item += " (served by its `__getattr__`)" if name in served else \
                        " (not bound in `__init__.py`)"
                out.append(f"- {item}" + (CHECKING_NOTE if name in pkg.type_checking else ""))
        more = [n for n in served if n not in names]
        if more:
            out += ["", "Served by the `__getattr__` of `__init__.py` alone (PEP 562): "
                        + ", ".join(code(n) for n in more) + "."]
    out += ["", "## Import graph", ""]
    if len(info.files) < 2:
        out.append("Fewer than two files in this folder, so no imports among them.")
    elif not info.edges:
        out.append("The files of this folder do not import each other.")
    else:
        out.append("Imports among the files of this folder (importer → imported, first line):")
        out.append("")
        for src, dst, line in info.edges:
            a = relpath(layout.docs_page(src), here)
            b = relpath(layout.docs_page(dst), here)
            out.append(f"- {link(code(posixpath.basename(src)), a)} → "
                       f"{link(code(posixpath.basename(dst)), b)} (line {line})")
    return "\n".join(out) + "\n"


def folder_pages(folders: list[FolderInfo], files: dict[str, FileSummary], layout: Layout
                 ) -> dict[str, str]:
    """Both pages of every folder (``index.md`` and ``doc.md``), by page path.

    Args:
        folders: The folders of the build (:meth:`indexgen.analyze.project.Project.folders`).
        files: Compact summaries by file key.
        layout: Page paths of the build; each root gets pages even when it has no folder
            entry of its own.
    """
    by_id: dict[tuple[str, str], FolderInfo] = {(i.root, i.relpath): i for i in folders}
    for root in layout.roots:
        by_id.setdefault((root, ""), FolderInfo(root, ""))
    pages = {}
    by_module = {s.module: key for key, s in files.items()}
    for (root, rel), info in sorted(by_id.items()):
        pages[layout.folder_index(root, rel)] = render_folder_index(info, files, by_id,
                                                                    layout)
        pages[layout.folder_doc(root, rel)] = render_folder_doc(info, files, layout,
                                                                by_module)
    return pages
