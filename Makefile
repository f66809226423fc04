# Set-up is part of every target: a fresh clone needs only `make demo` or `make test`.
VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python
# The CPU build of PyTorch, installed first so that the package's own `torch` range is
# already satisfied (an unpinned torch would pull a multi-GB CUDA build). Override it
# elsewhere, e.g. `make test TORCH_SPEC="torch --index-url https://download.pytorch.org/whl/cpu"`.
TORCH_SPEC ?= torch==2.13.0
PYTEST_ARGS ?=

.PHONY: install demo test lint docs benchmarks benchmarks-full clean

# PIP_CONSTRAINT (read by pip from the environment) pins versions, e.g. the oldest supported
# ones: `PIP_CONSTRAINT=$PWD/ci/min-constraints.txt make test VENV=.venv-min` (see .ci/run).
$(VENV)/.installed: pyproject.toml $(PIP_CONSTRAINT)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet $(TORCH_SPEC)
	$(PY) -m pip install --quiet -e ".[dev,docs]"
	touch $@

install: $(VENV)/.installed

demo: install
	OMP_NUM_THREADS=1 $(PY) examples/plot_quickstart.py

# One torch thread per process: pytest's two workers already fill two cores, and tiny nets
# slow down badly when torch's threads fight over them.
test: install
	OMP_NUM_THREADS=1 $(PY) -m pytest -n 2 --doctest-modules levy_sklearn tests $(PYTEST_ARGS)

lint: install
	$(VENV)/bin/ruff check levy_sklearn tests benchmarks examples
	$(VENV)/bin/ruff format --check levy_sklearn tests benchmarks examples

docs: install
	OMP_NUM_THREADS=1 $(VENV)/bin/sphinx-build -W --keep-going -b html docs docs/_build/html

# Fast benchmarks (about 10 minutes): overhead ratios, the claims table in fast mode, claim (4).
benchmarks: install
	$(PY) benchmarks/overhead.py
	OMP_NUM_THREADS=1 $(PY) benchmarks/claims.py --fast
	OMP_NUM_THREADS=1 $(PY) benchmarks/clinical.py

# The longer scripts (about an hour on 2 cores). The others, run by hand or in the peers
# environment, are listed in benchmarks/README.md.
benchmarks-full: benchmarks
	OMP_NUM_THREADS=1 $(PY) benchmarks/claims.py --full --workers 2
	OMP_NUM_THREADS=1 $(PY) benchmarks/claims_resolution.py
	OMP_NUM_THREADS=1 $(PY) benchmarks/regressor_defaults.py
	OMP_NUM_THREADS=1 $(PY) benchmarks/forecaster_airline.py
	OMP_NUM_THREADS=1 $(PY) benchmarks/memory.py
	OMP_NUM_THREADS=1 $(PY) benchmarks/serialization.py
	$(PY) benchmarks/scaleout.py
	OMP_NUM_THREADS=1 $(PY) benchmarks/sigma_missing.py
	OMP_NUM_THREADS=1 $(PY) benchmarks/ablation_sigma.py --workers 2

clean:
	rm -rf $(VENV) docs/_build docs/auto_examples docs/generated
