"""Tests for indexgen.run.config: reading [tool.indexgen] and validating roots."""

from __future__ import annotations

import pytest
from indexgen.errors import ConfigError
from indexgen.run.config import Config, find_pyproject, load_config, validate


def test_reads_table_found_by_walking_up(sample):
    deep = sample / "src" / "shop" / "payments"
    assert find_pyproject(deep) == sample / "pyproject.toml"
    config = load_config(deep)
    assert config.roots == [sample / "src"]
    assert config.out == sample / "docs" / "reference"
    assert config.tests == [sample / "tests"]  # default: ./tests when it exists
    assert config.base == sample


def test_missing_table_and_bad_values(tmp_path):
    with pytest.raises(ConfigError, match="no pyproject.toml"):
        load_config(tmp_path)  # tmp dirs have no pyproject above them
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    with pytest.raises(ConfigError, match=r"no \[tool.indexgen\]"):
        load_config(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.indexgen]\nroots = "src"\nout = "o"\n')
    with pytest.raises(ConfigError, match="roots must be"):
        load_config(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.indexgen]\nroots = ["s"]\nout = "o"\n'
                                             "max-bytes = -1\n")
    with pytest.raises(ConfigError, match="max-bytes"):
        load_config(tmp_path)


def test_validate(tmp_path):
    (tmp_path / "a" / "src").mkdir(parents=True)
    (tmp_path / "b" / "src").mkdir(parents=True)
    with pytest.raises(ConfigError, match="distinct"):
        validate(Config([tmp_path / "a/src", tmp_path / "b/src"], tmp_path / "out"))
    with pytest.raises(ConfigError, match="not a folder"):
        validate(Config([tmp_path / "nope"], tmp_path / "out"))
    with pytest.raises(ConfigError, match="contains the source root .*choose a folder"):
        validate(Config([tmp_path / "a/src"], tmp_path / "a"))


def test_an_unknown_key_is_named_with_the_nearest_one(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.indexgen]\nroot = ["src"]\nout = "o"\n')
    with pytest.raises(ConfigError, match=r"no key 'root'; did you mean 'roots'\?"):
        load_config(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.indexgen]\nroots = ["src"]\nout = "o"\n'
                                             'skip = ["x"]\n')
    with pytest.raises(ConfigError, match=r"no key 'skip' \(its keys: roots, out, tests, "
                                          r"exclude,"):
        load_config(tmp_path)


def test_exclude_is_a_list_of_patterns(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.indexgen]\nroots = ["src"]\nout = "o"\n'
                                             'exclude = ["tests", "*_pb2.py"]\n')
    assert load_config(tmp_path).exclude == ["tests", "*_pb2.py"]
    (tmp_path / "pyproject.toml").write_text('[tool.indexgen]\nroots = ["src"]\nout = "o"\n'
                                             'exclude = "tests"\n')
    with pytest.raises(ConfigError, match="exclude must be a list of patterns"):
        load_config(tmp_path)


@pytest.mark.parametrize("path, patterns, left_out", [
    ("src/pkg/tests", ["tests"], True),  # a name: at any depth
    ("src/pkg/tests_util.py", ["tests"], False),
    ("src/pkg/api_pb2.py", ["*_pb2.py"], True),
    ("src/pkg/_vendor", ["src/pkg/_vendor"], True),  # a path: that folder
    ("src/pkg/_vendor", ["./src/pkg/_vendor/"], True),  # written as a user may
    ("src/other/_vendor", ["src/pkg/_vendor"], False),
    ("src/pkg/core.py", [], False),
])
def test_a_pattern_is_matched_from_the_right_end_of_the_path(path, patterns, left_out):
    from indexgen.extract.discover import excluded
    assert excluded(path, patterns) is left_out


@pytest.mark.parametrize("pattern", ["/abs/src/pkg", "../other", "src\\pkg", "~/x"])
def test_an_exclude_pattern_that_fits_no_relative_path_is_refused(tmp_path, pattern):
    (tmp_path / "src").mkdir()
    with pytest.raises(ConfigError, match="fits no path: patterns are written relative to"):
        validate(Config([tmp_path / "src"], tmp_path / "out", base=tmp_path, exclude=[pattern]))
