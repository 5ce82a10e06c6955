# The commands the README promises, `make run` and `make test` (everything CI runs), and `make check`, the
# quick loop while working (docs/internals/contributing.md). Everything else here is a step of one of them.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# What `make run` and `make docs` alone need: the `demo` and `docs` groups, which `dev` (STAMP) includes.
DEMO_STAMP := $(VENV)/.demo-installed
DOCS_STAMP := $(VENV)/.docs-installed
# The pinned node toolchain (node 22, the conformance suite, the TypeScript client), from package-lock.json.
NPM_STAMP := node_modules/.installed
PG_URL ?= postgres://postgres@127.0.0.1:5432/test
# The suite without the install test, which `make install-test` runs on its own.
PYTEST := $(BIN)/python -m pytest -q -p no:cacheprovider --ignore=tests/install
COVERED_PYTEST := $(BIN)/coverage run --parallel-mode -m pytest -q -p no:cacheprovider --ignore=tests/install
# The logs of what runs side by side, printed when it is done.
LOGS := .make

.PHONY: run check quick test suite e2e-lane cpu-lane lint types pytest-sqlite pytest-e2e pytest-postgres \
	pytest-demo install-test matrix conformance docs chromium mutation bench clean

# $(call timed,NAME,TARGET,COMMAND): run COMMAND, then print how long it took against its target, keeping
# COMMAND's exit status: "make test: 12m40s (target 15m)".
timed = start=$$(date +%s); $(3); status=$$?; took=$$(( $$(date +%s) - start )); \
	printf 'make %s: %dm%02ds (target %s)\n' $(1) $$((took / 60)) $$((took % 60)) $(2); exit $$status

# The virtualenv is rebuilt whenever pyproject.toml changes, so a fresh clone needs nothing installed by hand.
# pip learned dependency groups (PEP 735) in 25.1, hence the upgrade first.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade 'pip>=25.1'
	$(BIN)/python -m pip install --quiet --editable . --group dev
	touch $(STAMP) $(DEMO_STAMP) $(DOCS_STAMP)

# $(call group_stamp,GROUP): the virtualenv with the package and one dependency group, for a command that
# needs no more (a whole `dev` install, when there is one, has it already).
group_stamp = $(PYTHON) -m venv $(VENV) && \
	$(BIN)/python -m pip install --quiet --upgrade 'pip>=25.1' && \
	$(BIN)/python -m pip install --quiet --editable . --group $(1) && touch $@

$(DEMO_STAMP): pyproject.toml
	$(call group_stamp,demo)

$(DOCS_STAMP): pyproject.toml
	$(call group_stamp,docs)

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

# The demo, and beside it a worker of Django's tasks framework (django-tasks-db's `db_worker`), which runs
# what a client's tasks leave to the background. Both run in the background of one shell that waits for
# the server: whichever way it ends (Ctrl-C, a kill of make, a server that cannot start), the trap stops
# the other, and the recipe ends with the server's status. (An asynchronous command of a shell without
# job control ignores Ctrl-C's SIGINT, so the trap forwards it.)
RUN_ADDRESS ?= 127.0.0.1:8000
run: $(DEMO_STAMP)
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py seed_demo
	@trap 'kill $$server $$worker 2>/dev/null' INT TERM HUP; \
	$(BIN)/python manage.py db_worker & worker=$$!; \
	$(BIN)/python manage.py runserver $(RUN_ADDRESS) & server=$$!; \
	wait $$server; status=$$?; \
	kill $$worker 2>/dev/null; wait; exit $$status

# The quick loop: lint, types, and the suite without its end-to-end tests, on two workers, stopping at
# the first failure; the examples of one docs page share a namespace, so they stay on one worker, in
# order (loadscope: a module's tests, a class's, a page's examples go to one worker). `make test` runs
# everything else.
check: $(STAMP)
	@$(call timed,check,1m,$(MAKE) --no-print-directory lint types quick)

quick: $(STAMP)
	$(PYTEST) -x -m "not e2e" -n 2 --dist loadscope

test: $(STAMP) $(NPM_STAMP) chromium
	@$(call timed,test,15m,$(MAKE) --no-print-directory lint types suite)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

