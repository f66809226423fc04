"""
Ranking patients by trust with a risk–coverage curve
====================================================

When a model predicts for many patients at once, the useful question is often *which*
predictions to trust. Lévy attention gives three per-prediction signals from the same forward
pass: σ, the evidence Λ (how much observed data supported the prediction) and the
disagreement (how much that data conflicts). This example predicts drug concentrations of
patients the model never saw, ranks the predictions and the patients by each signal, and
compares the rankings with risk–coverage curves: keep the most trusted fraction, measure
its error.
"""

# %%
# Patients sampled densely and sparsely
# -------------------------------------
# :func:`~levy_sklearn.datasets.load_remifentanil` (R ``nlme::Remifentanil``, Minto et al.
# 1997): 65 patients received the opioid remifentanil as an intravenous infusion for 4 to
# 20 minutes, and their arterial concentration was measured at irregular times during and
# after it. The sampling differs between patients: about every minute in some, every 2 to 5
# minutes in others. That is what makes trust differ: some predictions rest on many recent
# measurements, others on one or two, or on none.

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from levy_sklearn.datasets import load_remifentanil
from levy_sklearn.metrics import aurc, excess_aurc, risk_coverage_curve, spearman_uncertainty
from levy_sklearn.plotting import plot_risk_coverage
from levy_sklearn.regressor import LevyAttentionRegressor

panel = load_remifentanil(include_rate=True, time_as="float")  # time in minutes
spacing = (
    panel["conc"]
    .dropna()
    .groupby(level="subject")
    .apply(lambda conc: np.median(np.diff(conc.index.get_level_values("time"))))
)
print(f"{len(spacing)} patients; median minutes between samples per patient:")
print(spacing.describe().round(2).to_string())

# %%
# From histories to rows
# ----------------------
# Every measured concentration is a target. Its features are the last concentration
# measured in each of the 10 minutes before it (``NaN`` when there was none, which the
# regressor leaves out rather than imputes), and the pump rate at the target time and five
# minutes earlier. Concentrations are on the log scale, so an error of 0.1 is about 10%.
# ``feature_times`` tells the regressor when each column lies relative to the target, so a
# row is a small continuous-time window.

N_BINS = 10


def patient_rows(stay):
    """Features, log-concentration target and minutes since the previous sample, per sample."""
    times = stay.index.to_numpy()
    conc, rate = np.log(stay["conc"].to_numpy()), stay["rate"].to_numpy()

    def rate_at(t):  # the pump rate is piecewise constant; zero before the infusion
        before = np.searchsorted(times, t, side="right") - 1
        return rate[before] if before >= 0 else 0.0

    measured = np.flatnonzero(~np.isnan(conc))
    rows = []
    for i, j in enumerate(measured):
        age = times[j] - times[measured[:i]][::-1]  # minutes before the target, latest first
        bins = np.full(N_BINS, np.nan)
        recent = age <= N_BINS
        slot, latest = np.unique(np.ceil(age[recent]).astype(int) - 1, return_index=True)
        bins[slot] = conc[measured[:i]][::-1][recent][latest]
        since = age[0] if i else times[j]  # or since the infusion started
        rows.append([*bins, rate_at(times[j]), rate_at(times[j] - 5), conc[j], since])
    return rows


def dataset(patients):
    """X, y and a frame of all rows (with patient and minutes since the last sample)."""
    frame = pd.DataFrame(
        [[p, *row] for p in patients for row in patient_rows(panel.loc[p])],
        columns=["patient", *range(N_BINS), "rate now", "rate 5 min ago", "y", "since"],
    )
    return frame.iloc[:, 1:-2].to_numpy(), frame["y"].to_numpy(), frame


feature_times = np.r_[-(np.arange(N_BINS) + 0.5), 0.0, -5.0]  # minutes before the target
rng = np.random.default_rng(0)
new_patients = np.sort(rng.choice(spacing.index, size=25, replace=False))
X_train, y_train, _ = dataset(spacing.index.difference(new_patients))
X_new, y_new, rows_new = dataset(new_patients)
print(f"training rows: {len(y_train)} from {len(spacing) - len(new_patients)} patients")
print(f"rows of {len(new_patients)} unseen patients: {len(y_new)}")
print(f"share of missing concentration cells: {np.isnan(X_new[:, :N_BINS]).mean():.0%}")

# %%
# Train, then predict the unseen patients
# ---------------------------------------
# One forward pass gives every prediction's mean, σ, evidence and disagreement. As a sanity
# check of the means, their error is compared with carrying the last measurement forward
# (on the rows that have a measurement in the ten minutes before).

reg = LevyAttentionRegressor(feature_times=feature_times, max_epochs=30, random_state=0)
reg.fit(X_train, y_train)
why = reg.predict_uncertainty(X_new)
errors = np.abs(y_new - why.mean)

