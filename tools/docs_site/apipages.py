"""mkdocstrings API pages, one per module, generated at build time.

The packages are being written while the site is built, so the API reference
is not a hand-maintained list of ``::: module`` blocks: :func:`api_pages`
walks each package's folder and emits one page per module that exists right
now. mkdocstrings (python handler, griffe underneath, Google docstring
style) renders whatever members the module has; nothing is imported.

Pages land under ``api/<package>/``: ``index.md`` for the package itself and
``<module>.md`` (dots become folders for sub-packages) for every module.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from docs_site.navgen import page_link

__all__ = ["Package", "ApiPage", "discover_modules", "module_page_uri", "module_source", "api_pages"]


@dataclass(frozen=True)
class Package:
    """A package whose API reference the site renders.

    Attributes:
        name: Import name, e.g. ``"fsdp_ref"``.
        path: Folder of the package, relative to the repository root.
        blurb: One sentence shown on the package's API landing page.
    """

    name: str
    path: str
    blurb: str


def discover_modules(root: Path, package: Package) -> list[str]:
    """List the dotted names of every module of ``package`` found on disk.

    Args:
        root: Repository root.
        package: The package to walk.

    Returns:
        Dotted module names, the package itself first, then sorted. Empty if
        the package has no ``__init__.py`` yet.
    """
    pkg_dir = root / package.path
    if not (pkg_dir / "__init__.py").is_file():
        return []
    names: list[str] = []
    for path in sorted(pkg_dir.rglob("*.py")):
        rel = path.relative_to(pkg_dir)
        if "__pycache__" in rel.parts:
            continue
        if any(not (pkg_dir / Path(*rel.parts[:i]) / "__init__.py").is_file()
               for i in range(1, len(rel.parts))):
            continue  # a folder that is not a sub-package
        parts = list(rel.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join([package.name, *parts]))
    return sorted(set(names), key=lambda n: (n != package.name, n))


def module_page_uri(module: str) -> str:
    """Page path (relative to ``docs/``) of a module's API page.

    Args:
        module: Dotted module name, e.g. ``"fsdp_ref.api"``.

    Returns:
        ``"api/fsdp_ref/index.md"`` for a top-level package, else e.g.
        ``"api/fsdp_ref/api.md"``.
    """
    parts = module.split(".")
    if len(parts) == 1:
        return f"api/{parts[0]}/index.md"
    return "api/" + "/".join(parts) + ".md"


def module_source(root: Path, package: Package, module: str) -> str:
    """Source file of a module, relative to the repository root.

    Args:
        root: Repository root.
        package: Package the module belongs to.
        module: Dotted module name.

    Returns:
        E.g. ``"src/fsdp_ref/api.py"`` or ``"src/fsdp_ref/__init__.py"``.
    """
    parts = module.split(".")[1:]
    base = Path(package.path, *parts)
    if (root / base / "__init__.py").is_file():
        return (base / "__init__.py").as_posix()
    return base.with_suffix(".py").as_posix()


@dataclass(frozen=True)
class ApiPage:
    """One generated API page.

    Attributes:
        markdown: The page's Markdown (a title and a ``::: module`` block).
        source: Source file the page documents, relative to the repository
            root, or ``None`` for a placeholder page.
    """

    markdown: str
    source: str | None


# Modules whose public classes take methods from a base in another module (FSDPModule's
# set_* methods live in fsdp_ref.module_settings): their page lists those methods too, as
# torch's documentation of the class does.
INHERITING = {"fsdp_ref.module"}


def _module_markdown(module: str, intro: str = "") -> str:
    inherited = "      inherited_members: true\n" if module in INHERITING else ""
    return (
        f"# `{module}`\n\n{intro}"
        f"::: {module}\n"
        "    options:\n"
        "      show_root_heading: false\n"
        "      heading_level: 2\n" + inherited
    )


def api_pages(root: Path, packages: list[Package]) -> dict[str, ApiPage]:
    """Every API page, keyed by page path relative to ``docs/``.

    Args:
        root: Repository root.
        packages: Packages to document.

    Returns:
        ``{"api/fsdp_ref/index.md": ApiPage(...), "api/fsdp_ref/api.md": ...}``.
        A package that does not exist yet gets a landing page that says so,
        so the site still builds.
    """
    pages: dict[str, ApiPage] = {}
    for package in packages:
        modules = discover_modules(root, package)
        index = module_page_uri(package.name)
        if not modules:
            pages[index] = ApiPage(
                f"# `{package.name}`\n\n{package.blurb}\n\n"
                f"!!! note \"Not written yet\"\n    `{package.path}/__init__.py` does not exist "
                "yet; this page fills in by itself once it does.\n",
                None,
            )
            continue
        listing = "\n".join(
            f"| [`{m}`]({page_link(index, module_page_uri(m))}) | `{module_source(root, package, m)}` |"
            for m in modules[1:]
        )
        intro = f"{package.blurb}\n\n"
        if listing:
            intro += "| Module | Source |\n|---|---|\n" + listing + "\n\n"
        pages[index] = ApiPage(_module_markdown(package.name, intro),
                               module_source(root, package, package.name))
        for module in modules[1:]:
            pages[module_page_uri(module)] = ApiPage(_module_markdown(module),
                                                     module_source(root, package, module))
    return pages

