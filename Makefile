# fsdp-ref developer entry points. Everything installs into .venv from nothing but Python.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: install test lint demo docs docs-check bench bench-overhead clean

$(STAMP): pyproject.toml tools/pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# The CPU wheel of torch lies on local disk; this exact spelling takes it.
	$(PY) -m pip install --quiet torch==2.13.0
	# indexgen is a distribution of its own (tools/pyproject.toml) that fsdp-ref depends on;
	# it is not on the package index, so it goes first. An fsdp-ref installed before the two
	# were split owns the `indexgen` script: removed first, so that replacing it later does
	# not delete the script indexgen-pages installs.
	$(PY) -m pip uninstall --quiet --yes fsdp-ref
	$(PY) -m pip install --quiet -e ./tools
	$(PY) -m pip install --quiet -e '.[test,docs]'
	# tests/frameworks: torchtune and torchtitan without their pins (what they import is in
	# the test extra); neither may touch torch.
	$(PY) -m pip install --quiet --no-deps torchtune==0.6.1 torchtitan==0.3.0
	touch $(STAMP)

install: $(STAMP)

lint: $(STAMP)
	$(PY) -m ruff check src tools tests benchmarks

# lint, generated docs in sync + strict site build (docs-check), then every test. The
# docs tests read the site docs-check just built instead of building it a second time.
test: $(STAMP) lint docs-check
	FSDP_REF_DOCS_SITE=$(CURDIR)/site $(PY) -m pytest -q

demo: $(STAMP)
	$(VENV)/bin/torchrun --standalone --nproc_per_node 2 -m fsdp_ref.examples.demo

# Serve the documentation site locally with live reload (http://127.0.0.1:8000).
docs: $(STAMP)
	$(PY) -m mkdocs serve

# What CI checks for the docs: stale generated reference pages fail `indexgen check`;
# a broken link or anchor, a missing page or a docstring griffe cannot parse fails the
# strict build.
docs-check: $(STAMP)
	$(PY) -m indexgen check
	$(PY) -m mkdocs build --strict -d site

bench: $(STAMP)
	$(VENV)/bin/torchrun --standalone --nproc_per_node 2 benchmarks/compare.py

# Host overhead per fully_shard group per step, by phase (fake process group, one process),
# then a py-spy profile of one 48-group step per implementation (issue 12). Writes
# benchmarks/results/overhead*.json and docs/assets/overhead*.svg.
BENCH_STAMP := $(VENV)/.bench-stamp
$(BENCH_STAMP): pyproject.toml $(STAMP)
	$(PY) -m pip install --quiet -e '.[bench]'
	touch $(BENCH_STAMP)

bench-overhead: $(BENCH_STAMP)
	$(PY) benchmarks/overhead.py
	$(PY) benchmarks/overhead_profile.py

clean:
	rm -rf $(VENV) site .pytest_cache
