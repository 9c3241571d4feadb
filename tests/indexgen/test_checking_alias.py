"""A name a module binds under ``if TYPE_CHECKING:`` by an import and at run time by a class
it defines is, at run time, that class: its subclasses are the class's, and a method of the
class calling one it lacks reaches their overrides (issue 31, found by the trial of
tomlkit, whose ``_types.py`` imports ``dict as _CustomDict`` for type checkers and defines
``class _CustomDict(MutableMapping, dict)`` otherwise).  On a small project written here:
every expected edge is read off the source by hand.
"""

from __future__ import annotations

import pytest
from ig_helpers import build_files, calls_at

FILES = {
    "pkg/__init__.py": "",
    "pkg/_types.py": '''
        from __future__ import annotations

        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            from builtins import dict as CustomDict
            from pkg.keys import Key as KeyAlias
        else:
            from collections.abc import MutableMapping

            KeyAlias = object

            class CustomDict(MutableMapping, dict):
                def __or__(self, other):
                    new = self.copy()  # copy
                    new.update(other)
                    return new
    ''',
    "pkg/keys.py": '''
        class Key:
            def is_dotted(self) -> bool:
                return False
    ''',
    "pkg/tables.py": '''
        from __future__ import annotations

        from typing import TYPE_CHECKING

        from pkg._types import CustomDict, KeyAlias

        if TYPE_CHECKING:
            from pkg.keys import Key


        class Table(CustomDict):
            def copy(self) -> Table:
                return Table()


        class Document(CustomDict):
            def copy(self) -> Document:
                return Document()


        def checking_only(k: Key) -> bool:
            return k.is_dotted()  # checking only


        def aliased(k: KeyAlias) -> bool:
            return k.is_dotted()  # assigned at run time
    ''',
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("checking_alias") / "src", FILES)




def test_the_run_time_class_is_the_base_of_its_subclasses(pages):
    # at run time Table and Document subclass the class; self.copy() is theirs
    assert calls_at(pages, "pkg/_types.py", "# copy") == {"tables:Table.copy",
                                                        "tables:Document.copy"}


@pytest.mark.parametrize("marker", ["# checking only", "# assigned at run time"])
def test_an_annotation_keeps_what_type_checkers_see(pages, marker):
    # a name bound only under TYPE_CHECKING, or at run time by an assignment, not a class
    assert calls_at(pages, "pkg/tables.py", marker) == {"keys:Key.is_dotted"}
