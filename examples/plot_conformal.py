"""
Conformal intervals with a coverage guarantee
=============================================

The Gaussian intervals ``mean ± z σ`` of
:class:`~levy_sklearn.regressor.LevyAttentionRegressor` use the model's learned σ and a
Normal shape; nothing guarantees that a 90% interval holds 90% of new targets. Split
conformal prediction (through MAPIE) fixes the *scale* of the intervals on a calibration set
the model never saw, with the score ``|y − μ| / σ``, while keeping σ's *ranking*: the
intervals stay wide where σ is large and narrow where it is small. This example compares
the two kinds of interval at several nominal levels on held-out data.
"""

# %%
# Train on half the data
# ----------------------
# The model is fitted on half of scikit-learn's diabetes data. The other half is split at
# random into a calibration set and a test set, 20 times over, so the coverages below are
# averages over calibration sets, which is what the conformal guarantee is about.

import matplotlib.pyplot as plt
import pandas as pd
from sklearn.datasets import load_diabetes
from sklearn.model_selection import train_test_split

from levy_sklearn.metrics import interval_coverage, interval_width
from levy_sklearn.regressor import LevyAttentionRegressor

X, y = load_diabetes(return_X_y=True)
X_train, X_rest, y_train, y_rest = train_test_split(X, y, test_size=0.5, random_state=0)

reg = LevyAttentionRegressor(max_epochs=60, batch_size=64, random_state=0)
reg.fit(X_train, y_train)

# %%
# Conformalize on a calibration split
# -----------------------------------
# ``conformalize`` computes the mean and σ of the calibration rows once and keeps them;
# ``predict_interval(..., method="conformal")`` then asks MAPIE's split-conformal regressor
# for the intervals, one calibration per requested level. A new ``conformalize`` call
# replaces the calibration set; the network itself is not refitted.

levels = [0.5, 0.6, 0.7, 0.8, 0.9, 0.95]
rows = []
for split in range(20):
    X_cal, X_test, y_cal, y_test = train_test_split(
        X_rest, y_rest, test_size=0.5, random_state=split
    )
    reg.conformalize(X_cal, y_cal)
    gaussian = reg.predict_interval(X_test, coverage=levels)  # (n, lower/upper, level)
    conformal = reg.predict_interval(X_test, coverage=levels, method="conformal")
    for k, level in enumerate(levels):
        for name, bounds in [("Gaussian", gaussian), ("conformal", conformal)]:
            lower, upper = bounds[:, 0, k], bounds[:, 1, k]
            rows.append(
                {
                    "split": split,
                    "nominal": level,
                    "method": name,
                    "coverage": interval_coverage(y_test, lower, upper),
                    "mean width": interval_width(lower, upper),
                }
            )
print(f"calibration {len(y_cal)}, test {len(y_test)} rows per split")
results = pd.DataFrame(rows).groupby(["nominal", "method"])[["coverage", "mean width"]]
summary = results.mean().unstack("method")
print(summary.round(3).to_string())

# %%
# Nominal against empirical coverage
# ----------------------------------
# A calibrated method lies on the diagonal. With ``n`` calibration rows, split conformal
# guarantees an average coverage of at least the nominal level, and at most ``1/(n + 1)``
# above it. The error bars span the 10% to 90% quantiles of the coverage over the 20 test
# sets of about 110 rows: one test set alone scatters by several percentage points. The
# right panel shows what the coverage costs in interval width.

low = results.quantile(0.1).unstack("method")["coverage"]
high = results.quantile(0.9).unstack("method")["coverage"]

fig, (ax, ax_width) = plt.subplots(1, 2, figsize=(10, 4.5))
ax.plot([0.3, 1.0], [0.3, 1.0], color="black", lw=1, ls="--", label="perfect calibration")
for name, marker, shift in [("Gaussian", "o", -0.004), ("conformal", "s", 0.004)]:
    mean = summary["coverage"][name]
    ax.errorbar(
        mean.index + shift,
        mean,
        yerr=[mean - low[name], high[name] - mean],
        marker=marker,
        capsize=3,
        label=name,
    )
ax.set_xlim(0.3, 1.0)
ax.set_ylim(0.3, 1.0)
ax.set_aspect("equal")
ax.set_xlabel("nominal coverage")
ax.set_ylabel("empirical coverage (mean over 20 test sets)")
ax.set_title("Coverage")
ax.legend(loc="upper left")

for name, marker in [("Gaussian", "o"), ("conformal", "s")]:
    ax_width.plot(levels, summary["mean width"][name], marker=marker, label=name)
ax_width.set_xlabel("nominal coverage")
ax_width.set_ylabel("mean interval width (target units)")
ax_width.set_title("Width")
ax_width.legend(loc="upper left")
fig.tight_layout()
