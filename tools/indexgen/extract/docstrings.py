"""Docstrings as data: parsed once at extraction with griffe's own parsers.

:func:`parse_docstring` runs griffe's style detection (Google, NumPy, Sphinx) and parser and
keeps the result as plain, picklable :class:`DocSection` records; the text inside them is
still reStructuredText-flavoured (``literals``, ``:class:`roles```, ``::`` blocks) and is
turned into Markdown only when a page is rendered (:mod:`indexgen.render.rst`).
:func:`first_paragraph` and :func:`role_targets` are the other readers of docstring text.
"""

from __future__ import annotations

import builtins
import re
import textwrap
from dataclasses import dataclass, field

import griffe

# griffe's parsers warn about missing types and unknown parameters through logging; a page
# generator documents what is there instead.
_OPTIONS = {style: {"warnings": False} for style in ("google", "numpy", "sphinx")}
_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|exc|obj|const|type):`([^`]+)`")
# Lines that can start a section in one of the styles griffe parses: a Google title
# ("Args:"), a NumPy underline, a Sphinx field (":param x:").  A docstring without any is
# plain text for every parser, and is kept as one text section without asking griffe.
_SECTION_HINT = re.compile(r"^\s*(?:[A-Z][\w ]*:\s*$|-{3,}\s*$|:\w+[^:]*:)", re.M)
# A Google entry's head whose first ':' is inside a role: ``name (:class:`T`, optional): text``
# (parameters), ``:exc:`E`: text`` (raises), ``:class:`T`: text`` (returns).
_ROLE_ENTRY = re.compile(r"(?:(?P<name>\*{0,2}\w+)\s*\((?P<type>(?:[^()`]|`[^`]*`)+)\)"
                         r"|(?P<role>:(?:py:)?[a-z]+:`[^`]+`))\s*:\s*(?P<rest>.*)", re.S)
# ``Type: text``, the first line of a Google returns entry as Napoleon reads it.
_TYPE_HEAD = re.compile(r"(?P<type>`[^`]+`|[^\s:`][^:`]*?)\s*:(?:\s+(?P<rest>.*)|$)", re.S)
_TYPE_NAME = r"~?[A-Za-z_][\w.]*"
_TYPE_SHAPE = re.compile(rf"{_TYPE_NAME}(?:\s*\|\s*{_TYPE_NAME})*")
# The titles griffe's Google parser reads as sections (not admonitions), alone on a line.
_GOOGLE_TITLE = re.compile(
    r"(?:(?:other |type |keyword )?(?:args|arguments|params|parameters)|raises|exceptions"
    r"|returns|yields|receives|examples|attributes|functions|methods|classes|type aliases"
    r"|modules|warns|warnings):\s*", re.I)


@dataclass
class DocItem:
    """One entry of a parameters, returns, raises or attributes section.

    Attributes:
        name: Parameter or attribute name; empty for most returns and raises.
        annotation: Type as written in the docstring or taken from the signature.
        default: Default value from the signature, empty if none.
        description: The entry's text (reStructuredText-flavoured).
    """

    name: str = ""
    annotation: str = ""
    default: str = ""
    description: str = ""


@dataclass
class DocSection:
    """One section of a parsed docstring.

    Attributes:
        kind: griffe's section kind: ``text``, ``parameters``, ``other parameters``,
            ``returns``, ``yields``, ``receives``, ``raises``, ``warns``, ``attributes``,
            ``examples``, ``admonition``, ``deprecated``, ``functions``, ``classes``,
            ``modules``, ``type parameters``...
        title: The section's own title (admonitions such as ``Note``), else empty.
        text: The text of text, examples, admonition and deprecated sections.
        items: The entries of the other sections.
    """

    kind: str
    title: str = ""
    text: str = ""
    items: list[DocItem] = field(default_factory=list)


def first_paragraph(doc: str, collapse: bool = True) -> str:
    """The first paragraph of a docstring (the text before the first blank line).

    Args:
        doc: A cleaned docstring (as :func:`inspect.cleandoc` leaves it), possibly empty.
        collapse: Join the paragraph's lines and runs of whitespace into single spaces; when
            false the paragraph keeps its line breaks.

    Returns:
        The paragraph, '' for an empty docstring.
    """
    first = doc.strip().split("\n\n", 1)[0]
    return " ".join(first.split()) if collapse else first


def role_targets(text: str) -> list[str]:
    """Targets of the cross-reference roles in ``text`` (``:class:`~pkg.Name``` -> ``pkg.Name``).

    A leading ``~`` or ``!`` is dropped and for ``title <target>`` only the target is kept; a
    leading ``.`` (relative to the current scope) is kept.
    """
    found = []
    for raw in _ROLE.findall(text):
        target = raw.rsplit("<", 1)[1].rstrip(">").strip() if raw.endswith(">") else raw
        found.append(target.lstrip("~!").strip())
    return found


