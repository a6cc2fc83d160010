# The two commands of the README:
#   make demo   — set up everything, build the widget, open JupyterLab on notebook 01
#                 (make demo-headless executes all walkthrough notebooks instead, no browser)
#   make test   — set up everything (incl. Chromium for the browser tests) and run every test
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.dsh-installed

.PHONY: setup widget types demo demo-headless test test-fast lint bench chromium clean

setup: $(STAMP) widget

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -U pip
	cd js && npm install --no-audit --no-fund --silent
	cd js && npm run --silent build
	$(PY) -m pip install -q -e ".[dev]"
	touch $(STAMP)

widget: $(STAMP)
	cd js && (test -d node_modules || npm install --no-audit --no-fund --silent) && npm run --silent build

# js/src/wire.gen.ts: the TypeScript types of the wire, generated from `python -m dsh_notebook schema`
# (committed; `make lint` fails when it differs from a fresh generation)
types: $(STAMP)
	cd js && DSH_PYTHON=$(abspath $(PY)) npm run --silent gen:types

demo: setup
	$(VENV)/bin/jupyter lab notebooks/01-tool-feedback-loop.ipynb

demo-headless: setup
	$(PY) -m dsh_notebook.notebook.walkthrough notebooks notebooks/executed

chromium:
	@command -v chromium >/dev/null 2>&1 || test -x /usr/bin/chromium || \
	  { [ "$$(id -u)" = 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || \
	  echo "chromium not installed: browser tests will be skipped"

lint: setup
	$(VENV)/bin/ruff check dsh_notebook tests
	$(VENV)/bin/mypy
	cd js && npm run --silent typecheck
	cd js && DSH_PYTHON=$(abspath $(PY)) npm run --silent check:types

# The browser tests run in their own pytest process: Playwright's sync API keeps an asyncio loop
# running on the main thread for as long as the browser lives, which async tests must not inherit.
test: setup chromium
	cd js && npm test --silent
	$(PY) -m pytest -q -m "not browser"
	$(PY) -m pytest -q -m browser tests/browser

test-fast: setup
	$(PY) -m pytest -q -m "not kernel and not browser"

bench: setup
	$(PY) -m pip install -q pydantic-ai-slim openai-agents
	for b in tests/benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) js/node_modules dsh_notebook/static notebooks/executed
