"""Parameter lists of built pages, one docstring style each: every entry once, its whole
(multi-line) description as one item, and text after the list in its own place.

``sphinx_last`` is click 8.2.1's ``Command.main``: its last ``:param extra:`` wraps onto an
aligned line and a ``.. versionchanged::`` follows the field list, which griffe's Sphinx
parser read as one field running to the end of the docstring.  ``sphinx_type_last`` and
``sphinx_rtype_last`` are that reading with a ``:type:`` or ``:rtype:`` field last (torch
2.13's ``_vendor/quack/copy_utils.py``, click's ``Context.get_parameter_source``): the closing
text became the type, or was lost.  ``google_aligned`` is torch 2.13's
``BytecodeDebugger.get_instructions`` (griffe strips twice the entry's indentation from a
continuation line and keeps the rest).

``pkg/google.py``: rich 14.3.4's Google forms, read as Napoleon (its docs' tool) reads them
(``Returns:`` ``Iterable[Segment]: ...``, ``bool: ...``, ```str`: ...``, ``~Control: ...``;
``console (:class:`~rich.console.Console`, optional): ...``), and jinja2 3.1.6's
``Environment`` definition list, whose ``.. versionadded::`` notes split the list; attrs
25.4.0's ``evolve``, whose ``Args:`` title and entries are set apart by blank lines (Napoleon
reads the section, griffe 2.4 left it text).
"""

from __future__ import annotations

import pytest
from ig_helpers import build_files, symbol_section

FILES = {
    "pkg/__init__.py": "",
    "pkg/styles.py": '''
        def sphinx_last(a: int, **extra: object) -> None:
            """Run it.

            :param a: the first.
            :param extra: extra keyword arguments are forwarded to the context
                          constructor.  See the context for more.

            .. versionchanged:: 8.0
                Added the ``a`` parameter.
            """


        def sphinx_middle(a: int, b: str) -> int:
            """Run it.

            :param a: the first, whose description
                goes on here.
            :param b: the second.
            :returns: the count of things,
                never negative.

            A closing paragraph.
            """


        def sphinx_type_last(mask=None):
            """Load it.

            :param mask: Optional multicast mask
            :type mask: Int16

            Requirements: the mask is set.
            """


        def sphinx_rtype_last(a: int):
            """Load it.

            :param a: the first.
            :rtype: int

            .. versionchanged:: 2.0
                Returns ``None`` when nothing loads.
            """


        def google(a: int, b: str) -> None:
            """Run it.

            Args:
                a: the first, whose description
                    goes on here.
                b: the second, whose description
                    goes on too.

            A closing paragraph.
            """


        def google_aligned(code: int | None = None, b: int = 0) -> list[int]:
            """Run it.

            Args:
                code: The code object to use. If None, uses
                      the most recently tracked one.
                b: the second, whose description
                      goes on deeper.

                    Example::

                        b = 2

            Returns:
                The instructions, or an empty list if the code
                      is not tracked.
            """


        def numpy(a: int, b: str) -> None:
            """Run it.

            Parameters
            ----------
            a : int
                the first, whose description
                goes on here.
            b : str
                the second, whose description
                goes on too.

            Notes
            -----
            A closing note.
            """
        ''',
    "pkg/google.py": '''
        from typing import Iterable, List


        class Thing:
            """A thing."""


        def annotated() -> Iterable[Thing]:
            """Run it.

            Returns:
                Iterable[Thing]: An iterable of things, one
                    per line.
            """


        def bare():
            """Run it.

            Yields:
                List[int]: The widths.
            """


        def word() -> bool:
            """Run it.

            Returns:
                bool: True if it ran.
            """

        def quoted() -> str:
            """Run it.

            Returns:
                `str`: The text.
            """

        def tilde() -> "Thing":
            """Run it.

            Returns:
                ~Thing: A new thing.
            """


        def named() -> int:
            """Run it.

            Returns:
                count: How many ran.
            """


        def prose() -> List[Thing]:
            """Run it.

            Returns:
                One :class:`Thing` per line.
            """


        def roles(console=None, style=""):
            """Run it.

            Args:
                console (:class:`~pkg.google.Thing`, optional): The console.
                style (:class:`Thing`): The style.

            Raises:
                :exc:`ValueError`: If it is bad.
            """


        def spaced(*args, **changes):
            """Create a new instance.

            Args:

                inst:
                    Instance of a class.

                changes:
                    Keyword changes.

            Returns:
                A copy.
            """


        def options():
            """Run it with these options:

            `first`
                The first.

                .. versionadded:: 2.2

            `second`
                The second.
            """
        ''',
}

