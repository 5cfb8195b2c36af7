# Two commands set everything up on a fresh machine:
#   make demo   build .venv, install, run the offline eSpeak duel over the corpus
#   make test   build .venv, install with the test extras, run the whole test suite
# and, for the developer loop, make test-fast: the same suite without the tests marked slow.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

DEMO_EXTRAS := probes
TEST_EXTRAS := probes,classifiers,whisper,whisper-offline,dask,neural,dev

.PHONY: demo test test-fast lint bench venv clean

# Reference source trees for the parity tests (tests/reference-sources.txt): wheels pinned by
# hash, downloaded without dependencies and unpacked, never installed into the venv.
REFERENCE := $(abspath $(VENV))/reference

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

# Stamps make installs idempotent: they re-run only when pyproject.toml changes.
$(VENV)/.stamp-demo: pyproject.toml | $(PY)
	$(PIP) install -q -e ".[$(DEMO_EXTRAS)]"
	touch $@

$(VENV)/.stamp-test: pyproject.toml | $(PY)
	$(PIP) install -q -e ".[$(TEST_EXTRAS)]"
	touch $@ $(VENV)/.stamp-demo

$(VENV)/.stamp-reference: tests/reference-sources.txt | $(PY)
	rm -rf $(REFERENCE) && mkdir -p $(REFERENCE)/wheels
	$(PIP) download -q --no-deps --only-binary :all: --require-hashes \
		-r tests/reference-sources.txt -d $(REFERENCE)/wheels
	$(PY) -m zipfile -e $(REFERENCE)/wheels/speechbrain-1.1.2-py3-none-any.whl \
		$(REFERENCE)/speechbrain
	touch $@

venv: $(VENV)/.stamp-test

demo: $(VENV)/.stamp-demo
	$(VENV)/bin/vocencebench demo

# The suite runs on one pytest-xdist worker per CPU this process may use (-n auto, from
# sched_getaffinity): it waits on subprocesses, servers and Chromium much of the time, so two
# workers on two cores take it from 12.4 to about 8 minutes (docs/performance.md). The tests
# marked `signals` (a real run interrupted or killed, then waited for) run afterwards on their
# own, serially: what they wait for is timed by the scheduler, and beside a second worker it
# competes for the CPU.
PYTEST := VOCENCE_SPEECHBRAIN_SRC=$(REFERENCE)/speechbrain/speechbrain $(PY) -m pytest -q

test: $(VENV)/.stamp-test $(VENV)/.stamp-reference
	$(PYTEST) -n auto -m "not signals"
	$(PYTEST) -m signals

# Everything but @pytest.mark.slow (end-to-end runs, real-speech sets, subprocess kills).
test-fast: $(VENV)/.stamp-test $(VENV)/.stamp-reference
	$(PYTEST) -n auto -m "not slow and not signals"
	$(PYTEST) -m "signals and not slow"

lint: $(VENV)/.stamp-test
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/mypy src
	$(VENV)/bin/lint-imports --no-cache

bench: $(VENV)/.stamp-test
	@for f in benchmarks/bench_*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache runs
