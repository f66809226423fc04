"""The sweep behind LevyAttentionRegressor's defaults: one parameter at a time around them.

Two tasks, each over the same random splits for every configuration:

* scikit-learn's diabetes data (442 rows, 10 features): test R², beside ``RidgeCV``;
* a synthetic heteroscedastic task (600 rows, 4 features): ``y = 2 sin(x0) + x1 + ε`` with
  ``sd(ε) = 0.2 + |x2|``, and 30 % of the feature cells hidden at random (``NaN``): test R²,
  CRPS and Spearman(σ, |error|) (does σ rank the errors?).

Configurations: the defaults, then each of ``loss`` ∈ {crps, nll, mse}, ``n_heads`` ∈ {4, 8},
``d_model`` ∈ {16, 32, 64}, ``n_layers`` ∈ {0, 1}, ``positional_keys`` ∈ {True, False},
``max_epochs`` ∈ {20, 40, 80} changed alone. Writes
``benchmarks/results/regressor_defaults.md``.

Run: ``OMP_NUM_THREADS=1 python -m benchmarks.regressor_defaults [--splits 5]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
import torch
from sklearn.datasets import load_diabetes
from sklearn.linear_model import RidgeCV
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

from levy_sklearn.metrics import gaussian_crps, spearman_uncertainty
from levy_sklearn.regressor import LevyAttentionRegressor

from ._common import short_commit, stamp, write_report

DEFAULTS = {
    "loss": "crps",
    "n_heads": 4,
    "d_model": 32,
    "n_layers": 0,
    "positional_keys": True,
    "max_epochs": 40,
}
ALTERNATIVES = {
    "loss": ["nll", "mse"],
    "n_heads": [8],
    "d_model": [16, 64],
    "n_layers": [1],
    "positional_keys": [False],
    "max_epochs": [20, 80],
}


def heteroscedastic(seed: int, n: int = 600) -> tuple[np.ndarray, np.ndarray]:
    """Noise growing with ``|x2|``, and 30 % of the feature cells hidden at random."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = 2 * np.sin(X[:, 0]) + X[:, 1] + (0.2 + np.abs(X[:, 2])) * rng.normal(size=n)
    X[rng.random(X.shape) < 0.3] = np.nan
    return X, y


def configurations() -> dict[str, dict]:
    """The defaults, then every alternative value of one parameter at a time."""
    configs = {"defaults": {}}
    for name, values in ALTERNATIVES.items():
        for value in values:
            configs[f"{name}={value}"] = {name: value}
    return configs


def score(config: dict, splits: int) -> dict[str, list[float]]:
    """Test scores of one configuration over the random splits of both tasks."""
    out: dict[str, list[float]] = {
        k: [] for k in ("diabetes_r2", "het_r2", "het_crps", "het_spearman", "fit_s")
    }
    X_d, y_d = load_diabetes(return_X_y=True)
    for split in range(splits):
        X_tr, X_te, y_tr, y_te = train_test_split(X_d, y_d, test_size=0.25, random_state=split)
        start = time.perf_counter()
        reg = LevyAttentionRegressor(random_state=split, **config).fit(X_tr, y_tr)
        out["fit_s"].append(time.perf_counter() - start)
        out["diabetes_r2"].append(r2_score(y_te, reg.predict(X_te)))

        X_h, y_h = heteroscedastic(seed=split)
        X_tr, X_te, y_tr, y_te = train_test_split(X_h, y_h, test_size=0.5, random_state=split)
        reg = LevyAttentionRegressor(random_state=split, **config).fit(X_tr, y_tr)
        mean, std = reg.predict(X_te, return_std=True)
        out["het_r2"].append(r2_score(y_te, mean))
        out["het_crps"].append(gaussian_crps(y_te, mean, std))
        out["het_spearman"].append(spearman_uncertainty(np.abs(y_te - mean), std))
    return out


def ridge_r2(splits: int) -> list[float]:
    X, y = load_diabetes(return_X_y=True)
    scores = []
    for split in range(splits):
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=split)
        scores.append(r2_score(y_te, RidgeCV().fit(X_tr, y_tr).predict(X_te)))
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    start = time.perf_counter()
    results = {}
    for label, config in configurations().items():
        results[label] = score(config, args.splits)
        print(label, {k: round(float(np.mean(v)), 4) for k, v in results[label].items()})
    ridge = ridge_r2(args.splits)
    elapsed = time.perf_counter() - start

    table = {label: pd.DataFrame(r) for label, r in results.items()}
    means = pd.DataFrame({label: t.mean() for label, t in table.items()}).T
    sds = pd.DataFrame({label: t.std(ddof=1) for label, t in table.items()}).T
    # Sign that makes "better" positive (CRPS is lower-better); splits are paired.
    better = {"diabetes_r2": 1, "het_r2": 1, "het_crps": -1, "het_spearman": 1}
    findings = []
    for label in table:
        if label == "defaults":
            continue
        for metric, sign in better.items():
            diff = sign * (table[label][metric] - table["defaults"][metric])
            se = diff.std(ddof=1) / np.sqrt(len(diff))
            if diff.mean() > 2 * se:
                findings.append(
                    f"- `{label}` beats the default on {metric}: paired difference "
                    f"{sign * diff.mean():+.4f} (more than 2 paired standard errors, {se:.4f})."
                )

    commit = short_commit()
    columns = {
        "diabetes_r2": "diabetes R²",
        "het_r2": "heteroscedastic R²",
        "het_crps": "heteroscedastic CRPS",
        "het_spearman": "Spearman(σ, \\|err\\|)",
        "fit_s": "fit s (diabetes)",
    }
    lines = [
        "# LevyAttentionRegressor defaults: one-at-a-time sweep",
        "",
        f"{stamp(commit)}, 1 thread, "
        f"{args.splits} random splits per task (the same for every configuration), "
        f"{elapsed / 60:.1f} min. Produced by `OMP_NUM_THREADS=1 python "
        f"-m benchmarks.regressor_defaults --splits {args.splits}`.",
        "",
        f"Defaults: {DEFAULTS} (lr 5e-3, batch 64, observation_dropout "
        f"{LevyAttentionRegressor().observation_dropout}). Diabetes: 75/25 "
        "splits; heteroscedastic: 600 rows, 50/50 splits. Mean ± s.d. over splits.",
        "",
        "| configuration | " + " | ".join(columns.values()) + " |",
        "|---|" + "---|" * len(columns),
    ]
    for label in results:
        cells = " | ".join(
            f"{means.loc[label, m]:.4f} ± {sds.loc[label, m]:.3f}"
            if m != "fit_s"
            else f"{means.loc[label, m]:.1f}"
            for m in columns
        )
        lines.append(f"| {label} | {cells} |")
    lines += [
        f"| RidgeCV (reference) | {np.mean(ridge):.4f} ± {np.std(ridge, ddof=1):.3f} | | | | |",
        "",
        "## Where an alternative beats a default",
        "",
    ]
    lines += findings or ["- none: no alternative is better by 2 paired standard errors."]
    text = "\n".join(lines) + "\n"
    write_report(text, "regressor_defaults.md")


if __name__ == "__main__":
    main()
