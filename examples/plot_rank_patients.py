"""
Ranking unseen patients by trust
================================

When a model forecasts many patients at once, the useful question is often *which*
forecasts to trust. Lévy attention gives three per-prediction signals from the same forward
pass: σ, the evidence Λ (how much observed data supported the prediction) and the
disagreement (how much that data conflicts). This example predicts the next measurement of
patients the model never saw, ranks them by each signal, and compares the rankings with
risk–coverage curves: keep the most trusted fraction of patients, measure their error.
"""

# %%
# Patients with more and less data
# --------------------------------
# A simulated ICU panel (:func:`~levy_sklearn.datasets.make_irregular_vitals`, times in
# hours). To make the amount of data differ between patients, as it does on a ward, each
# patient keeps only a random share (10% to 100%) of their measurements.

import time

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from levy_sklearn.datasets import make_irregular_vitals
from levy_sklearn.metrics import aurc, excess_aurc, spearman_uncertainty
from levy_sklearn.plotting import plot_risk_coverage
from levy_sklearn.regressor import LevyAttentionRegressor

rng = np.random.default_rng(0)
panel = make_irregular_vitals(
    n_patients=1000, duration=24.0, obs_rate=(0.2, 2.0), random_state=0, time_as="float"
)
patients = panel.index.get_level_values("patient")
keep_share = rng.uniform(0.1, 1.0, size=patients.max() + 1)
panel = panel.where(rng.random(panel.shape) < keep_share[patients][:, None])
print(f"{panel.notna().sum().sum()} measurements of {panel.shape[1]} channels")

# %%
# From histories to rows
# ----------------------
# A prediction is made at a cutoff time: the target is the next measurement of ``ch1``
# after the cutoff, the features are the last measurement of every channel in each of the
# 8 hours before it (``NaN`` when there was none, which the regressor leaves out rather
# than imputes). ``feature_times`` tells the regressor how long before the cutoff each
# column lies, so the rows are small continuous-time windows.

N_BINS = 8


def window_rows(stay, cutoffs):
    """Features (last value per channel and past hour) and next ch1 value per cutoff."""
    times, values = stay.index.to_numpy(), stay.to_numpy()
    observed = ~np.isnan(values)
    rows, targets = [], []
    for cutoff in cutoffs:
        after = np.flatnonzero((times > cutoff) & observed[:, 1])
        if after.size == 0:
            continue
        age = cutoff - times
        features = np.full((values.shape[1], N_BINS), np.nan)
        for k in range(N_BINS):
            for channel in range(values.shape[1]):
                (hits,) = np.nonzero(observed[:, channel] & (age >= k) & (age < k + 1))
                if hits.size:
                    features[channel, k] = values[hits[-1], channel]
        rows.append(features.ravel())
        targets.append(values[after[0], 1])
    return rows, targets


def dataset(ids, cutoffs):
    """Rows of every patient in ``ids``, cut at ``cutoffs[patient]`` (hours)."""
    X, y, who = [], [], []
    for patient in ids:
        rows, targets = window_rows(panel.loc[patient], cutoffs[patient])
        X += rows
        y += targets
        who += [patient] * len(rows)
    return np.array(X), np.array(y), np.array(who)


feature_times = -np.tile(np.arange(N_BINS) + 0.5, panel.shape[1])  # hours before cutoff
train_ids, new_ids = range(500), range(500, 1000)
cutoffs = {p: [8, 11, 14, 17, 20] for p in train_ids}
cutoffs |= {p: [rng.uniform(8, 20)] for p in new_ids}  # one cutoff per unseen patient
X_train, y_train, _ = dataset(train_ids, cutoffs)
X_new, y_new, new_patients = dataset(new_ids, cutoffs)
print(f"training rows: {len(y_train)}, unseen patients: {len(y_new)}")
print(f"share of missing feature cells: {np.isnan(X_new).mean():.0%}")

# %%
# Train, then rank the unseen patients
# ------------------------------------
# One forward pass gives every patient's mean, σ, evidence and disagreement.

reg = LevyAttentionRegressor(
    feature_times=feature_times,
    n_windowed_heads=2,
    max_epochs=40,
    batch_size=128,
    random_state=0,
)
reg.fit(X_train, y_train)

start = time.perf_counter()
why = reg.predict_uncertainty(X_new)
order = np.argsort(why.std)  # most trusted first
elapsed = time.perf_counter() - start
print(f"ranked {len(y_new)} unseen patients in {elapsed:.3f} s")

errors = np.abs(y_new - why.mean)
ranking = pd.DataFrame(
    {
        "σ": why.std,
        "evidence": why.evidence,
        "disagreement": why.disagreement,
        "|error|": errors,
        "observed cells": (~np.isnan(X_new)).sum(axis=1),
    },
    index=pd.Index(new_patients, name="patient"),
).iloc[order]
print("most trusted:\n", ranking.head(5).round(3).to_string())
print("least trusted:\n", ranking.tail(5).round(3).to_string())

# %%
# Risk–coverage
# -------------
# Each curve keeps the patients a signal trusts most and plots their mean absolute error
# against the fraction kept. Lower is better; the oracle ranks by the errors themselves.
# The evidence is a confidence, so it is negated to rank by uncertainty. The area under
# each curve (AURC) is in the legend; the excess AURC subtracts the oracle's.

signals = {
    "σ": why.std,
    "evidence (negated)": -why.evidence,
    "disagreement": why.disagreement,
    "random": rng.random(len(errors)),
}
scores = pd.DataFrame(
    {
        "AURC": [aurc(errors, u) for u in signals.values()],
        "excess AURC": [excess_aurc(errors, u) for u in signals.values()],
        "Spearman with |error|": [spearman_uncertainty(errors, u) for u in signals.values()],
    },
    index=list(signals),
)
print(scores.round(4).to_string())

fig, ax = plt.subplots(figsize=(7, 4.5))
plot_risk_coverage(errors, signals, ax=ax)
ax.set_ylabel("mean |error| of the patients kept")
ax.set_title(f"Next ch1 measurement of {len(errors)} unseen patients")
fig.tight_layout()