last = pd.DataFrame(X_new[:, :N_BINS]).bfill(axis=1)[0].to_numpy()  # most recent bin first
seen = ~np.isnan(last)
print(
    pd.Series(
        {
            "LevyAttentionRegressor": np.mean(errors[seen]),
            "last measurement": np.mean(np.abs(y_new - last)[seen]),
        },
        name="mean |log error|",
    ).round(3)
)

# %%
# Risk–coverage over predictions
# ------------------------------
# Each curve keeps the predictions a signal trusts most and plots their mean absolute
# error against the fraction kept. Lower is better; the oracle ranks by the errors
# themselves; a random ranking stays near the overall error. The evidence is a
# confidence, so it is negated to rank by uncertainty. Besides the model's signals, a rule
# of thumb anyone could apply: distrust a prediction the longer it has been since the
# patient's last measurement. The area under each curve (AURC) is in the legend; the excess
# AURC subtracts the oracle's. The table adds the Spearman correlation of each signal with
# the errors and the mean error of the 20% of predictions the signal trusts most ("top 20%
# error").

signals = {
    "σ": why.std,
    "evidence (negated)": -why.evidence,
    "disagreement": why.disagreement,
    "time since last sample": rows_new["since"].to_numpy(),
    "random": rng.random(len(errors)),
}


def ranking_scores(errors, signals):
    """AURC, excess AURC, Spearman and the mean error of the most trusted 20% per signal."""

    def top_fifth(u):
        coverage, risk = risk_coverage_curve(errors, u)
        return risk[np.searchsorted(coverage, 0.2)]

    return pd.DataFrame(
        {
            "AURC": [aurc(errors, u) for u in signals.values()],
            "excess": [excess_aurc(errors, u) for u in signals.values()],
            "Spearman": [spearman_uncertainty(errors, u) for u in signals.values()],
            "top 20% error": [top_fifth(u) for u in signals.values()],
        },
        index=list(signals),
    )


print(f"mean |log error| of all predictions: {errors.mean():.3f}")
print(ranking_scores(errors, signals).round(3).to_string())

# %%
# Ranking patients
# ----------------
# To rank patients rather than single predictions, average each patient's σ and error over
# their predictions. With 25 patients the curve is coarse and the numbers are noisy.

by_patient = (
    pd.DataFrame({"patient": rows_new["patient"], "σ": why.std, "|error|": errors})
    .groupby("patient")
    .mean()
    .join(spacing.rename("minutes between samples"))
    .sort_values("σ")
)
patient_signals = {"mean σ": by_patient["σ"], "random": rng.random(len(by_patient))}
print(ranking_scores(by_patient["|error|"], patient_signals).round(3).to_string())
print("most trusted:\n", by_patient.head(4).round(3).to_string())
print("least trusted:\n", by_patient.tail(4).round(3).to_string())

fig, (ax_rows, ax_patients) = plt.subplots(2, 1, figsize=(7, 9), sharey=True)
plot_risk_coverage(errors, signals, ax=ax_rows)
ax_rows.set_ylabel("mean |log error| of the kept")
ax_rows.set_title(f"{len(errors)} predictions of {len(new_patients)} unseen patients")
ax_rows.legend(fontsize=8)
plot_risk_coverage(by_patient["|error|"], patient_signals, ax=ax_patients)
ax_patients.set_xlabel("coverage (fraction of patients kept)")
ax_patients.set_ylabel("mean |log error| of the kept")
ax_patients.set_title("the same patients, ranked by their mean σ")
ax_patients.legend(fontsize=8)
fig.tight_layout()

# %%
# What the numbers show
# ---------------------
# Over single predictions, σ and the negated evidence rank best: their AURC lies about
# halfway between random ranking and the oracle, and the fifth of the predictions they
# trust most has a mean error a third (σ) to a half (evidence) below the overall one. The
# rule of thumb (time since the last sample) is better than random and close to σ among the
# most trusted fifth, but worse over the whole curve; the disagreement is in between. The
# Spearman correlations are modest, 0.3 or less: a single ``|error|`` is one draw from a
# distribution whose spread σ predicts, so even a perfect σ would rank single errors
# loosely. The left ends of the curves average only a few predictions and are noisy.
#
# Over patients the gain is smaller. Mean σ orders the 25 patients well (Spearman about
# 0.7) and its curve stays close to the oracle's, but the oracle's curve is itself fairly
# flat: patients differ less in their average error than predictions do, so keeping the
# five most trusted patients lowers the error less than keeping the most trusted fifth of
# the predictions. Most of the variation lies between the predictions of one patient. The
# sampling interval is not the whole story either:
# patients sampled about every minute appear among both the most and the least trusted.
