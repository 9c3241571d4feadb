"""Each group of overrides on a page follows the method it overrides.

A call on a value of several classes (``item(data).as_string()`` with ``data: Table |
Date``) lists each class's method and, after it, the overrides in that class's own
subclasses: tomlkit's page put every override after the first method named (``Date.as_string,
or an override in: AoT, Array, ...``), whose class is no base of theirs
(``indexgen.analyze.virtual.after_bases``, ``indexgen.render.calls``).  Every expected
line is read off the source by hand.
"""

from __future__ import annotations

from ig_helpers import build_files, calls_line, symbol_section

FILES = {
    "pkg/__init__.py": "",
    "pkg/items.py": '''
        class Table:
            def render(self):
                return "t"


        class SuperTable(Table):
            def render(self):
                return "s"


        class Date:
            def render(self):
                return "d"


        class LocalDate(Date):
            def render(self):
                return "l"


        def show(x: Date | Table):
            return x.render()
    ''',
}


def test_each_override_group_follows_its_own_base(tmp_path):
    _src, out = build_files(tmp_path / "src", FILES)
    line = calls_line(symbol_section((out / "pkg/items.py_docs.md").read_text(), "show"))
    date, table = line.index("`Date.render`"), line.index("`Table.render`")
    local, super_ = line.index("`LocalDate.render`"), line.index("`SuperTable.render`")
    # Date.render (21), or an override in: LocalDate.render (21); Table.render (21), or
    # an override in: SuperTable.render (21)
    assert date < local < table < super_ or table < super_ < date < local, line
