# Set-up is part of every target: a fresh clone needs only `make demo` or `make test`.
VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python
# The CPU build of PyTorch, installed first so that the package's own `torch` range is
# already satisfied (an unpinned torch would pull a multi-GB CUDA build). Override it
# elsewhere, e.g. `make test TORCH_SPEC="torch --index-url https://download.pytorch.org/whl/cpu"`.
TORCH_SPEC ?= torch==2.13.0
PYTEST_ARGS ?=
# The virtual environment of the peers benchmarks (`make benchmarks-peers`).
PEERS_VENV ?= peers
# The name of zero_shot's run in `make benchmarks-full` (results/zero_shot_runs/NAME.json.gz).
ZERO_SHOT_LABEL ?= $(shell git rev-parse --short HEAD)

.PHONY: install demo test lint docs benchmarks benchmarks-full benchmarks-peers clean

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
# Every script runs from the repository root as a module of the `benchmarks` package.
benchmarks: install
	$(PY) -m benchmarks.overhead
	OMP_NUM_THREADS=1 $(PY) -m benchmarks.claims --fast
	OMP_NUM_THREADS=1 $(PY) -m benchmarks.clinical

# Every other script that runs in the project's environment, with the options its committed
# report was produced with (many hours on 2 cores; see benchmarks/README.md for each one's
# runtime). The forecaster_ablation, regressor_budget and pretrain_budget runs write one run's
# tables; their hand-kept logs (results/*_notes.md) are never touched.
benchmarks-full: benchmarks
	OMP_NUM_THREADS=1 $(PY) -m benchmarks.claims --full --workers 2
	OMP_NUM_THREADS=1 $(PY) -m benchmarks.claims_resolution
	OMP_NUM_THREADS=1 $(PY) -m benchmarks.regressor_defaults
	OMP_NUM_THREADS=1 $(PY) -m benchmarks.forecaster_airline
	OMP_NUM_THREADS=1 $(PY) -m benchmarks.memory
	OMP_NUM_THREADS=1 $(PY) -m benchmarks.serialization
	$(PY) -m benchmarks.scaleout
	OMP_NUM_THREADS=1 $(PY) -m benchmarks.sigma_missing
	OMP_NUM_THREADS=1 $(PY) -m benchmarks.ablation_sigma --workers 2
	OMP_NUM_THREADS=1 $(PY) -m benchmarks.evidence_oracle
	OMP_NUM_THREADS=1 $(PY) -m benchmarks.ranking_crosscheck --workers 2
	OMP_NUM_THREADS=1 $(PY) -m benchmarks.regressor_budget
	OMP_NUM_THREADS=1 $(PY) -m benchmarks.pretrain_budget 5000 1500 500
	OMP_NUM_THREADS=1 $(PY) -m benchmarks.speed --repeats 3
	OMP_NUM_THREADS=1 $(PY) -m benchmarks.speed --floor
	OMP_NUM_THREADS=1 $(PY) -m benchmarks.speed --predict
	OMP_NUM_THREADS=1 $(PY) -m benchmarks.zero_shot --label $(ZERO_SHOT_LABEL) --force
	OMP_NUM_THREADS=1 $(PY) -m benchmarks.zero_shot --report
	OMP_NUM_THREADS=1 $(PY) -m benchmarks.zero_shot --ablation-report

# The scripts whose peers (statsforecast, NGBoost) need pandas < 3 and scikit-learn < 1.7, so
# they run in an environment of their own, made once by `python -m venv peers &&
# peers/bin/pip install -e '.[peers]'` (PEERS_VENV names another). forecaster_ablation needs
# only `benchmarks`, but its recorded runs used this environment.
benchmarks-peers:
	OMP_NUM_THREADS=1 $(PEERS_VENV)/bin/python -m benchmarks.forecasters --full
	OMP_NUM_THREADS=1 $(PEERS_VENV)/bin/python -m benchmarks.fold_coverage
	OMP_NUM_THREADS=1 $(PEERS_VENV)/bin/python -m benchmarks.high_frequency --full
	OMP_NUM_THREADS=1 $(PEERS_VENV)/bin/python -m benchmarks.forecaster_ablation
	OMP_NUM_THREADS=1 $(PEERS_VENV)/bin/python -m benchmarks.competitions --methods levy peers --seeds 0 1 2 --force
	OMP_NUM_THREADS=1 $(PEERS_VENV)/bin/python -m benchmarks.competitions --sktime --report --force

clean:
	rm -rf $(VENV) docs/_build docs/auto_examples docs/generated
