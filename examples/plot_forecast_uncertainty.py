"""
Why is a forecast uncertain? Evidence and disagreement over time
================================================================

:meth:`LevyForecaster.predict_uncertainty
<levy_sklearn.forecaster.LevyForecaster.predict_uncertainty>` breaks every forecast's σ into
the two quantities of the Lévy attention behind it: the **evidence**, the expected number
of observations supporting the forecast (low when little was seen near the forecast time),
and the **disagreement**, the spread of what was attended to (high when the recent
readings conflict). On a real, irregular glucose record with a half-day sensor gap, the
evidence falls as the gap opens and σ grows with it.
"""

# %%
# A week of continuous glucose monitoring
# ---------------------------------------
# :func:`~levy_sklearn.datasets.load_glucose` is one person's CGM record: a reading about
# every 5 minutes, with 1- and 4-minute spacings and gaps where the sensor was off. No
# resampling: every reading is a token at its own time. We train on a week and then ask for
# forecasts on the next day, which starts with a 13-hour gap.

import matplotlib.pyplot as plt
import pandas as pd

from levy_sklearn.datasets import load_glucose
from levy_sklearn.forecaster import LevyForecaster

glucose = load_glucose()
history = glucose["2010-04-02":"2010-04-09 16:00"]
gaps = history.index.to_series().diff()
print(f"{len(history)} readings; longest gap {gaps.max()}, ending {gaps.idxmax()}")

# %%
# Fit, then forecast across the gap
# ---------------------------------
# The look-back is 3 hours and the forecaster is trained for up to 2 hours ahead; each
# window is centred on its own mean (``normalization="mean"``: ``"trend"`` would
# extrapolate the last slope through a 13-hour gap); a few epochs keep the example
# fast. Forecast times are every 15 minutes of April 9, in the
# middle of the history: each is forecast from what was observed strictly before it, so
# inside the gap the forecast is that of the last reading before it, further and further
# ahead (beyond 2 hours σ keeps growing as the held-out errors grew within 2 hours).

forecaster = LevyForecaster(
    context_length="3h",
    max_horizon="2h",
    normalization="mean",
    max_tokens=64,
    windows_per_series=256,
    max_epochs=8,
    batch_size=64,
    random_state=0,
)
forecaster.fit(history)
times = pd.date_range("2010-04-08 18:00", "2010-04-09 16:00", freq="15min")
u = forecaster.predict_uncertainty(pd.DatetimeIndex(times))
table = pd.DataFrame(
    {
        "mean": u.mean.iloc[:, 0],
        "std": u.std.iloc[:, 0],
        "evidence": u.evidence.iloc[:, 0],
        "disagreement": u.disagreement.iloc[:, 0],
    }
)
print(table.iloc[::8].round(2))

# %%
# The breakdown
# -------------
# Top: the readings and the forecast ±2σ. Bottom: the evidence (left axis) drops once the
# gap opens, and σ grows with it; the disagreement (right axis) is that of the last
# context before the gap until readings resume, then follows what the new readings say.

seen = glucose["2010-04-08 18:00":"2010-04-09 16:00"]
fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(8, 6))
top.plot(seen.index, seen, ".", ms=3, color="black", label="readings")
top.plot(table.index, table["mean"], color="C0", label="forecast")
top.fill_between(
    table.index,
    table["mean"] - 2 * table["std"],
    table["mean"] + 2 * table["std"],
    color="C0",
    alpha=0.25,
    label="±2σ",
)
top.set_ylabel("glucose (mg/dL)")
top.legend(loc="upper left")
bottom.plot(table.index, table["evidence"], color="C1")
bottom.set_ylabel("evidence", color="C1")
bottom.set_yscale("log")
right = bottom.twinx()
right.plot(table.index, table["disagreement"], color="C2")
right.set_ylabel("disagreement (mg/dL)²", color="C2")
fig.autofmt_xdate()
fig.tight_layout()
plt.show()
