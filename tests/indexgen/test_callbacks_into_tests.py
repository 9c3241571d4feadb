"""Documented code that calls back into a test's object (a listener a test installs) has
no page to link to: the build neither fails nor links it (a KeyError on the test file's key
stopped ``indexgen build`` once a test set such a listener)."""

from __future__ import annotations

from ig_helpers import broken_links, sample_config
from indexgen import build

LIB = '''
class Recorder:
    """Calls its listener back."""

    def __init__(self):
        self.listener = None

    def log(self, event):
        """Tell the listener."""
        if self.listener is not None:
            self.listener.on_trace(event)


recorder = Recorder()
'''

TEST = '''
from pkg.lib import recorder


class Tracker:
    def on_trace(self, event):
        self.last = event


def test_tracks():
    tracker = Tracker()
    recorder.listener = tracker
    recorder.log("x")
'''


def test_listener_defined_in_a_test_is_not_linked(tmp_path):
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "tests").mkdir()
    (tmp_path / "src" / "pkg" / "__init__.py").write_text('"""A package."""\n')
    (tmp_path / "src" / "pkg" / "lib.py").write_text(LIB)
    (tmp_path / "tests" / "test_lib.py").write_text(TEST)
    build(sample_config(tmp_path))
    out = tmp_path / "docs" / "reference"
    page = (out / "pkg" / "lib.py_docs.md").read_text()
    assert "test_lib" not in page.split("## Testing & Usage")[0]
    assert broken_links(out) == []
