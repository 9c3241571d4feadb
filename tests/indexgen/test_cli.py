"""Tests for indexgen.run.cli: commands, exit codes, quiet mode, ``python -m indexgen``."""

from __future__ import annotations

import os
import struct
import subprocess
import sys

import pytest
from indexgen.run.cli import EXIT_DRIFT, EXIT_ERROR, EXIT_OK, main


def test_build_then_check_from_pyproject(sample, monkeypatch, capsys):
    monkeypatch.chdir(sample / "src")
    assert main(["build", "-j", "1"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "7 files" in out and "pages written" in out
    assert (sample / "docs/reference/shop/cart.py_docs.md").is_file()
    assert main(["check", "-q"]) == EXIT_OK
    assert capsys.readouterr().out == ""


def test_check_lists_drift_and_exits_1(sample, monkeypatch, capsys):
    monkeypatch.chdir(sample)
    main(["build", "-q", "-j", "1"])
    (sample / "docs/reference/shop/cart.py_kw.md").unlink()
    page = sample / "docs/reference/shop/inventory.py_docs.md"
    page.write_text(page.read_text() + "edit\n")
    assert main(["check"]) == EXIT_DRIFT
    out = capsys.readouterr().out.splitlines()
    assert "missing: shop/cart.py_kw.md" in out
    assert "stale: shop/inventory.py_docs.md" in out
    assert any("`indexgen build` with the same settings writes them" in x for x in out)


def test_excluded_files_and_folders_get_no_pages(sample, monkeypatch, capsys):
    monkeypatch.chdir(sample)
    pyproject = sample / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + 'exclude = ["src/shop/payments"]\n')
    assert main(["build", "-q", "-j", "1"]) == EXIT_OK
    pages = sample / "docs/reference/shop"
    assert (pages / "cart.py_docs.md").is_file()
    assert not (pages / "payments").exists()  # the folder and all it holds
    # --exclude adds a pattern: a name fits at any depth; the pages it leaves out go
    assert main(["build", "-q", "-j", "1", "--exclude", "ledger.py"]) == EXIT_OK
    assert not (pages / "ledger.py_docs.md").exists()
    assert (pages / "cart.py_docs.md").is_file()
    assert main(["check", "-q", "--exclude", "ledger.py"]) == EXIT_OK
    assert main(["check", "-q"]) == EXIT_DRIFT  # without it, ledger.py's pages are missing
    assert "missing: shop/ledger.py_docs.md" in capsys.readouterr().out


def test_explicit_root_and_out(sample, tmp_path, capsys):
    out = tmp_path / "pages"
    code = main(["build", str(sample / "src"), "--out", str(out), "--tests",
                 str(sample / "tests"), "-q"])
    assert code == EXIT_OK and capsys.readouterr().out == ""
    assert (out / "shop/index.md").is_file()
    assert main(["check", str(sample / "src"), "--out", str(out), "--tests",
                 str(sample / "tests")]) == EXIT_OK


def test_explicit_root_takes_tests_beside_it_as_the_guide_says(tmp_path, monkeypatch):
    # "the command line takes tests/ when it exists": with SRC_ROOT it took none, and every
    # page said "No test folders are configured"; --tests still chooses.
    (tmp_path / "src/pkg").mkdir(parents=True)
    (tmp_path / "src/pkg/__init__.py").write_text("def f():\n    return 1\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/test_f.py").write_text("from pkg import f\n\ndef test_f():\n"
                                              "    assert f() == 1\n")
    (tmp_path / "other").mkdir()
    monkeypatch.chdir(tmp_path)
    assert main(["build", "src", "--out", "out", "-q", "-j", "1"]) == EXIT_OK
    page = (tmp_path / "out/pkg/__init__.py_docs.md").read_text()
    assert "tests/test_f.py" in page and "No test folders" not in page
    assert main(["build", "src", "--out", "out2", "--tests", "other", "-q", "-j", "1"]) == 0
    page = (tmp_path / "out2/pkg/__init__.py_docs.md").read_text()
    assert "tests/test_f.py" not in page


def test_errors_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["build", str(tmp_path)]) == EXIT_ERROR
    assert "--out is required" in capsys.readouterr().err
    assert main(["check"]) == EXIT_ERROR
    assert "no pyproject.toml" in capsys.readouterr().err
    assert main(["build", str(tmp_path / "missing"), "--out", str(tmp_path / "o")]) == EXIT_ERROR


