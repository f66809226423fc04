"""
Why is a prediction uncertain? Evidence and disagreement
========================================================

Besides σ, :class:`~levy_sklearn.regressor.LevyAttentionRegressor` reports the two
quantities σ is made of: the **evidence** Λ, the expected number of Poisson points behind a
prediction (low when little was observed), and the **disagreement**, the spread of the
attended values (high when the observations conflict). Here features of the diabetes data
are hidden at random, more in some rows than in others, and the breakdown shows that rows
with fewer observed features get less evidence.
"""

# %%
# Hide features at random
# -----------------------
# Each row gets its own missing rate, drawn uniformly between 0 and 80%, and each of its
# ten features is hidden (set to ``NaN``) with that probability. ``NaN`` means "not
# observed": the regressor builds no token for it and imputes nothing.

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.datasets import load_diabetes
from sklearn.model_selection import train_test_split

from levy_sklearn.metrics import spearman_uncertainty
from levy_sklearn.plotting import plot_uncertainty_breakdown
from levy_sklearn.regressor import LevyAttentionRegressor

X, y = load_diabetes(return_X_y=True)
rng = np.random.default_rng(0)
missing_rate = rng.uniform(0.0, 0.8, size=(len(X), 1))
X = np.where(rng.random(X.shape) < missing_rate, np.nan, X)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)
print(f"{np.isnan(X).mean():.0%} of the cells are hidden")

reg = LevyAttentionRegressor(max_epochs=60, batch_size=64, random_state=0)
reg.fit(X_train, y_train)

# %%
# The breakdown
# -------------
# ``predict_uncertainty`` returns the mean and σ of ``predict(X, return_std=True)``
# together with the evidence and the disagreement, summed over the output layer's heads
# (the per-head values are there too).

why = reg.predict_uncertainty(X_test)
errors = y_test - why.mean
n_observed = (~np.isnan(X_test)).sum(axis=1)
print(f"Spearman(σ, |error|):            {spearman_uncertainty(errors, why.std):+.3f}")
print(f"Spearman(-evidence, |error|):    {spearman_uncertainty(errors, -why.evidence):+.3f}")
print(f"Spearman(disagreement, |error|): {spearman_uncertainty(errors, why.disagreement):+.3f}")

# %%
# Fewer observed features, less evidence
# --------------------------------------
# Grouping the test rows by how many of their ten features were observed: the median
# evidence falls as features go missing. Whether σ and the error follow depends on how
# much the hidden features mattered; compare the columns.

groups = pd.cut(n_observed, [-1, 3, 5, 7, 10], labels=["0-3", "4-5", "6-7", "8-10"])
table = pd.DataFrame(
    {
        "observed features": groups,
        "evidence": why.evidence,
        "disagreement": why.disagreement,
        "σ": why.std,
        "|error|": np.abs(errors),
    }
).groupby("observed features", observed=True)
table = table.median().assign(rows=table.size())
print(table.round(2).to_string())

# %%
# Plots
# -----
# Left: evidence against disagreement for every test row, coloured by the absolute error.
# Right: the evidence against the number of observed features.

fig, (ax, ax_obs) = plt.subplots(1, 2, figsize=(11, 4.5))
plot_uncertainty_breakdown(why.evidence, why.disagreement, errors, ax=ax)
ax.set_title("Uncertainty breakdown (test rows)")

counts = [k for k in range(11) if (n_observed == k).any()]
ax_obs.boxplot([why.evidence[n_observed == k] for k in counts], positions=counts, widths=0.6)
positive = why.evidence[why.evidence > 0]
# A row with nothing observed has evidence 0 exactly: symmetric-log keeps it on the axis.
ax_obs.set_yscale("symlog", linthresh=float(positive.min()) if positive.size else 1.0)
ax_obs.set_xlabel("observed features in the row (of 10)")
ax_obs.set_ylabel("evidence Λ")
ax_obs.set_title("Evidence grows with what was observed")
fig.tight_layout()
