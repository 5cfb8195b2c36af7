# Two commands set everything up on a fresh machine:
#   make demo   build .venv, install, run the offline eSpeak duel over the corpus
#   make test   build .venv, install with the test extras, run the whole test suite
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

DEMO_EXTRAS := probes
TEST_EXTRAS := probes,classifiers,whisper,dask,dev

.PHONY: demo test lint bench venv clean

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

venv: $(VENV)/.stamp-test

demo: $(VENV)/.stamp-demo
	$(VENV)/bin/vocencebench demo

test: $(VENV)/.stamp-test
	$(PY) -m pytest -q

lint: $(VENV)/.stamp-test
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/mypy src

bench: $(VENV)/.stamp-test
	@for f in benchmarks/bench_*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache runs
