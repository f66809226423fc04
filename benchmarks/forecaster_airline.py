"""LevyForecaster on load_airline: the expanding-window backtest that chose its defaults.

Expanding window, first cutoff after 72 months, a cutoff every 12 months (6 folds), fh 1–12,
refit at every fold. Scored with CRPS, PinballLoss (5%/95%), EmpiricalCoverage of the 90%
interval, interval width and MAE, beside NaiveForecaster(strategy="last", sp=12) and
ARARForecaster (sktime's peers). Candidate LevyForecaster configurations are given as JSON on
the command line (each overriding the defaults and ``random_state=0``); with none, the
defaults are run.

Run: ``python -m benchmarks.forecaster_airline ['{"normalization": "mean"}' ...]``.
Writes ``benchmarks/results/forecaster_airline.md`` when run without arguments.
"""

from __future__ import annotations

import json
import sys
import time
import warnings

import numpy as np
import pandas as pd
from sktime.datasets import load_airline
from sktime.forecasting.arar import ARARForecaster
from sktime.forecasting.model_evaluation import evaluate
from sktime.forecasting.naive import NaiveForecaster
from sktime.performance_metrics.forecasting import MeanAbsoluteError
from sktime.performance_metrics.forecasting.probabilistic import (
    CRPS,
    EmpiricalCoverage,
    IntervalWidth,
    PinballLoss,
)
from sktime.split import ExpandingWindowSplitter

from levy_sklearn.forecaster import LevyForecaster

from ._common import write_report

CV = ExpandingWindowSplitter(fh=list(range(1, 13)), initial_window=72, step_length=12)
SCORING = [
    CRPS(),
    PinballLoss(alpha=[0.05, 0.95]),
    EmpiricalCoverage(coverage=0.9),
    IntervalWidth(coverage=0.9),
    MeanAbsoluteError(),
]


def backtest(forecaster, y: pd.Series) -> dict[str, float]:
    """Mean of every score over the folds, and the total wall time."""
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = evaluate(forecaster, cv=CV, y=y, scoring=SCORING, error_score="raise")
    scores = {
        name.removeprefix("test_"): float(result[name].mean())
        for name in result.columns
        if name.startswith("test_")
    }
    scores["seconds"] = time.perf_counter() - start
    return scores


def main(argv: list[str]) -> None:
    y = load_airline()
    configs = [json.loads(a) for a in argv] or [{}]
    rows = {}
    for config in configs:
        label = "LevyForecaster " + (json.dumps(config) if config else "(defaults)")
        rows[label] = backtest(LevyForecaster(**{"random_state": 0, **config}), y)
        print(label, rows[label], flush=True)
    rows['NaiveForecaster(strategy="last", sp=12)'] = backtest(
        NaiveForecaster(strategy="last", sp=12), y
    )
    rows["ARARForecaster()"] = backtest(ARARForecaster(), y)
    table = pd.DataFrame(rows).T
    print(table.to_string(float_format=lambda v: f"{v:.3f}"))
    if not argv:
        text = (
            "# LevyForecaster on load_airline\n\n"
            "Expanding window (initial 72, step 12, 6 folds), fh 1-12, refit every fold, "
            "random_state=0. Produced by `python -m benchmarks.forecaster_airline`.\n\n"
            + table.to_markdown(floatfmt=".3f")
            + "\n"
        )
        write_report(text, "forecaster_airline.md", echo=False)
    np.set_printoptions()


if __name__ == "__main__":
    main(sys.argv[1:])