def parse_docstring(docstring: griffe.Docstring | str) -> list[DocSection]:
    """Parse a docstring into sections with griffe (style detected per docstring).

    Args:
        docstring: griffe's docstring object (its parent supplies parameter types and
            defaults from the signature) or bare text.

    Returns:
        The sections in docstring order; a single text section when no style is recognized
        or griffe fails.
    """
    if isinstance(docstring, str):
        if not _SECTION_HINT.search(docstring):
            return [DocSection("text", text=docstring)] if docstring.strip() else []
        docstring = griffe.Docstring(docstring)
    text = docstring.value
    try:
        with griffe.logger.disable():
            style, _ = griffe.infer_docstring_style(docstring)
            google = style in (None, griffe.Parser.google)
            closed = _close_google_titles(docstring) if google else None
            if closed and griffe.infer_docstring_style(closed)[0] == griffe.Parser.google:
                docstring, style = closed, griffe.Parser.google
            if style == griffe.Parser.sphinx:
                sections = _parse_sphinx(docstring)
            else:
                sections = griffe.parse(docstring, style, **_OPTIONS.get(style, {}))
    except Exception:  # noqa: BLE001 - an odd docstring must not lose the page
        return [DocSection("text", text=text)] if text.strip() else []
    # NumPy writes an entry's description under its header, the other styles beside it
    beside = style != griffe.Parser.numpy
    done = [_plain(section, beside) for section in sections]
    if style == griffe.Parser.google:
        for section in done:
            section.items = [_google_item(section.kind, item) for item in section.items]
    return done


def _close_google_titles(docstring: griffe.Docstring) -> griffe.Docstring | None:
    """The docstring without the blank lines between a Google section title and its indented
    entries (``Args:``, a blank line, ``x: The x.``), or None when it has none.

    Napoleon reads such a section as it reads one without the blank line; griffe (2.4)
    skips the title ("extraneous blank line below section title") and the section stays
    text.  Only unindented titles outside code fences count, as for griffe.
    """
    lines = docstring.lines
    kept: list[str] = []
    fenced = False
    for i, line in enumerate(lines):
        fenced ^= line.lstrip().startswith("```")
        if not fenced and not line.strip() and kept and _GOOGLE_TITLE.fullmatch(kept[-1]):
            after = next((x for x in lines[i + 1:] if x.strip()), "")
            if after[:1].isspace():
                continue
        kept.append(line)
    if len(kept) == len(lines):
        return None
    return griffe.Docstring("\n".join(kept), lineno=docstring.lineno,
                            endlineno=docstring.endlineno, parent=docstring.parent)


def _parse_sphinx(docstring: griffe.Docstring) -> list[griffe.DocstringSection]:
    """griffe's Sphinx sections, one field list at a time.

    griffe's Sphinx parser (griffe 2.4) lets a field run until the next line that starts
    with ``:``, so the text after a docstring's field list (``.. versionchanged::``, a
    closing paragraph) becomes part of the last field, and the dedent of that field is
    measured over it: an aligned continuation line keeps its indentation and reads as a
    definition list.  In reStructuredText a field list ends at an unindented line, so the
    docstring is cut there (:func:`_sphinx_pieces`) and each piece is parsed on its own, in
    order, with the same parent (parameter types and defaults from the signature).  A piece
    without fields is kept as text as it is (a new griffe docstring would ``cleandoc`` it
    again, which dedents a directive's body: every line after the first).
    """
    pieces = _sphinx_pieces(docstring.lines)
    if len(pieces) == 1:
        return griffe.parse(docstring, griffe.Parser.sphinx, **_OPTIONS["sphinx"])
    sections: list[griffe.DocstringSection] = []
    for piece in pieces:
        if any(line.startswith(":") for line in piece):
            part = griffe.Docstring("\n".join(piece), parent=docstring.parent)
            sections += griffe.parse(part, griffe.Parser.sphinx, **_OPTIONS["sphinx"])
        else:
            sections.append(griffe.DocstringSectionText("\n".join(piece).strip()))
    return sections


def _sphinx_pieces(lines: list[str]) -> list[list[str]]:
    """A cleaned Sphinx docstring's lines cut after each field list: before the first
    unindented line that follows a blank line and starts no field (``:name ...:``)."""
    pieces = []
    start = 0
    in_fields = False
    for i, line in enumerate(lines):
        if line.startswith(":"):
            in_fields = True
        elif in_fields and line[:1].strip() and not lines[i - 1].strip():
            pieces.append(lines[start:i])
            start, in_fields = i, False
    return [*pieces, lines[start:]]


def _text_of(value: object) -> str:
    return "" if value is None else str(value)


