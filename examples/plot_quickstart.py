"""
Quickstart: a probabilistic forecast of airline passengers
==========================================================

:class:`~levy_sklearn.forecaster.LevyForecaster` is an sktime forecaster. One deterministic
forward pass gives each forecast a mean and a closed-form variance, so prediction intervals
come without sampling or ensembles. Here it forecasts the last two years of the classic
airline passengers series, which it never saw in training, next to sktime's seasonal naive
forecaster. The script also runs on its own (``python examples/plot_quickstart.py``); it
saves the fan chart as ``quickstart_fan_chart.png`` in the working directory, or in the
folder named by the environment variable ``LEVY_OUTPUT_DIR``.
"""

# %%
# Data: hold out the last 24 months
# ---------------------------------
# ``load_airline`` returns a monthly ``pd.Series`` (thousands of passengers, 1949-1960).
# The model is fitted on everything but the last 24 months and forecasts those.

import os
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sktime.forecasting.naive import NaiveForecaster

from levy_sklearn.datasets import load_airline
from levy_sklearn.forecaster import LevyForecaster
from levy_sklearn.metrics import gaussian_crps, interval_coverage
from levy_sklearn.plotting import plot_fan_chart

y = load_airline()
y_train, y_test = y.iloc[:-24], y.iloc[-24:]
fh = np.arange(1, 25)  # 1 to 24 months after the end of y_train
print(f"train: {y_train.index[0]} to {y_train.index[-1]}, test: {len(y_test)} months")

# %%
# Fit and forecast
# ----------------
# ``context_length`` is the look-back and ``max_horizon`` the span the model is trained to
# forecast, both in time units (here months). The default training budget (10 epochs) takes
# a couple of seconds; ``random_state`` makes the run reproducible.

forecaster = LevyForecaster(
    context_length=36,
    max_horizon=24,
    random_state=0,
)
forecaster.fit(y_train)

y_pred = forecaster.predict(fh=fh)  # mean forecast
y_std = np.sqrt(forecaster.predict_var(fh=fh).iloc[:, 0])  # closed-form σ, no sampling
y_int = forecaster.predict_interval(fh=fh, coverage=[0.5, 0.9])
y_int.head()

# %%
# Compare with the seasonal naive forecaster
# ------------------------------------------
# ``NaiveForecaster(strategy="last", sp=12)`` repeats the last observed year; sktime gives it
# prediction intervals too. The table reports the mean absolute error of the point forecast,
# the CRPS of the predictive distribution (lower is better; it equals the MAE for a forecast
# without spread) and the share of the 24 held-out months inside the 90% interval.


def scores(mean, std, interval):
    """MAE, Gaussian CRPS and empirical coverage of the 90% interval on y_test."""
    truth = y_test.to_numpy()
    lower, upper = interval.xs(0.9, axis=1, level=1).to_numpy().T
    return {
        "MAE": np.mean(np.abs(truth - np.asarray(mean))),
        "CRPS": gaussian_crps(truth, np.asarray(mean), np.asarray(std)),
        "90% coverage": interval_coverage(truth, lower, upper),
    }


# sktime 1.2 warns, whenever one of its own forecasters is created, that the default of its
# ``remember_data`` setting changes in sktime 1.3. LevyForecaster already uses the new
# default, and the change does not affect the naive forecaster.
warnings.filterwarnings("ignore", message="The default of config ``remember_data``")
naive = NaiveForecaster(strategy="last", sp=12).fit(y_train)
naive_pred = naive.predict(fh=fh)
naive_std = np.sqrt(naive.predict_var(fh=fh).iloc[:, 0])
naive_int = naive.predict_interval(fh=fh, coverage=0.9)

table = pd.DataFrame(
    {
        "LevyForecaster": scores(y_pred, y_std, y_int),
        "NaiveForecaster(sp=12)": scores(naive_pred, naive_std, naive_int),
    }
).T
print(table.round(3).to_string())

# %%
# Fan chart
# ---------
# The shaded bands are the 50% and 90% intervals; the dashed line is the held-out truth.

fig, ax = plt.subplots(figsize=(8, 4))
plot_fan_chart(
    y_train.iloc[-48:],
    y_pred,
    y_int,
    ax=ax,
    y_test=y_test,
    title="LevyForecaster on airline passengers: 24-month forecast",
)
ax.set_xlabel("month")
ax.set_ylabel("passengers (thousands)")
fig.tight_layout()

output_dir = Path(os.environ.get("LEVY_OUTPUT_DIR", "."))
output_dir.mkdir(parents=True, exist_ok=True)
png = (output_dir / "quickstart_fan_chart.png").resolve()
fig.savefig(png, dpi=120)
print(f"fan chart saved to {png}")