types: $(STAMP)
	$(BIN)/mypy mcpforms project tests bench docs noxfile.py

# Everything but lint and types, in two lanes side by side, a core each: the end-to-end lane mostly waits
# on servers, browsers and clients, the other is all CPU. The end-to-end lane's log is printed when both
# are done; then the coverage of the package's passes, combined.
suite: $(STAMP) $(NPM_STAMP) chromium
	@rm -f .coverage .coverage.*
	@mkdir -p $(LOGS)
	@$(MAKE) --no-print-directory e2e-lane > $(LOGS)/e2e-lane.log 2>&1 & lane=$$!; \
	$(MAKE) --no-print-directory cpu-lane; cpu=$$?; \
	wait $$lane; e2e=$$?; \
	cat $(LOGS)/e2e-lane.log; \
	test $$cpu -eq 0 && test $$e2e -eq 0
	$(BIN)/coverage combine --quiet
	$(BIN)/coverage report

# The docs build (under half a minute) runs in the end-to-end lane, which mostly waits on servers and
# browsers, rather than lengthen the CPU lane.
e2e-lane: pytest-e2e pytest-demo conformance docs

cpu-lane: pytest-sqlite pytest-postgres install-test matrix

# The package's suite on SQLite, and again on PostgreSQL when a server answers on 127.0.0.1:5432. The
# end-to-end tests run once, on SQLite: each starts the servers and databases it needs (PostgreSQL ones
# included) whatever the suite's own database is.
pytest-sqlite: $(STAMP)
	$(COVERED_PYTEST) -m "not e2e"

pytest-e2e: $(STAMP) $(NPM_STAMP) chromium
	$(COVERED_PYTEST) -m e2e

pytest-postgres: $(STAMP)
	@if $(BIN)/python -c "import socket; socket.create_connection(('127.0.0.1', 5432), 1)" 2>/dev/null; then \
		DATABASE_URL=$(PG_URL) $(COVERED_PYTEST) -m "not e2e"; \
	else \
		echo "PostgreSQL is not reachable on 127.0.0.1:5432: skipping the PostgreSQL run."; \
	fi

# The demo's own tests (project/tests), on the demo's settings: its home page, `make run`'s steps, and its
# tools in a browser and real clients. The package's coverage does not count them.
pytest-demo: $(STAMP) $(NPM_STAMP) chromium
	$(BIN)/python -m pytest -q -p no:cacheprovider project/tests --ds=project.tests.settings

# The user's path: build the sdist and wheel, install the wheel alone into a fresh virtualenv, and serve a
# tool from a `django-admin startproject` project that took docs/tutorials/your-project.md's steps
# (tests/install).
install-test: $(STAMP)
	$(BIN)/python -m pytest -q tests/install

# The suite but its end-to-end tests on every supported Django × Python pair (noxfile.py); a pair whose
# Python is missing is skipped. The two Pythons' halves run side by side; their logs are printed when both
# are done.
matrix: $(STAMP)
	@mkdir -p .nox
	@$(BIN)/nox -k py312 > .nox/matrix-py312.log 2>&1 & first=$$!; \
	$(BIN)/nox -k py313 > .nox/matrix-py313.log 2>&1; second=$$?; \
	wait $$first; first=$$?; \
	cat .nox/matrix-py312.log .nox/matrix-py313.log; \
	test $$first -eq 0 && test $$second -eq 0

# The documentation site (docs/, Sphinx with MyST): warnings are errors, an unresolved reference is a
# warning (-n), and every page is read again each time (-E), so a warning of an unchanged page is not
# hidden by the last build. Offline: intersphinx reads the committed inventories (docs/_inventories).
# The site's links and pages in Chromium: tests/e2e/test_docs_site.py; its examples: docs/conftest.py.
docs: $(DOCS_STAMP)
	$(BIN)/sphinx-build -W --keep-going -n -E -q -b html docs docs/_build/html

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
	rm -rf $(VENV) .nox $(LOGS) node_modules .coverage .coverage.* .mypy_cache .ruff_cache .pytest_cache mutants \
		docs/_build
