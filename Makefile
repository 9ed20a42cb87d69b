# `make test` and `make serve` work from a fresh clone: each creates .venv first.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
# Re-install only when the project's metadata or pins change.
STAMP := $(VENV)/.errcat-installed

.PHONY: setup test serve build lint clean

setup: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[dev,runtime]'
	touch $(STAMP)

# The drift gate first: a stale runtime/errors.py, an uncatalogued raise or an example that
# does not raise its entry fails fast.
test: setup
	$(VENV)/bin/errcat check --examples
	$(PY) -m pytest

# Builds the docs site and JSON API into build/site, then serves them on http://127.0.0.1:8000.
serve: build
	$(VENV)/bin/errcat serve

build: setup
	$(VENV)/bin/errcat build

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

clean:
	rm -rf build .errcat-cache .pytest_cache .mypy_cache .ruff_cache
