"""
Irregular multichannel vitals: one global model, forecasts at any time
======================================================================

Clinical vital signs are measured at irregular times, each channel on its own schedule.
:class:`~levy_sklearn.forecaster.LevyForecaster` reads every measurement as a token
``(time, channel, value)`` in continuous time, so nothing is resampled or imputed. This
example trains one global model on a panel of simulated ICU stays, then forecasts a patient
it never saw at arbitrary future timestamps, with intervals for every channel.
"""

# %%
# A panel of irregular stays
# --------------------------
# :func:`~levy_sklearn.datasets.make_irregular_vitals` simulates mean-reverting vital
# signs with acute events. Channel ``ch0`` is measured about once every five hours,
# ``ch1`` about once an hour and ``ch2`` twice an hour, at random times. Its time index is
# the time since admission (a ``TimedeltaIndex``); adding an admission timestamp turns it
# into clock times, which lets the forecast times below be plain timestamps.

import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from levy_sklearn.datasets import make_irregular_vitals
from levy_sklearn.forecaster import LevyForecaster
from levy_sklearn.plotting import plot_fan_chart

panel = make_irregular_vitals(
    n_patients=200, n_channels=3, duration=24.0, obs_rate=(0.2, 2.0), random_state=0
)
admission = pd.Timestamp("2024-01-01 08:00")
panel.index = panel.index.set_levels(admission + panel.index.levels[1], level="time")

patients = panel.index.get_level_values("patient")
train_panel = panel[patients < 199]  # 199 stays to learn from
stay = panel.loc[199]  # the new patient, never seen in training
now = admission + pd.Timedelta("16h")
end = now + pd.Timedelta("4h")
history = stay[stay.index <= now]
future = stay[(stay.index > now) & (stay.index <= end)]
print(f"panel: {panel.shape[0]} time points, {patients.nunique()} patients")
print("observations of the new patient so far:", history.notna().sum().to_dict())

# %%
# Train one global model
# ----------------------
# ``pretrain`` learns from windows cut from every stay of the panel. Spans are given as
# times: each window looks back 6 hours and is trained to forecast up to 4 hours ahead.
# ``fit`` on the new patient then keeps the network and only records the patient's
# history as context (zero-shot: no gradient step).

forecaster = LevyForecaster(
    context_length="6h",
    max_horizon="4h",
    max_tokens=64,
    windows_per_series=8,
    max_epochs=3,
    batch_size=64,
    random_state=0,
)
forecaster.pretrain(train_panel)
forecaster.fit(history)
print("time unit (median spacing):", forecaster.time_unit_)

# %%
# Forecast at arbitrary timestamps
# --------------------------------
# The forecast times need not lie on any grid: here every 10 minutes for the next four
# hours, plus two times the ward chose (a ward round and a scheduled blood draw).

grid = pd.date_range(now + pd.Timedelta("10min"), end, freq="10min")
chosen = pd.DatetimeIndex([now + pd.Timedelta("47min"), now + pd.Timedelta("2h13min")])
print(forecaster.predict_interval(fh=chosen, coverage=0.9).round(2).to_string())

y_pred = forecaster.predict(fh=grid)
y_int = forecaster.predict_interval(fh=grid, coverage=[0.5, 0.9])

# %%
# One panel per channel
# ---------------------
# Dots are measurements: filled before the forecast origin, open after it (the truth the
# model did not see). The bands are the 50% and 90% intervals around the mean forecast.

fig, axes = plt.subplots(3, 1, figsize=(8, 8), sharex=True)
for ax, channel in zip(axes, panel.columns, strict=True):
    seen, unseen = history[channel].dropna(), future[channel].dropna()
    plot_fan_chart(seen, y_pred, y_int, ax=ax, variable=channel)
    ax.plot(seen.index, seen, "o", color="black", ms=3)
    ax.plot(unseen.index, unseen, "o", mfc="white", color="black", ms=4, label="later measured")
    ax.axvline(now, color="0.5", lw=0.8, ls=":")
    ax.set_ylabel(channel)
    ax.get_legend().remove()
axes[0].set_title("Forecast of an unseen patient, 16 h after admission")
axes[-1].set_xlim(admission + pd.Timedelta("8h"), end + pd.Timedelta("5min"))
axes[-1].xaxis.set_major_formatter(mdates.DateFormatter("%H:%M"))
axes[-1].set_xlabel("clock time")
fig.legend(*axes[-1].get_legend_handles_labels(), loc="lower center", ncol=5)
fig.tight_layout(rect=(0, 0.04, 1, 1))

# %%
# How the intervals grow
# ----------------------
# The width of the 90% interval (in the units of each channel) against the forecast
# horizon in hours. Each channel's spread is scaled by the patient's own history.

width = y_int.xs(0.9, axis=1, level=1)
width = width.xs("upper", axis=1, level=1) - width.xs("lower", axis=1, level=1)
hours = np.asarray((grid - now) / pd.Timedelta("1h"))
print(pd.DataFrame(width.to_numpy(), index=hours.round(2), columns=panel.columns).iloc[::6])
