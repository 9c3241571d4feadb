"""Hand-written pages name only code that exists (``docs_site.coderefs``).

Every page ``docs/**/*.md`` outside the generated reference is checked: a name, path,
test or stream-wait site that names nothing fails its page's test with the page, the
line, the reference and the nearest existing name. The checker itself is held to both
sides: wrong names planted on copies of real pages (and in a table of wait sites built
from the code) must be reported with that message, and the kinds of backticked text
that are not code references (example code, shell commands, options, users' variables,
placeholders, other libraries) must not be.

Nothing here builds the site; the code is read with ``ast`` (no module of ours is
imported), torch names are looked up in the installed torch.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from docs_site import coderefs
from docs_site.codeindex import OURS, CodeIndex

REPO = Path(__file__).resolve().parents[2]
PAGES = coderefs.pages(REPO)


@pytest.fixture(scope="module")
def index() -> CodeIndex:
    """What exists in this repository (read once per module)."""
    return CodeIndex(REPO)


def _page_id(page: Path) -> str:
    return page.relative_to(REPO / "docs").as_posix()


def test_pages_are_the_hand_written_ones():
    names = {_page_id(p) for p in PAGES}
    assert "design/streams.md" in names and "index.md" in names
    assert not any(n.startswith("reference/") for n in names)
    assert len(names) == len(list((REPO / "docs").rglob("*.md"))) - len(
        list((REPO / "docs" / "reference").rglob("*.md")))


@pytest.mark.parametrize("page", PAGES, ids=[_page_id(p) for p in PAGES])
def test_page_names_only_existing_code(index, page):
    findings = coderefs.check_page(index, page)
    if findings:
        pytest.fail(f"{len(findings)} code reference(s) on {_page_id(page)} do not match "
                    "the code:\n" + "\n".join(map(str, findings)), pytrace=False)


def _misspelt(ref: str) -> str:
    """``ref`` with the second-last letter of its last name dropped."""
    if "::" in ref:
        path, _, name = ref.partition("::")
        return f"{path}::{name[:-2]}{name[-1]}"
    if "/" in ref:
        head, _, last = ref.rpartition("/")
        stem, _, ext = last.rpartition(".")
        return f"{head}/{stem[:-2]}{stem[-1]}.{ext}"
    head, _, last = ref.rpartition(".")
    return f"{head}.{last[:-2]}{last[-1]}"


def _first_reference(index: CodeIndex, pattern: str, ours: bool) -> tuple[Path, int, str]:
    """The first backticked text on a page matching ``pattern`` that the rules check and
    find (in our code when ``ours``), and whose misspelling they report."""
    for page in PAGES:
        for lineno, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            for m in re.finditer(r"`([^`]+)`", line):
                text = m.group(1)
                if not re.fullmatch(pattern, text) or coderefs._check(index, text):
                    continue
                got = coderefs._name(index, text.split("."), False) if ours else (True, [])
                if (got and all(q.split(".")[0] in OURS for q in got[1])
                        and coderefs._check(index, _misspelt(text))):
                    return page, lineno, text
    raise AssertionError(f"no checked reference like {pattern!r} on any page")


@pytest.mark.parametrize(("pattern", "ours"), [
    (r"[A-Z]\w+\.\w+", True),                            # Class.member of ours
    (r"(?!fsdp_ref|indexgen)[a-z_]+\.[A-Za-z_]+", True),  # module.function, short name
    (r"fsdp_ref\.[\w.]+", True),                          # our package
    (r"torch\.[\w.]+", False),                            # torch
    (r"(src|tools|tests|benchmarks)/[\w/]+\.py", False),  # a path
    (r"tests/[\w/]+\.py::\w+", False),                    # a test by its pytest id
], ids=["class-member", "module-short", "package", "torch", "path", "pytest-id"])
def test_a_name_misspelt_on_a_copy_of_a_page_is_reported(index, tmp_path, pattern, ours):
    page, lineno, ref = _first_reference(index, pattern, ours)
    wrong = _misspelt(ref)
    lines = page.read_text(encoding="utf-8").splitlines()
    lines[lineno - 1] = lines[lineno - 1].replace(f"`{ref}`", f"`{wrong}`")
    copy = tmp_path / page.name
    copy.write_text("\n".join(lines) + "\n", encoding="utf-8")
    name = page.relative_to(REPO).as_posix()
    before = coderefs.check_page(index, page)
    after = [f for f in coderefs.check_page(index, copy, name) if f not in before]
    assert [str(f).split(":")[:2] for f in after] == [[name, str(lineno)]], after
    (found,) = after
    assert found.ref == wrong
    assert found.nearest == (ref.partition("::")[2] or ref), str(found)
    assert str(found).startswith(f"{name}:{lineno}: `{wrong}` ")
    assert str(found).endswith(f"nearest existing name: `{found.nearest}`")


def _table_page(tmp_path: Path, rows: list[tuple[str, str]]) -> Path:
    page = tmp_path / "waits.md"
    page.write_text("| # | site | where |\n|---|---|---|\n" + "".join(
        f"| {i} | `{site}` | `{where}` |\n" for i, (site, where) in enumerate(rows, 1)))
    return page


def _display(qual: str) -> str:
    return ".".join(qual.split(".")[-2:])


def test_a_wait_placed_in_the_wrong_function_is_reported(index, tmp_path):
    """The streams table's kind of drift: a ``where`` naming a function that exists but
    does not issue the wait. Sites and functions come from the code, so the test follows
    a restructure of ``src/fsdp_ref``."""
    sites = sorted((s, fns[0]) for s, fns in index.waits.items() if len(fns) == 1)
    (site, issuer), (_, other) = sites[0], next(p for p in sites if p[1] != sites[0][1])
    page = _table_page(tmp_path, [(site, _display(issuer)), (site, _display(other))])
    findings = coderefs.check_page(index, page, "waits.md")
    assert [(f.line, f.ref, f.nearest) for f in findings] == [
        (4, _display(other), _display(issuer))], findings
    assert f"`{_display(other)}` does not issue the wait `{site}`" in str(findings[0])
    assert str(findings[0]).startswith("waits.md:4: ")


def test_every_wait_site_of_the_code_in_its_own_function_passes(index, tmp_path):
    rows = [(site, _display(fn)) for site, fns in sorted(index.waits.items()) for fn in fns]
    assert len(rows) >= 10  # the wrappers' calls were found
    assert coderefs.check_page(index, _table_page(tmp_path, rows), "waits.md") == []


def test_a_misspelt_site_is_reported(index, tmp_path):
    site, fns = sorted(index.waits.items())[0]
    page = _table_page(tmp_path, [(site + "s", _display(fns[0]))])
    findings = coderefs.check_page(index, page, "waits.md")
    assert [(f.line, f.ref, f.nearest) for f in findings] == [(3, site + "s", site)]


WRONG = """\
A moved module: `nosuchmodule.fully_shard`.
A misspelt class: `FSDPModul`, and its method: `FSDPModule.unshardd`.
A path: `src/fsdp_ref/fully_shrd.py`, in a command too: `python benchmarks/no_such.py --x`.
A module to run: `python -m fsdp_ref.no_such_tool`. A test: `test_no_such_test_anywhere`.
"""


def test_each_kind_of_wrong_reference_is_reported(index, tmp_path):
    page = tmp_path / "wrong.md"
    page.write_text(WRONG)
    found = [(f.line, f.ref) for f in coderefs.check_page(index, page, "wrong.md")]
    assert found == [(1, "nosuchmodule.fully_shard"), (2, "FSDPModul"),
                     (2, "FSDPModule.unshardd"), (3, "src/fsdp_ref/fully_shrd.py"),
                     (3, "benchmarks/no_such.py"), (4, "fsdp_ref.no_such_tool"),
                     (4, "test_no_such_test_anywhere")]


NOT_REFERENCES = """\
Plain words in backticks: `compute`, `default`, `unshard`, `no_such_word`, `SUM`.
Options and values: `reshard_after_forward=NoSuchValue`, `int k`, `(Shard(0), Bogus())`.
Shell commands: `make no-such-target`, `git frobnicate --all`, `.venv/bin/nosuch build`.
Users' variables: `model.no_such_method()`, `param.no_such_field`, `optim.step()`,
`module._no_such`, `e.kind`. Other libraries: `NF4Tensor.no_such`, `deepspeed.init_x`.
Placeholders and site pages: `ROOT/a/b/name.py`, `pkg/__init__.py`, `api/**`, `OUT/x.json`,
`name.py_docs.md#L42`, `a/b/doc.md`, `/proc/<pid>/task`, `1/N`.

```python
from fsdp_ref.no_such_module import nothing  # see `fsdp_ref.no_such_module`
no_such.thing.here()  # `src/fsdp_ref/no_such.py`
```

    indented text is prose here, and `so_is.this` (no module `so_is`).
"""


def test_what_is_not_a_code_reference_is_not_flagged(index, tmp_path):
    page = tmp_path / "prose.md"
    page.write_text(NOT_REFERENCES)
    assert coderefs.check_page(index, page, "prose.md") == []


def test_the_checker_never_imports_our_code():
    """Run on the whole repository in a fresh interpreter: no module of ours is loaded."""
    code = ("import sys; sys.path.insert(0, 'tools'); from pathlib import Path; "
            "from docs_site import coderefs; coderefs.check_pages(Path('.')); "
            "print([m for m in sys.modules if m.split('.')[0] in ('fsdp_ref', 'indexgen')])")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "[]"
