"""
Backtesting with sktime's ``evaluate``
======================================

:class:`~levy_sklearn.forecaster.LevyForecaster` is a regular sktime forecaster, so sktime's
model-evaluation tools run it like any other. This example backtests it on the airline
passengers series with an expanding window, next to two sktime forecasters, and scores
the point forecasts and the predictive distributions.
"""

# %%
# Set-up
# ------
# Three folds: the models are fitted on the first 108, 120 and 132 months and forecast the
# next 12 each time, refitting at every fold. Every metric is averaged over the folds.

import warnings

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sktime.forecasting.model_evaluation import evaluate
from sktime.forecasting.naive import NaiveForecaster
from sktime.forecasting.theta import ThetaForecaster
from sktime.performance_metrics.forecasting import MeanAbsoluteError
from sktime.performance_metrics.forecasting.probabilistic import (
    CRPS,
    EmpiricalCoverage,
    PinballLoss,
)
from sktime.split import ExpandingWindowSplitter

from levy_sklearn.datasets import load_airline
from levy_sklearn.forecaster import LevyForecaster

y = load_airline()
cv = ExpandingWindowSplitter(fh=np.arange(1, 13), initial_window=108, step_length=12)
print(f"{cv.get_n_splits(y)} folds")

# %%
# Metrics
# -------
# CRPS scores the whole predictive distribution, the pinball loss its 5% and 95% quantiles,
# and the empirical coverage the share of the truth inside the 90% interval (0.9 is ideal,
# not 1). The mean absolute error scores the point forecast.

# Without the optional package skpro, sktime represents the forecast distributions the CRPS
# needs with its own Normal distribution, and says so at every fold.
warnings.filterwarnings("ignore", message="Forecasters' predict_proba requires skpro")

scoring = [
    MeanAbsoluteError(),
    CRPS(),
    PinballLoss(alpha=[0.05, 0.95]),
    EmpiricalCoverage(coverage=0.9),
]

# %%
# Run the backtest
# ----------------
# LevyForecaster at its default training budget (10 epochs, a couple of seconds a fold), next
# to the seasonal naive forecaster and the Theta method. ``evaluate`` returns one row per
# fold, with a ``test_<metric>`` column per metric and the fit and prediction times.
#
# sktime 1.2 warns, each time one of its own forecasters is created (``evaluate`` clones
# them at every fold), that the default of its ``remember_data`` setting changes in sktime
# 1.3. LevyForecaster already uses the new default, and the change does not affect this
# comparison. sktime re-enables FutureWarnings during ``evaluate``, so a filter would not
# hold: the backtest's warnings are collected instead, and all others shown.

rows = {}
with warnings.catch_warnings(record=True) as caught:
    forecasters = {
        "LevyForecaster": LevyForecaster(context_length=36, max_horizon=12, random_state=0),
        "Naive (seasonal, sp=12)": NaiveForecaster(strategy="last", sp=12),
        "Theta (sp=12)": ThetaForecaster(sp=12),
    }
    for name, forecaster in forecasters.items():
        result = evaluate(forecaster, cv=cv, y=y, scoring=scoring, error_score="raise")
        rows[name] = result.filter(like="test_").mean().rename(lambda c: c.removeprefix("test_"))
        rows[name]["fit_time"] = result["fit_time"].sum()
for w in caught:
    if "remember_data" not in str(w.message):
        warnings.showwarning(w.message, w.category, w.filename, w.lineno)
table = pd.DataFrame(rows).T
print(table.round(3).to_string())

# %%
# Compare
# -------
# Lower is better for the error and the scores; for the coverage, closer to the nominal
# 0.9 (dashed line) is better.

metrics = ["MeanAbsoluteError", "CRPS", "PinballLoss", "EmpiricalCoverage"]
fig, axes = plt.subplots(1, 4, figsize=(12, 3.6))
colors = [f"C{k}" for k in range(len(table))]
for ax, metric in zip(axes, metrics, strict=True):
    ax.bar(range(len(table)), table[metric], color=colors)
    ax.set_xticks(range(len(table)))
    ax.set_xticklabels([name.split(" (")[0] for name in table.index], rotation=30, ha="right")
    ax.set_title(metric)
axes[-1].set_title("EmpiricalCoverage (90%)")
axes[-1].axhline(0.9, color="black", ls="--", lw=1)
axes[-1].set_ylim(0, 1.05)
fig.suptitle("Expanding-window backtest on airline passengers (3 folds, fh 1-12)")
fig.tight_layout()