def test_help_documents_exit_codes(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["check", "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert "exit status" in text and "stale, missing or orphaned" in text
    # every key [tool.indexgen] accepts is named (the list once left exclude out)
    listed = text.split("[tool.indexgen] in the nearest pyproject.toml", 1)[1].split(")", 1)[0]
    for key in ("roots", "out", "tests", "exclude", "max-bytes", "time-budget", "jobs"):
        assert key in listed, key


def test_python_dash_m(sample):
    result = subprocess.run([sys.executable, "-m", "indexgen", "build", "src", "--out", "out",
                             "-q", "-j", "1"], cwd=sample, capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "" and result.stderr == ""  # no progress bar without a TTY
    assert (sample / "out/shop/cart.py_kw.md").is_file()


def test_output_path_that_is_a_file_exits_2(sample, tmp_path, capsys):
    blocker = tmp_path / "blocker"
    blocker.write_text("not a folder\n")
    code = main(["build", str(sample / "src"), "--out", str(blocker / "out"), "-j", "1"])
    assert code == EXIT_ERROR
    assert "indexgen: error:" in capsys.readouterr().err


def test_progress_bar_only_on_a_terminal(tmp_path):
    pty = pytest.importorskip("pty")

    src = tmp_path / "src" / "many"
    src.mkdir(parents=True)
    for i in range(60):
        (src / f"m{i:02}.py").write_text(f'"""Module {i}."""\nX = {i}\n')
    args = [sys.executable, "-m", "indexgen", "build", str(tmp_path / "src"), "--out",
            str(tmp_path / "out"), "-j", "1"]
    primary, secondary = pty.openpty()
    fcntl = pytest.importorskip("fcntl")
    termios = pytest.importorskip("termios")
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    try:
        result = subprocess.run(args, stderr=secondary, capture_output=False,
                                stdout=subprocess.PIPE, text=True, check=False)
        os.close(secondary)
        seen = b""
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(primary)
    assert result.returncode == 0
    text = seen.decode(errors="replace")
    assert "extract" in text and "60/60" in text and "render" in text
    # Without a terminal (a pipe), nothing but the summary line.
    again = subprocess.run([*args[:-2], "-j", "1"], capture_output=True, text=True, check=False)
    assert again.stderr == ""


def test_summary_counts_files_not_analyzed(tmp_path, capsys):
    src = tmp_path / "src" / "odd"
    src.mkdir(parents=True)
    (src / "__init__.py").write_text("")
    (src / "good.py").write_text('"""Fine."""\n')
    (src / "broken.py").write_text("def f(:\n")
    (src / "binary.py").write_bytes(b"x = '\xff'\n")
    (src / "big.py").write_text("x = 1\n" * 40)
    code = main(["build", str(tmp_path / "src"), "--out", str(tmp_path / "out"), "-j", "1",
                 "--max-bytes", "100"])
    assert code == EXIT_OK  # pages were written; they say why a file was not analyzed
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("indexgen: 5 files: 1 analyzed, 1 empty, 3 not analyzed "
                             "(1 does not parse, 1 not decodable, 1 too large); ")
    assert "not analyzed: src/odd/big.py: 240 bytes exceeds the 100-byte limit" in out
    assert any(line.startswith("not analyzed: src/odd/broken.py: does not parse") for line in out)
    main(["check", str(tmp_path / "src"), "--out", str(tmp_path / "out"), "--max-bytes", "100"])
    assert "3 not analyzed" in capsys.readouterr().out


def test_one_page_is_one_page(tmp_path, capsys):
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.py").write_text("x = 1\n")
    main(["build", str(src), "--out", str(tmp_path / "out"), "-j", "1"])
    (tmp_path / "out" / "a.py_kw.md").unlink()
    main(["build", str(src), "--out", str(tmp_path / "out"), "-j", "1"])
    last = capsys.readouterr().out.splitlines()[-1]
    assert "; 1 page written," in last, last


_BYTES = "a whole number of bytes, 1 or more, not {} (e.g. --max-bytes 2000000, the default)"
_SECONDS = ("a number of seconds, 0 or more (0: no limit), not {} (e.g. --time-budget 20, "
            "the default)")


@pytest.mark.parametrize("option, value, valid", [
    ("--max-bytes", "0", _BYTES.format(0)),  # --max-bytes was once not checked at all
    ("--max-bytes", "-1", _BYTES.format(-1)),
    ("--time-budget", "-1", _SECONDS.format(-1.0)),
    ("--time-budget", "nan", _SECONDS.format("nan")),  # once a traceback
    ("--time-budget", "inf", _SECONDS.format("inf")),  # once a traceback
    ("--jobs", "-1", "a whole number of worker processes, 0 or more (0: one per CPU), not -1 "
                     "(e.g. --jobs 0, the default)"),  # once taken as one per CPU
])
def test_a_bad_analysis_limit_is_a_usage_error(tmp_path, capsys, option, value, valid):
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.py").write_text("x = 1\n")
    for command in ("build", "check"):
        code = main([command, str(src), "--out", str(tmp_path / "o"), "-q", option, value])
        err = capsys.readouterr().err
        assert code == EXIT_ERROR, (command, err)
        assert err == f"indexgen: error: command-line option {option} must be {valid}\n"
    assert not (tmp_path / "o").exists()


def test_the_command_line_limits_are_checked_before_the_pyproject(sample, monkeypatch, capsys):
    monkeypatch.chdir(sample)
    assert main(["build", "-q", "-j", "1", "--max-bytes", "0"]) == EXIT_ERROR
    assert "command-line option --max-bytes must be" in capsys.readouterr().err
    assert not (sample / "docs" / "reference").exists()
    # the smallest valid values are taken
    assert main(["build", "-q", "-j", "1", "--max-bytes", "1", "--time-budget", "0"]) == EXIT_OK
    assert "Not analyzed" in (sample / "docs/reference/shop/cart.py_docs.md").read_text()
