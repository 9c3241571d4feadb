"""Tests for indexgen.run.config: reading [tool.indexgen] and validating roots."""

from __future__ import annotations

import pytest
from indexgen.errors import ConfigError
from indexgen.run.config import (
    Config,
    check_jobs,
    check_limits,
    find_pyproject,
    load_config,
    validate,
)


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


# The analysis limits: one rule for [tool.indexgen], the command line and the mkdocs plugin.
BYTES = "must be a whole number of bytes, 1 or more, not {} (e.g. {}, the default)"
SECONDS = "must be a number of seconds, 0 or more (0: no limit), not {} (e.g. {}, the default)"


@pytest.mark.parametrize("toml, shown", [
    ("0", "0"), ("-1", "-1"), ("true", "true"),  # true was once taken for 1
    ("1.5", "1.5"), ('"big"', '"big"'), ("2e6", "2000000.0"),
])
def test_max_bytes_in_pyproject(tmp_path, toml, shown):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(f'[tool.indexgen]\nroots = ["s"]\nout = "o"\nmax-bytes = {toml}\n')
    with pytest.raises(ConfigError) as exc:
        load_config(tmp_path)
    assert str(exc.value) == (f"{pyproject}: [tool.indexgen] max-bytes "
                              + BYTES.format(shown, "max-bytes = 2000000"))


@pytest.mark.parametrize("toml, shown", [
    ("-1", "-1"), ("-0.5", "-0.5"), ("true", "true"), ('"20"', '"20"'),
    ("nan", "nan"), ("inf", "inf"),  # nan and inf were once taken, then crashed the build
])
def test_time_budget_in_pyproject(tmp_path, toml, shown):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(f'[tool.indexgen]\nroots = ["s"]\nout = "o"\ntime-budget = {toml}\n')
    with pytest.raises(ConfigError) as exc:
        load_config(tmp_path)
    assert str(exc.value) == (f"{pyproject}: [tool.indexgen] time-budget "
                              + SECONDS.format(shown, "time-budget = 20"))


def test_the_least_valid_limits_and_the_defaults(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.indexgen]\nroots = ["s"]\nout = "o"\n')
    config = load_config(tmp_path)
    assert (config.max_bytes, config.time_budget) == (2_000_000, 20.0)
    pyproject.write_text('[tool.indexgen]\nroots = ["s"]\nout = "o"\nmax-bytes = 1\n'
                         "time-budget = 0\n")
    config = load_config(tmp_path)
    assert (config.max_bytes, config.time_budget) == (1, 0.0)
    assert isinstance(config.time_budget, float)
    pyproject.write_text('[tool.indexgen]\nroots = ["s"]\nout = "o"\ntime-budget = 0.25\n')
    assert load_config(tmp_path).time_budget == 0.25


@pytest.mark.parametrize("source, name, example", [
    ("pyproject", "jobs", "jobs = 0"),
    ("command line", "--jobs", "--jobs 0"),
    ("plugin", "jobs", "jobs: 0"),
])
def test_one_rule_for_the_workers_of_every_source(source, name, example):
    assert check_jobs(source, "here") is None  # not set
    assert [check_jobs(source, "here", n) for n in (0, 1, 16)] == [0, 1, 16]
    for bad, shown in ((-1, "-1"), (True, "true"), (2.0, "2.0"), ("4", '"4"')):
        with pytest.raises(ConfigError) as exc:
            check_jobs(source, "here", bad)
        assert str(exc.value) == (f"here {name} must be a whole number of worker processes, 0 "
                                  f"or more (0: one per CPU), not {shown} (e.g. {example}, the "
                                  "default)")


@pytest.mark.parametrize("bad", ["-1", "true", "1.5"])
def test_jobs_in_pyproject(tmp_path, bad):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(f'[tool.indexgen]\nroots = ["s"]\nout = "o"\njobs = {bad}\n')
    with pytest.raises(ConfigError) as exc:  # true was once taken for 1 worker
        load_config(tmp_path)
    assert str(exc.value).startswith(f"{pyproject}: [tool.indexgen] jobs must be a whole number")
    pyproject.write_text('[tool.indexgen]\nroots = ["s"]\nout = "o"\njobs = 3\n')
    assert load_config(tmp_path).jobs == 3


@pytest.mark.parametrize("source, size, time, example", [
    ("pyproject", "max-bytes", "time-budget", "{} = {}"),
    ("command line", "--max-bytes", "--time-budget", "{} {}"),
    ("plugin", "max_bytes", "time_budget", "{}: {}"),
])
def test_one_rule_for_every_source(source, size, time, example):
    assert check_limits(source, "here") == (None, None)  # not set
    assert check_limits(source, "here", 1, 0) == (1, 0.0)
    for bad, shown in ((0, "0"), (-5, "-5"), (True, "true"), (False, "false"), (3.0, "3.0"),
                       ("10", '"10"')):
        with pytest.raises(ConfigError) as exc:
            check_limits(source, "here", max_bytes=bad)
        assert str(exc.value) == (f"here {size} "
                                  + BYTES.format(shown, example.format(size, 2000000)))
    for bad, shown in ((-1, "-1"), (-0.001, "-0.001"), (True, "true"), (float("nan"), "nan"),
                       (float("-inf"), "-inf"), (float("inf"), "inf"), ("0", '"0"')):
        with pytest.raises(ConfigError) as exc:
            check_limits(source, "here", 100, bad)
        assert str(exc.value) == (f"here {time} "
                                  + SECONDS.format(shown, example.format(time, 20)))


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
