# The two commands the README promises: `make run` and `make test`.
# Everything else here is a step of one of them.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The pinned node toolchain (node 22, the conformance suite, the TypeScript client), from package-lock.json.
NPM_STAMP := node_modules/.installed
PG_URL ?= postgres://postgres@127.0.0.1:5432/test

.PHONY: run test lint types pytest pytest-sqlite pytest-postgres install-test matrix conformance chromium mutation bench clean

# The virtualenv is rebuilt whenever pyproject.toml changes, so a fresh clone needs nothing installed by hand.
# pip learned dependency groups (PEP 735) in 25.1, hence the upgrade first.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade 'pip>=25.1'
	$(BIN)/python -m pip install --quiet --editable . --group dev
	touch $(STAMP)

# npm ci wipes node_modules and installs exactly the lockfile; it reruns whenever the lockfile changes.
$(NPM_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $(NPM_STAMP)

# The browser tests (tests/e2e/test_browser.py) drive Debian's chromium through playwright-core, never a
# browser a tool downloads itself; it is installed only when missing.
chromium:
	@if [ ! -x /usr/bin/chromium ]; then \
		apt-get update && apt-get install -y chromium; \
	fi

run: $(STAMP)
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py seed_demo
	$(BIN)/python manage.py runserver 127.0.0.1:8000

test: lint types pytest install-test matrix conformance

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

types: $(STAMP)
	$(BIN)/mypy mcpforms project tests bench noxfile.py

# The suite runs on SQLite always, and again on PostgreSQL when a server answers on 127.0.0.1:5432.
pytest: pytest-sqlite pytest-postgres
	$(BIN)/coverage combine --quiet
	$(BIN)/coverage report

pytest-sqlite: $(STAMP) $(NPM_STAMP) chromium
	rm -f .coverage .coverage.*
	$(BIN)/coverage run --parallel-mode -m pytest -q --ignore=tests/install

pytest-postgres: $(STAMP) $(NPM_STAMP) chromium
	@if $(BIN)/python -c "import socket; socket.create_connection(('127.0.0.1', 5432), 1)" 2>/dev/null; then \
		DATABASE_URL=$(PG_URL) $(BIN)/coverage run --parallel-mode -m pytest -q --ignore=tests/install -m 'not once'; \
	else \
		echo "PostgreSQL is not reachable on 127.0.0.1:5432: skipping the PostgreSQL run."; \
	fi

# The user's path: build the sdist and wheel, install the wheel alone into a fresh virtualenv, and serve a
# tool from a `django-admin startproject` project that took the README's steps (tests/install).
install-test: $(STAMP)
	$(BIN)/python -m pytest -q tests/install

# The suite on every supported Django × Python pair (noxfile.py); a pair whose Python is missing is skipped.
# The two Pythons' halves run side by side (a core each); their logs are printed when both are done.
matrix: $(STAMP) $(NPM_STAMP) chromium
	@mkdir -p .nox
	@$(BIN)/nox -k py312 > .nox/matrix-py312.log 2>&1 & first=$$!; \
	$(BIN)/nox -k py313 > .nox/matrix-py313.log 2>&1; second=$$?; \
	wait $$first; first=$$?; \
	cat .nox/matrix-py312.log .nox/matrix-py313.log; \
	test $$first -eq 0 && test $$second -eq 0

# The official MCP conformance suite, 2026-07-28 requirements, against the fixture server in tests/conformance.
conformance: $(STAMP) $(NPM_STAMP)
	$(BIN)/python -m tests.conformance.run

# Mutation scores of the core modules, each against its own test module (bench/mutation.py lists them).
# Not part of `make test`: it informs and takes minutes. mutmut comes from the `mutation` dependency group,
# which the virtualenv's `dev` install leaves out.
mutation: $(STAMP)
	$(BIN)/python -m pip install --quiet --group mutation
	$(BIN)/python bench/mutation.py

# What a two-round flow costs under gunicorn, as a ratio to a bare Django view, with the optional targets
# (the SDK's MCPServer, django-mcpz in bench/.venvs/mcpz), tools/list at 10 to 1,000 tools and the import
# costs (bench/http_flow.py). Not part of `make test`: it prints a table, asserts nothing, takes minutes.
bench: $(STAMP)
	$(BIN)/python bench/http_flow.py

clean:
	rm -rf $(VENV) .nox node_modules .coverage .coverage.* .mypy_cache .ruff_cache .pytest_cache mutants