# symbol -> the parameters section's list, exactly (the descriptions written above, joined)
EXPECTED = {
    "sphinx_last": [
        "- `a` (`int`): the first.",
        "- `extra` (`object`): extra keyword arguments are forwarded to the context "
        "constructor. See the context for more.",
    ],
    "sphinx_middle": [
        "- `a` (`int`): the first, whose description goes on here.",
        "- `b` (`str`): the second.",
    ],
    "sphinx_type_last": ["- `mask` (`Int16`, default `None`): Optional multicast mask"],
    "sphinx_rtype_last": ["- `a` (`int`): the first."],
    "google": [
        "- `a` (`int`): the first, whose description goes on here.",
        "- `b` (`str`): the second, whose description goes on too.",
    ],
    "google_aligned": [
        "- `code` (`int | None`, default `None`): The code object to use. If None, uses the "
        "most recently tracked one.",
        "- `b` (`int`, default `0`): the second, whose description goes on deeper.",
    ],
    "numpy": [
        "- `a` (`int`): the first, whose description goes on here.",
        "- `b` (`str`): the second, whose description goes on too.",
    ],
}
# symbol -> the block that must follow the parameter list (and any returns list) on its own
AFTER = {
    "sphinx_last": "**Changed in version 8.0**: Added the `a` parameter.",
    "sphinx_middle": "A closing paragraph.",
    "sphinx_type_last": "Requirements: the mask is set.",
    "sphinx_rtype_last": "**Changed in version 2.0**: Returns `None` when nothing loads.",
    "google": "A closing paragraph.",
    "google_aligned": "Example:",
    "numpy": "**Notes**: A closing note.",
}


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("docstrings") / "src", FILES)[1]


@pytest.fixture(scope="module")
def docs(out):
    return (out / "pkg" / "styles.py_docs.md").read_text()


@pytest.fixture(scope="module")
def google(out):
    return (out / "pkg" / "google.py_docs.md").read_text()


def _blocks(docs: str, name: str) -> list[str]:
    """The symbol's Markdown blocks after its one-line header (signature, kind line)."""
    return [b.strip() for b in symbol_section(docs, name).split("\n\n") if b.strip()]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_parameter_is_one_item_with_its_whole_description(docs, name):
    blocks = _blocks(docs, name)
    start = blocks.index("**Parameters**")
    assert blocks[start + 1].split("\n") == EXPECTED[name], blocks
    # nothing about a parameter is left behind the list as a bullet of its own
    assert not blocks[start + 2].startswith("- "), blocks
    assert blocks.count(AFTER[name]) == 1 and blocks.index(AFTER[name]) > start + 1, blocks


def test_sphinx_returns_keeps_its_continuation_and_not_the_closing_text(docs):
    blocks = _blocks(docs, "sphinx_middle")
    start = blocks.index("**Returns**")
    assert blocks[start + 1] == "- `int`: the count of things, never negative.", blocks
    assert blocks[start + 2] == "A closing paragraph.", blocks


def test_google_aligned_returns_and_later_blocks_keep_their_shape(docs):
    blocks = _blocks(docs, "google_aligned")
    start = blocks.index("**Returns**")
    assert blocks[start + 1] == (
        "- `list[int]`: The instructions, or an empty list if the code is not tracked."), blocks
    # the second paragraph's literal block stays code: only the first paragraph is dedented
    code = blocks[blocks.index("Example:") + 1]
    assert code.startswith("<pre") and "b = 2" in code, blocks


# symbol -> (section title, its list): the type once, as the docstring writes it, then the text
GOOGLE = {
    "annotated": ("**Returns**", "- `Iterable[Thing]`: An iterable of things, one per line."),
    "bare": ("**Yields**", "- `List[int]`: The widths."),
    "word": ("**Returns**", "- `bool`: True if it ran."),
    "quoted": ("**Returns**", "- `str`: The text."),
    "tilde": ("**Returns**", "- [`Thing`](#sym-Thing): A new thing."),
    # mkdocstrings' ``name: text``: a lower-case word stays the name, the signature's type added
    "named": ("**Returns**", "- `count` (`int`): How many ran."),
    # a role in the text is no type: the whole line is the text, the signature gives the type
    "prose": ("**Returns**", "- `List[Thing]`: One [`Thing`](#sym-Thing) per line."),
    # attrs 25.4.0's ``evolve``: a blank line after ``Args:`` and between the entries
    "spaced": ("**Parameters**", "- `inst`: Instance of a class.\n- `changes`: Keyword changes."),
    "roles": ("**Parameters**", "- `console` ([`Thing`](#sym-Thing), default `None`): The console."
              "\n- `style` ([`Thing`](#sym-Thing), default `''`): The style."),
}


@pytest.mark.parametrize("name", sorted(GOOGLE))
def test_google_entry_types_read_as_napoleon_reads_them(google, name):
    title, expected = GOOGLE[name]
    blocks = _blocks(google, name)
    assert blocks[blocks.index(title) + 1] == expected, blocks


def test_google_raises_typed_with_a_role(google):
    blocks = _blocks(google, "roles")
    assert blocks[blocks.index("**Raises**") + 1] == "- `ValueError`: If it is bad.", blocks


def test_version_note_in_a_definition_list_stays_in_its_item(google):
    blocks = _blocks(google, "options")
    start = blocks.index("Run it with these options:")
    assert blocks[start + 1:start + 3] == [
        "- `first`: The first. **New in version 2.2**", "- `second`: The second."], blocks
