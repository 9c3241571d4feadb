"""Docstring text (reStructuredText as Python docstrings use it) to safe Markdown.

Blocks: paragraphs; ``::`` literal blocks and ``.. code-block::`` directives, doctest blocks
(``>>>``), Markdown code fences and other literal text become code blocks; bullet and enumerated lists; section
titles (a line underlined with ``=``, ``-``, ``~``...) become bold lines; definition lists
(a term line followed by an indented definition) and admonitions (``.. note::``) become
labelled paragraphs; RST comments and link targets are dropped.  Inline: ````literal````
and ```default role``` become code spans; ``:class:`X```, ``:func:``, ``:meth:``, ``:mod:``...
become links through the given :data:`Linker` (or code spans when it knows no target);
``*emphasis*`` and ``**strong**`` stay emphasis; everything else is escaped, so a docstring
can never inject markup into the page.  A paragraph whose backquotes do not pair up (a
broken literal) is shown as plain text, its backquotes and role names dropped
(:func:`degraded`).

Code blocks are raw HTML (``<pre class="indexgen-code">``), escaped, one ``<span>`` per line,
so that no Markdown extension of the site rewrites their content.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

from indexgen.render.markdown import code, escape_inline, link, protect_line_start

#: ``linker(role, target) -> URL`` of the target's definition, or None when unknown.
Linker = Callable[[str, str], "str | None"]

# Every token starts with one of ` : *: the lookahead lets the engine skip any other position
# with one test instead of trying each alternative there (a quarter of the time on torch).
_INLINE = re.compile(
    r"(?=[`:*])"
    r"(?:(?P<literal>``(?=\S)(?:[^`]|`(?!`))+?``)"
    r"|(?P<role>(?<![\w`]):(?:py:)?(?P<rolename>[a-z]+):`(?P<target>[^`]+)`)"
    r"|(?P<ref>`(?P<reftext>[^`<]+?)\s*(?:<(?P<url>[^`>]+)>)?`__?)(?!\w)"
    r"|(?P<default>`(?=\S)(?P<dtext>[^`]+?)`)(?!\w)"
    r"|(?P<strong>(?<![\w*])\*\*(?=\S)(?P<stext>[^*]+?)\*\*(?![\w*]))"
    r"|(?P<em>(?<![\w*])\*(?=[^\s*])(?P<etext>[^*]+?)(?<=\S)\*(?![\w*])))"
)
_ROLE_PREFIX = re.compile(r"(?<![\w`]):(?:py:)?[a-z]+:`[~!]?")
_BULLET = re.compile(r"^([-*+•]|\d+[.)]|#\.|\(\d+\))\s+")
# Inside a paragraph only these start a list item ("+ 2*x" continues a formula).
_ITEM_IN_PARAGRAPH = re.compile(r"^[-*•]\s+")
_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+_.:])\1{2,}\s*$")
_DIRECTIVE = re.compile(r"^\.\.\s+([\w:-]+)::\s*(.*)$")
_FENCE = re.compile(r"^(`{3,}|~{3,})[\w+-]*\s*$")
_CODE_DIRECTIVES = {"code-block", "code", "sourcecode", "doctest", "testcode", "math",
                    "highlight", "literalinclude", "parsed-literal", "productionlist"}
_ADMONITIONS = {"note", "warning", "tip", "important", "attention", "caution", "danger",
                "hint", "error", "seealso", "deprecated", "versionadded", "versionchanged",
                "admonition", "todo"}
_TITLES = {"seealso": "See also", "versionadded": "New in version",
           "versionchanged": "Changed in version", "todo": "To do"}
# A version note as :func:`_directive` writes it: one line, its label first.
_VERSION_NOTE = re.compile(r"\*\*(?:New in version|Changed in version|Deprecated)\b[^\n]*$")


def inline(text: str, linker: Linker, line_start: bool = True) -> str:
    """One paragraph of docstring text as one line of Markdown (whitespace collapsed)."""
    text = " ".join(text.split())
    if "`" not in text and "*" not in text:  # every token of _INLINE has one of them
        done = escape_inline(text)
        return protect_line_start(done) if line_start else done
    out = []
    pos = 0
    for m in _INLINE.finditer(text):
        if m.start() > pos:
            if "`" in text[pos:m.start()]:
                return degraded(text, line_start)
            out.append(escape_inline(text[pos:m.start()]))
        out.append(_inline_token(m, linker))
        pos = m.end()
    if pos < len(text):
        if "`" in text[pos:]:
            return degraded(text, line_start)
        out.append(escape_inline(text[pos:]))
    return protect_line_start("".join(out)) if line_start else "".join(out)


def degraded(text: str, line_start: bool = True) -> str:
    """A paragraph whose backquotes do not pair up (``an ``x`` and `y`` here``) as plain
    text: its roles and backquotes dropped, everything else escaped -- never a code span
    that swallows the wrong words or a stray backquote."""
    done = escape_inline(_ROLE_PREFIX.sub("", text).replace("`", ""))
    return protect_line_start(done) if line_start else done


def _inline_token(m: re.Match[str], linker: Linker) -> str:
    if m.group("literal"):
        return code(m.group("literal")[2:-2])
    if m.group("role"):
        return role(m.group("rolename"), m.group("target"), linker)
    if m.group("ref"):
        words = escape_inline(m.group("reftext").strip())
        url = m.group("url")
        return f"{words} ({escape_inline(url)})" if url else words
    if m.group("default"):
        return code(m.group("dtext"))
    if m.group("strong"):
        return f"**{escape_inline(m.group('stext'))}**"
    return f"*{escape_inline(m.group('etext'))}*"


def role(name: str, raw: str, linker: Linker) -> str:
    """A cross-reference role as a link to its definition, or a code span.

    ``:class:`~pkg.mod.Name``` shows ``Name``; ``:func:`title <target>``` shows ``title``.
    """
    if raw.endswith(">") and "<" in raw:
        title, _, target = raw[:-1].rpartition("<")
        title, target = title.strip(), target.strip()
    else:
        target = raw.strip()
        title = target.lstrip("~!.")
        if target.startswith("~"):
            title = title.rpartition(".")[2]
        if name in ("func", "meth") and not title.endswith(")"):
            title += "()"
    target = target.lstrip("~!")
    url = None if raw.startswith("!") else linker(name, target)
    return link(code(title), url) if url else code(title)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _block_end(lines: list[str], start: int, base: int) -> int:
    """End (exclusive) of the block from ``start`` whose lines are indented deeper than
    ``base`` (blank lines inside it included, trailing ones not)."""
    end = i = start
    while i < len(lines):
        if lines[i].strip():
            if _indent(lines[i]) <= base:
                break
            end = i + 1
        i += 1
    return end


def _dedent(lines: list[str]) -> list[str]:
    margin = min((_indent(x) for x in lines if x.strip()), default=0)
    return [x[margin:] for x in lines]


def code_block(text: str) -> str:
    """Escaped raw-HTML code block; one span per line keeps blank lines inside the block."""
    lines = text.strip("\n").split("\n")
    spans = [f"<span>{html.escape(line, quote=False)}</span>" for line in lines]
    return '<pre class="indexgen-code"><code>' + "\n".join(spans) + "</code></pre>"


def to_markdown(text: str, linker: Linker) -> list[str]:
    """Docstring text as Markdown blocks (each a string; join them with blank lines)."""
    lines = text.expandtabs().split("\n")
    blocks: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped:
            i += 1
            continue
        base = _indent(line)
        fence = _FENCE.match(stripped)
        if fence:  # a Markdown code fence (docstrings written for mkdocstrings use them)
            end = i + 1
            while end < len(lines) and not lines[end].strip().startswith(fence.group(1)):
                end += 1
            blocks.append(code_block("\n".join(_dedent(lines[i + 1:end]))))
            i = end + 1
            continue
        if stripped.startswith(">>>"):
            end = i
            while end < len(lines) and lines[end].strip():
                end += 1
            blocks.append(code_block("\n".join(_dedent(lines[i:end]))))
            i = end
            continue
        directive = _DIRECTIVE.match(stripped)
        if directive:
            i = _directive(directive, lines, i, base, linker, blocks)
            continue
        if stripped.startswith(".."):  # a comment or a link target
            i = _block_end(lines, i + 1, base)
            continue
        if i + 1 < len(lines) and _UNDERLINE.match(lines[i + 1].strip()) \
                and len(lines[i + 1].strip()) >= len(stripped) and not _BULLET.match(stripped):
            blocks.append(f"**{inline(stripped, linker)}**")
            i += 2
            continue
        if _BULLET.match(stripped):
            i = _list(lines, i, base, linker, blocks)
            continue
        i = _paragraph(lines, i, base, linker, blocks)
    return blocks


def _paragraph(lines: list[str], i: int, base: int, linker: Linker, blocks: list[str]) -> int:
    end = i
    while end < len(lines) and lines[end].strip() and _indent(lines[end]) == base \
            and (end == i or not _ITEM_IN_PARAGRAPH.match(lines[end].strip())):
        end += 1
    if end < len(lines) and lines[end].strip() and _indent(lines[end]) > base:
        # A term followed by its indented definition (a definition list item).
        term = " ".join(x.strip() for x in lines[i:end])
        stop = _block_end(lines, end, base)
        body = to_markdown("\n".join(_dedent(lines[end:stop])), linker)
        item = f"- {inline(term, linker, False)}" + (": " + body[0] if body else "")
        # a version note of the definition (.. versionadded::) ends its item, not the list
        notes = 1
        while notes < len(body) and _VERSION_NOTE.match(body[notes]):
            item += " " + body[notes]
            notes += 1
        blocks.append(item)
        blocks.extend(body[notes:])
        return stop
    text = "\n".join(x.strip() for x in lines[i:end])
    literal = text.endswith("::")
    if literal:
        text = text[:-2].rstrip()
        text = text + ":" if text and not text.endswith(" ") else text
    if text:
        blocks.append(inline(text, linker))
    if literal:
        start = end
        while start < len(lines) and not lines[start].strip():
            start += 1
        stop = _block_end(lines, start, base)
        if stop > start:
            blocks.append(code_block("\n".join(_dedent(lines[start:stop]))))
        return max(stop, end)
    return end


def _list(lines: list[str], i: int, base: int, linker: Linker, blocks: list[str]) -> int:
    items = []
    while i < len(lines):
        stripped = lines[i].strip()
        if not stripped:
            nxt = i + 1
            while nxt < len(lines) and not lines[nxt].strip():
                nxt += 1
            if nxt < len(lines) and _indent(lines[nxt]) == base and _BULLET.match(
                    lines[nxt].strip()):
                i = nxt
                continue
            break
        if _indent(lines[i]) != base or not _BULLET.match(stripped):
            break
        marker = _BULLET.match(stripped)
        first = stripped[marker.end():]
        stop = _block_end(lines, i + 1, base)
        items.append(" ".join([first, *(x.strip() for x in lines[i + 1:stop])]))
        i = stop
    blocks.append("\n".join(f"- {inline(item, linker, False)}" for item in items))
    return i


def _directive(m: re.Match[str], lines: list[str], i: int, base: int, linker: Linker,
               blocks: list[str]) -> int:
    name, argument = m.group(1).rpartition(":")[2], m.group(2)
    stop = _block_end(lines, i + 1, base)
    body = [x for x in _dedent(lines[i + 1:stop])]
    content = [x for x in body if not re.match(r"^\s*:[\w-]+:", x)]  # drop directive options
    if name in _CODE_DIRECTIVES:
        if any(x.strip() for x in content):
            blocks.append(code_block("\n".join(content)))
    elif name in _ADMONITIONS:
        title = argument if name == "admonition" else _TITLES.get(name, name.capitalize())
        if name in ("versionadded", "versionchanged", "deprecated"):
            # the version, then (as in Sphinx) the note's own text up to the first blank line
            version, _, argument = argument.partition(" ")
            title += f" {version}" if version else ""
        if name != "admonition" and argument.strip():  # text beside the marker starts the body
            content = [argument.strip(), *content]
        rest = to_markdown("\n".join(content), linker)
        label = f"**{escape_inline(title)}**"
        first = rest[0] if rest and not rest[0].startswith("<pre") else ""
        blocks.append(f"{label}: {first}" if first else label)
        blocks.extend(rest[1:] if first else rest)
    else:  # an unknown directive: show it as the literal text it is
        blocks.append(code_block("\n".join(_dedent(lines[i:stop]))))
    return stop