def _plain(section: griffe.DocstringSection, beside: bool) -> DocSection:
    kind = section.kind.value
    value = section.value
    title = _text_of(section.title)
    if kind == "admonition":
        return DocSection(kind, title=title or _text_of(value.annotation).capitalize(),
                          text=_text_of(value.description))
    if kind == "deprecated":
        version = _text_of(getattr(value, "version", ""))
        return DocSection(kind, title=version, text=_text_of(getattr(value, "description", "")))
    if kind == "examples":
        parts = []
        for sub_kind, sub_text in value:
            parts.append(sub_text if getattr(sub_kind, "value", sub_kind) == "text"
                         else _doctest(sub_text))
        return DocSection(kind, title=title, text="\n\n".join(parts))
    if isinstance(value, str):
        return DocSection(kind, title=title, text=value)
    if not isinstance(value, list):
        return DocSection("text", title=title, text=_text_of(value))
    items = []
    for item in value:
        items.append(DocItem(name=_text_of(getattr(item, "name", "")),
                             annotation=_text_of(getattr(item, "annotation", "")),
                             default=_text_of(getattr(item, "value", "")),
                             description=_description(item, beside)))
    return DocSection(kind, title=title, items=items)


def _description(item: object, beside: bool) -> str:
    """An entry's description; when it starts beside the entry's header (``x: The x,`` in
    Google style, ``:param x: The x,`` in Sphinx style), the further lines of its first
    paragraph dedented to their own margin.

    The indentation of those lines says nothing about structure: authors align them under
    the first line's text, and griffe strips a fixed amount (a Google continuation loses
    twice the entry's indentation, the rest stays), which the reStructuredText reading of
    the page would take for a definition list whose term is the first line.  Later
    paragraphs keep their indentation (a ``::`` block under the first paragraph stays code).
    """
    text = _text_of(getattr(item, "description", ""))
    lines = text.split("\n")
    end = next((i for i, line in enumerate(lines) if not line.strip()), len(lines))
    if not beside or end < 2:
        return text
    return "\n".join([lines[0], textwrap.dedent("\n".join(lines[1:end])), *lines[end:]])


def _google_item(kind: str, item: DocItem) -> DocItem:
    """A Google entry as Napoleon (Sphinx's reader of the style) reads it, where griffe's
    reading differs.

    griffe splits an entry at its first ``:``, which in a type written as a role is the
    role's own (``console (:class:`~rich.console.Console`, optional): text`` gave the name
    ``console (``; ``:exc:`ValueError`: text`` an empty type): the entry is split after the
    role instead.  A returns, yields or receives entry ``Type: text`` is Napoleon's form,
    which griffe reads as ``name: text`` when the type is one word (``bool: True if ...``)
    and as all description otherwise (``Iterable[Segment]: ...``): the type is taken back
    when the word is a builtin or capitalized name (a lower-case word stays a name, as in
    mkdocstrings' ``name: text``) or the text before the colon has the shape of a type.  An
    entry whose first word is followed by a role (``One :class:`X` per line``) is all text.
    """
    if kind in ("parameters", "other parameters"):
        entry = _ROLE_ENTRY.fullmatch(item.name + ":" + item.description) \
            if "(" in item.name else None
        if entry and entry["name"]:
            annotation = entry["type"].strip().removesuffix(", optional").strip()
            return DocItem(entry["name"], annotation, item.default, entry["rest"])
        return item
    if item.annotation or kind not in ("raises", "warns", "returns", "yields", "receives"):
        return item
    entry = None if item.name else _ROLE_ENTRY.fullmatch(":" + item.description)
    if entry and entry["role"]:
        return DocItem(annotation=entry["role"], description=entry["rest"])
    if kind not in ("returns", "yields", "receives"):
        return item
    if item.name and re.match(r"(?:py:)?[a-z]+:`", item.description):
        # griffe's ``name: text`` split at a role in the text: ``One :class:`X` per line``
        return DocItem(description=f"{item.name} :{item.description}")
    if item.name:
        word = item.name
        typed = word[:1].isupper() or isinstance(getattr(builtins, word, None), type)
        return DocItem(annotation=word, description=item.description) if typed else item
    first, *more = item.description.split("\n")
    head = _TYPE_HEAD.fullmatch(first)
    annotation = _type_text(head["type"]) if head else ""
    if not annotation:
        return item
    return DocItem(annotation=annotation, description="\n".join([head["rest"] or "", *more]))


def _type_text(head: str) -> str:
    """``head`` as a type (``Iterable[Segment]``, ``int | None``, ```str```, ``~Control``,
    ``[Syntax]``) without its quoting, or '' when it has not the shape of one (``The count``)."""
    head = head.strip()
    if head.startswith("`"):
        head = head.strip("`")
    if head.startswith("[") and head.endswith("]"):
        head = head[1:-1]
    bare = ""
    shape = head
    while shape != bare:  # the subscripts' contents, innermost first
        bare, shape = shape, re.sub(r"\[[^\[\]]*\]", "", shape)
    return head if _TYPE_SHAPE.fullmatch(shape) else ""


def _doctest(text: str) -> str:
    """An examples snippet as a doctest block (griffe keeps the prompts)."""
    return text if text.lstrip().startswith(">>>") else "::\n\n" + "\n".join(
        "    " + line for line in text.split("\n"))
