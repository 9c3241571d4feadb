"""Stage 1a: from raw bytes to a syntax tree, or to the reason there is none.

:func:`parse_source` checks the size limit, decodes the bytes the way Python does and parses
them once with :func:`ast.parse`; a file that is empty, too large, undecodable or unparsable
gets its status and a human readable reason instead of a tree.  :func:`module_name` gives the
dotted name of a file from its path.
"""

from __future__ import annotations

import ast
import io
import tokenize

from indexgen.extract import runtime
from indexgen.extract.model import (
    STATUS_EMPTY,
    STATUS_SYNTAX_ERROR,
    STATUS_TOO_LARGE,
    STATUS_UNDECODABLE,
    FileSummary,
)


def decode_source(data: bytes) -> tuple[str, str]:
    """Decode source bytes the way Python does (BOM, then PEP 263 cookie, else UTF-8).

    Args:
        data: Raw file contents.

    Returns:
        ``(text, encoding)`` with universal newlines applied.

    Raises:
        UnicodeDecodeError: The bytes are not valid in the declared encoding.
        SyntaxError: The encoding cookie names an unknown encoding.
    """
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        data.decode("utf-8")  # report the offending byte if that is the problem
        raise
    text = data.decode(encoding)
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text, encoding


def module_name(relpath: str, prefix: str = "") -> str:
    """Dotted module name of a file given its path relative to a source root.

    Args:
        relpath: POSIX path relative to the root (``pkg/sub/name.py``).
        prefix: Dotted name of the root when the root is itself a package (``torch``), else ''.

    Returns:
        ``prefix.pkg.sub.name``, or ``prefix.pkg.sub`` for ``pkg/sub/__init__.py``.
    """
    parts = relpath[: -len(".py")].split("/")
    if parts[-1] == "__init__":
        parts.pop()
    if prefix:
        parts.insert(0, prefix)
    return ".".join(parts)


def parse_source(summary: FileSummary, data: bytes, max_bytes: int) -> tuple[ast.Module, str] | None:
    """Decode and parse ``data``; on failure set the summary's status and return None.

    Args:
        summary: The file's summary; ``n_lines``, ``encoding``, ``status`` and ``error`` are
            filled in.
        data: Raw file contents.
        max_bytes: Larger files are not analyzed (status ``too-large``).

    Returns:
        ``(tree, text)``, or None when the file is empty, too large, undecodable or does not
        parse.
    """
    if not data:
        summary.status, summary.error = STATUS_EMPTY, "empty file (0 bytes)"
        return None
    if len(data) > max_bytes:
        summary.status = STATUS_TOO_LARGE
        summary.error = f"{len(data):,} bytes exceeds the {max_bytes:,}-byte limit"
        summary.n_lines = data.count(b"\n") + (not data.endswith(b"\n"))
        return None
    try:
        text, summary.encoding = decode_source(data)
    except (UnicodeDecodeError, SyntaxError, LookupError) as exc:
        summary.status = STATUS_UNDECODABLE
        summary.error = f"not decodable as source text: {_decode_error(exc)}"
        summary.n_lines = data.count(b"\n") + (not data.endswith(b"\n"))
        return None
    summary.n_lines = text.count("\n") + (not text.endswith("\n"))
    try:
        with runtime.shielded():
            tree = ast.parse(text, filename=summary.relpath)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        summary.status = STATUS_SYNTAX_ERROR
        line = getattr(exc, "lineno", None)
        msg = getattr(exc, "msg", None) or str(exc) or type(exc).__name__
        summary.error = f"does not parse: {msg}" + (f" (line {line})" if line else "")
        return None
    return tree, text


def _decode_error(exc: Exception) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return f"invalid {exc.encoding} byte 0x{exc.object[exc.start]:02x} at offset {exc.start}"
    return str(exc)
