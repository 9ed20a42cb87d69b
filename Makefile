# `make test` and `make serve` work from a fresh clone: each creates .venv first.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
# Re-install only when the project's metadata or pins change.
STAMP := $(VENV)/.errcat-installed

.PHONY: setup test browser nginx serve build lint clean

# Test processes: CI has two cores. A module's tests stay in one process (--dist loadfile), so
# its module-scoped fixtures (a built site, a venv) are made once.
TEST_JOBS ?= 2

setup: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[dev,runtime]'
	touch $(STAMP)

# Quality gates and the drift gate first (a stale runtime/errors.py, an uncatalogued raise or
# an example that does not raise its entry fails fast), then the whole suite.
test: setup browser nginx
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-logo
	$(VENV)/bin/errcat check --examples
	$(PY) -m pytest -n $(TEST_JOBS) --dist loadfile

# Debian's chromium and chromedriver for the real-browser tests: installed when running as
# root and missing; elsewhere (or if apt fails) those tests skip and print why.
browser:
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
		&& ! { command -v chromium && command -v chromedriver; } >/dev/null 2>&1; then \
		echo "installing chromium and chromium-driver for the browser tests"; \
		apt-get install -y --no-install-recommends chromium chromium-driver >/dev/null 2>&1 \
		|| { apt-get update >/dev/null 2>&1 \
		     && apt-get install -y --no-install-recommends chromium chromium-driver >/dev/null 2>&1; } \
		|| echo "could not install chromium; the browser tests will be skipped"; \
	fi

# Debian's nginx for the deployment tests (the server block errcat build writes, run against a
# built site): installed when running as root and missing; elsewhere those tests skip and say why.
nginx:
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
		&& ! { command -v nginx || test -x /usr/sbin/nginx; } >/dev/null 2>&1; then \
		echo "installing nginx for the deployment tests"; \
		apt-get install -y --no-install-recommends nginx >/dev/null 2>&1 \
		|| { apt-get update >/dev/null 2>&1 \
		     && apt-get install -y --no-install-recommends nginx >/dev/null 2>&1; } \
		|| echo "could not install nginx; the nginx deployment tests will be skipped"; \
	fi

# Builds the docs site and JSON API into build/site, then serves them on http://127.0.0.1:8000.
serve: build
	$(VENV)/bin/errcat serve

build: setup
	$(VENV)/bin/errcat build

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-logo

clean:
	rm -rf build .errcat-cache .pytest_cache .mypy_cache .ruff_cache .import_linter_cache
