"""Findings that indexgen once claimed of code it did not write (click 8.2.1), each read off
a small project written here: a property handed to a call listed as a callback, the
project's own ``write_text`` listed as file system access, and ``nonlocal`` listed as
module-global state (and taken for a module name by the call graph)."""

from __future__ import annotations

import pytest
from ig_helpers import build_files, symbol_section

FILES = {
    "pkg/__init__.py": "",
    "pkg/fmt.py": '''
        class Formatter:
            """Builds text in memory (click's HelpFormatter)."""

            def __init__(self) -> None:
                self.buffer: list[str] = []

            def write_text(self, text: str) -> None:
                self.buffer.append(text)
        ''',
    "pkg/app.py": '''
        from pathlib import Path

        from pkg.core import Command
        from pkg.fmt import Formatter


        def show(cmd: Command, f: Formatter) -> None:
            cmd.format_help(f)  # reaches only the project's write_text


        def keep(cmd: Command, p: Path) -> None:
            cmd.save(p)  # reaches pathlib's
        ''',
    "pkg/core.py": '''
        from pathlib import Path

        from pkg.fmt import Formatter


        class Param:
            @property
            def hname(self) -> str:
                return "x"

            def on_change(self, value) -> None:
                pass

            def describe(self) -> str:
                return str(self.hname)  # a property read, its value handed on

            def message(self) -> str:
                return "{n}".format(n=self.hname)  # by keyword: read all the same

            def listen(self, bus) -> None:
                bus.subscribe(self.on_change)  # a method handed on: a callback


        class Command:
            def format_help(self, formatter: Formatter) -> None:
                formatter.write_text("usage")  # the project's own write_text

            def save(self, path: Path) -> None:
                path.write_text("saved")  # pathlib's

            def dump(self, target) -> None:
                target.write_text("x")  # a value of unknown type: may be pathlib's


        class Counter:
            def add(self) -> None:
                pass


        class Tally:
            def add(self) -> None:
                pass


        total = Counter()


        def count_up() -> int:
            total = Tally()
            n = 0

            def bump() -> None:
                nonlocal n, total
                n += 1
                total.add()  # the enclosing function's Tally, not the module's Counter

            bump()
            return n
        ''',
}


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    """The pages of the project."""
    return build_files(tmp_path_factory.mktemp("findings") / "src", FILES)[1]


@pytest.fixture(scope="module")
def core(out):
    """The analysis page of ``pkg/core.py``."""
    return (out / "pkg/core.py_docs.md").read_text()


def _line(marker: str, rel: str = "pkg/core.py") -> int:
    text = FILES[rel].lstrip("\n").split("\n")
    return next(n for n, line in enumerate(text, 1) if marker in line)


def _bullet(section: str, title: str) -> str:
    return next((x for x in section.split("\n") if x.startswith(f"- **{title}**")), "")


def _security(docs: str) -> str:
    return docs.split("\n## Security & Safety\n", 1)[1].split("\n## ", 1)[0]


@pytest.mark.parametrize("method", ["Param.describe", "Param.message"])
def test_a_property_handed_to_a_call_is_read_not_passed(core, method):
    section = symbol_section(core, method)
    assert _bullet(section, "Passes as a callback") == "", section
    assert "[`Param.hname`]" in _bullet(section, "Reads"), section
    hname = symbol_section(core, "Param.hname")
    assert _bullet(hname, "Passed as a callback by") == "", hname
    assert f"[`{method}`](#sym-{method})" in _bullet(hname, "Read by"), hname


def test_a_method_handed_to_a_call_stays_a_callback(core):
    section = symbol_section(core, "Param.listen")
    assert "[`Param.on_change`]" in _bullet(section, "Passes as a callback"), section


def test_the_projects_own_method_named_like_pathlibs_is_no_file_access(core):
    security = _security(core)
    own = _line("the project's own write_text")
    assert f"#L{own})" not in security, security
    for marker in ("pathlib's", "may be pathlib's"):
        assert f"[line {_line(marker)}](#L{_line(marker)})" in security, (marker, security)
    assert "- **File system access**: 2 direct calls\n" in security, security


def test_a_call_of_it_does_no_file_access_through_it(out):
    """Nor does a call that reaches it, where a call that reaches pathlib's does."""
    security = _security((out / "pkg/app.py_docs.md").read_text())
    assert f"#L{_line('reaches only the project', 'pkg/app.py')})" not in security, security
    line = _line("reaches pathlib's", "pkg/app.py")
    assert f"[line {line}](#L{line}): `cmd.save` in `keep`, through" in security, security
    assert "- **File system access**: 1 call through project functions\n" in security


def test_the_projects_own_write_text_page_finds_no_file_access(out):
    """The callee's own page agrees: ``fmt.py`` does nothing with files."""
    assert "None found" in _security((out / "pkg/fmt.py_docs.md").read_text())


def test_nonlocal_is_no_module_global_state(core):
    patterns = core.split("\n## Code Patterns & Idioms\n", 1)[1].split("\n## ", 1)[0]
    assert "nonlocal" not in patterns, patterns


def test_a_nonlocal_name_is_the_enclosing_functions(core):
    calls = _bullet(symbol_section(core, "count_up"), "Calls")
    line = _line("the enclosing function's Tally")
    assert f"[`Tally.add`](#sym-Tally.add) ([line {line}](#L{line}))" in calls, calls
    assert "Counter.add" not in calls, calls
