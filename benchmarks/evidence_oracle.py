"""Can anything that counts observations rank |error| on the claims' sparse cells?

Claim (6a) of ``benchmarks/claims.py`` asks the evidence ``Λ`` to be significantly informative
about |error| (Spearman < 0, one-sided t-test over seeds 0–4, p < 0.05) in every cell kept at
10 % and 20 %. Issue 11 requires the evidence to count observations only, so the best it can
do is what some function of *which* features a row observed can do. This script trains the
claims' Lévy network on each sparse cell (same rows, network, budget and seeds as
``claims.py --full``) and ranks its test errors by:

* ``evidence``: the network's own ``Λ`` (summed over heads; the claims' statistic);
* ``count``: the number of observed features;
* ``recency``: the time of the most recent observed lag (closer to the target = more recent);
* ``mask fit``: a ridge regression of the calibration rows' |error| on the observation mask,
  applied to the test rows (a learned weighting of observations, fitted on other rows).

A cell where none of them is significant is one where no evidence that counts observations
can be; a cell where they are and ``Λ`` is not is one the network could still learn.
Writes ``benchmarks/results/evidence_oracle.md``.

Run: ``OMP_NUM_THREADS=1 python -m benchmarks.evidence_oracle`` (about 2 minutes).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import torch
from scipy import stats
from sklearn.linear_model import RidgeCV

from levy_sklearn import LevyAttentionRegressor

from ._common import write_report
from .claims import DATASETS, MIN_HELD_OUT_ROWS, MIN_TRAIN_ROWS, MODES, NETWORK, make_cell_data

SPARSE_KEEPS = (0.2, 0.1)
STATISTICS = ("evidence", "count", "recency", "mask fit")


def cell_rows(name: str, raw, keep: float, seed: int) -> dict | None:
    """Spearman of each statistic with |error| on one cell's test rows (``None``: skipped)."""
    mode = MODES["full"]
    data, times = make_cell_data(name, raw, keep, seed, mode["caps"])
    (X_tr, y_tr), (X_cal, y_cal), (X_te, y_te) = data
    if len(y_tr) < MIN_TRAIN_ROWS or min(len(y_cal), len(y_te)) < MIN_HELD_OUT_ROWS:
        return None
    model = LevyAttentionRegressor(
        **NETWORK, max_epochs=mode["max_epochs"], feature_times=times, random_state=100 * seed
    ).fit(X_tr, y_tr)
    err_te, err_cal = np.abs(y_te - model.predict(X_te)), np.abs(y_cal - model.predict(X_cal))
    seen_te, seen_cal = ~np.isnan(X_te), ~np.isnan(X_cal)
    recency = np.where(seen_te, times[None, :], -np.inf).max(axis=1)
    mask_fit = RidgeCV(alphas=np.logspace(-2, 3, 12)).fit(seen_cal.astype(float), err_cal)
    # Each statistic is oriented so that "more" means "more evidence" (a negative Spearman
    # with |error| is informative), as Λ is.
    ranked = {
        "evidence": model.predict_uncertainty(X_te).evidence,
        "count": seen_te.sum(axis=1),
        "recency": recency,
        "mask fit": -mask_fit.predict(seen_te.astype(float)),
    }
    return {k: stats.spearmanr(v, err_te).statistic for k, v in ranked.items()}


def main() -> None:
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    rows = []
    for name in MODES["full"]["datasets"]:
        raw = DATASETS[name].load()
        for keep in SPARSE_KEEPS:
            for seed in MODES["full"]["seeds"]:
                rho = cell_rows(name, raw, keep, seed)
                if rho is not None:
                    rows.append({"dataset": name, "keep": keep, "seed": seed, **rho})
                    print(rows[-1], flush=True)
    table = pd.DataFrame(rows).groupby(["dataset", "keep"], sort=False)
    summary = table[list(STATISTICS)].mean()
    for statistic in STATISTICS:
        summary[f"p {statistic}"] = table[statistic].apply(
            lambda rho: stats.ttest_1samp(rho, 0.0, alternative="less").pvalue
        )
    significant = (summary[[f"p {s}" for s in STATISTICS]] < 0.05).sum()
    text = "\n".join(
        [
            "# Evidence that counts observations: what it could rank (claim 6a's sparse cells)",
            "",
            "Produced by `OMP_NUM_THREADS=1 python -m benchmarks.evidence_oracle` (see its "
            "docstring): mean Spearman with |error| over seeds 0–4 and the one-sided t-test "
            "p-value of claim (6a).",
            "",
            summary.to_markdown(floatfmt=".3f"),
            "",
            "Cells significant (p < 0.05) per statistic: "
            + ", ".join(f"{s[2:]} {n}/{len(summary)}" for s, n in significant.items())
            + ".",
            "",
        ]
    )
    write_report(text, "evidence_oracle.md")


if __name__ == "__main__":
    main()
