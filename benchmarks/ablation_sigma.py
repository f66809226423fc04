"""Why does σ rank errors, and which training choices make it rank them better? An ablation.

Variants of the Lévy regressor (``LevyAttentionRegressor`` with the claims benchmark's network,
``benchmarks/claims.py``), each against the same cells, next to the softmax twin's variance
head (``attention="softmax"``), on a documented subset of the claims grid chosen to differ
from the reported one: the seeds are 5 and 6 (the claims table reports seeds 0–4), so the
defaults chosen here are not chosen on the rows they are reported on.

Per cell: MSE ratio to the twin, Spearman(σ, |error|), AURC (area under the risk–coverage
curve, lower is better), Gaussian 90 % coverage, and the one-sided p-value of
Spearman(evidence, |error|) < 0. Writes ``benchmarks/results/ablation_sigma.md``.

Run: ``OMP_NUM_THREADS=1 python benchmarks/ablation_sigma.py --workers 2``
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from joblib import Parallel, delayed
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
from claims import DATASETS, NETWORK, make_cell_data  # noqa: E402

from levy_sklearn.metrics import aurc, spearman_uncertainty  # noqa: E402
from levy_sklearn.regressor import LevyAttentionRegressor  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
Z90 = float(stats.norm.ppf(0.95))
GRID = {
    "datasets": ["co2", "glucose", "remifentanil", "vitals"],
    "keeps": [1.0, 0.2],
    "seeds": [5, 6],
    "max_epochs": 16,
    "caps": (300, 100, 100),
}
#: name -> LevyAttentionRegressor parameters on top of NETWORK (the first is the reference).
# The claims network as it was when this ablation ran (it then adopted 4 heads from here), and
# the regressor's observation_dropout default of that time, so that a rerun reproduces the
# table.
BASE = {**NETWORK, "n_heads": 8, "observation_dropout": 0.3}
VARIANTS = {
    "softmax twin (variance head)": {"attention": "softmax"},
    "evidence fix alone (observation_dropout=0)": {"observation_dropout": 0.0},
    "+ observation dropout 0.3": {"observation_dropout": 0.3},
    "+ observation dropout 0.5": {"observation_dropout": 0.5},
    "dropout 0.5, loss nll": {"observation_dropout": 0.5, "loss": "nll"},
    "dropout 0.5, loss beta_nll": {"observation_dropout": 0.5, "loss": "beta_nll"},
    "dropout 0.5, 2 windowed heads": {"observation_dropout": 0.5, "n_windowed_heads": 2},
    "dropout 0.5, value width 8 (4 heads)": {"observation_dropout": 0.5, "n_heads": 4},
    "dropout 0.5, keys on encoded tokens": {"observation_dropout": 0.5, "positional_keys": False},
    # Round 2, after round 1 pointed at value width and the NLL. The defaults adopted from
    # both rounds: 4 heads (value width 8), observation_dropout 0.5, CRPS.
    "softmax twin, 4 heads": {"attention": "softmax", "n_heads": 4},
    "4 heads, dropout 0.3": {"observation_dropout": 0.3, "n_heads": 4},
    "4 heads, dropout 0.5, loss nll": {"observation_dropout": 0.5, "n_heads": 4, "loss": "nll"},
    "4 heads, dropout 0.7": {"observation_dropout": 0.7, "n_heads": 4},
    "2 heads (width 16), dropout 0.5": {"observation_dropout": 0.5, "n_heads": 2},
    "4 heads, d_model 64 (width 16), dropout 0.5": {
        "observation_dropout": 0.5,
        "n_heads": 4,
        "d_model": 64,
    },
}


def run_cell(name: str, raw, keep: float, seed: int) -> list[dict]:
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    data, times = make_cell_data(name, raw, keep, seed, GRID["caps"])
    (X_tr, y_tr), _, (X_te, y_te) = data
    if len(y_tr) < 20 or len(y_te) < 10:
        return []
    rows = []
    for variant, params in VARIANTS.items():
        model = LevyAttentionRegressor(
            **{**BASE, **params},
            max_epochs=GRID["max_epochs"],
            feature_times=times,
            random_state=100 * seed,
        )
        start = time.perf_counter()
        model.fit(X_tr, y_tr)
        seconds = time.perf_counter() - start
        why = model.predict_uncertainty(X_te)
        errors = np.abs(y_te - why.mean)
        std = np.maximum(why.std, 1e-9 * float(np.std(y_tr) or 1.0))
        p_evidence = np.nan
        if params.get("attention") != "softmax" and np.ptp(why.evidence) > 0:
            p_evidence = stats.spearmanr(why.evidence, errors, alternative="less").pvalue
        rows.append(
            dict(
                dataset=name,
                keep=keep,
                seed=seed,
                variant=variant,
                mse=float(np.mean(errors**2)),
                spearman=spearman_uncertainty(errors, std),
                aurc=aurc(errors, std),
                coverage90=float(np.mean(errors <= Z90 * std)),
                p_evidence=p_evidence,
                fit_s=seconds,
            )
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(1)
    start = time.perf_counter()
    raw = {name: DATASETS[name].load() for name in GRID["datasets"]}
    jobs = [(n, k, s) for k in GRID["keeps"] for n in GRID["datasets"] for s in GRID["seeds"]]
    parts = Parallel(n_jobs=args.workers)(delayed(run_cell)(n, raw[n], k, s) for n, k, s in jobs)
    table = pd.DataFrame([row for part in parts for row in part])
    twin = table[table.variant == next(iter(VARIANTS))].set_index(["dataset", "keep", "seed"])
    cell = ["dataset", "keep", "seed"]
    table = table.join(twin[["mse", "spearman", "aurc"]], on=cell, rsuffix="_twin")
    table["mse_ratio"] = table.mse / table.mse_twin
    table["beats_twin"] = (table.spearman > table.spearman_twin) & (table.aurc < table.aurc_twin)
    sparse = table.keep < 1.0
    summary = table.groupby("variant", sort=False).agg(
        median_mse_ratio=("mse_ratio", "median"),
        median_spearman=("spearman", "median"),
        mean_spearman=("spearman", "mean"),
        mean_aurc_rel=("aurc", lambda a: np.nan),
        coverage90=("coverage90", "mean"),
        cells_beating_twin=("beats_twin", "sum"),
        fit_s=("fit_s", "mean"),
    )
    summary["mean_aurc_rel"] = (
        table.assign(rel=table.aurc / table.aurc_twin).groupby("variant", sort=False).rel.mean()
    )
    summary["evidence_significant_sparse"] = (
        table[sparse]
        .groupby(["variant", "dataset", "keep"], sort=False)
        .p_evidence.apply(lambda p: bool((p < 0.05).mean() > 0.5) if p.notna().any() else np.nan)
        .groupby("variant", sort=False)
        .apply(lambda s: f"{int(s.sum())}/{s.notna().sum()}" if s.notna().any() else "–")
    )
    per_cell = table.pivot_table(
        index=["dataset", "keep"], columns="variant", values="spearman", sort=False
    )
    elapsed = (time.perf_counter() - start) / 60
    lines = [
        "# Ablation: what makes the Lévy σ rank errors",
        "",
        f"Produced by `OMP_NUM_THREADS=1 python benchmarks/ablation_sigma.py --workers "
        f"{args.workers}` ({elapsed:.1f} min, torch {torch.__version__}). Grid: datasets "
        f"{GRID['datasets']}, keeps {GRID['keeps']}, seeds {GRID['seeds']} (the claims table "
        f"reports seeds 0–4), base network {BASE}, {GRID['max_epochs']} epochs; cells as in "
        "`benchmarks/claims.py` (lag-bin rows, chronological 60/20/20 split, capped "
        f"{GRID['caps']}).",
        "",
        "`mean_aurc_rel`: AURC relative to the twin's, averaged over cells (< 1 is better). "
        "`cells_beating_twin`: cells where both Spearman is higher and AURC lower than the "
        f"twin's variance head (of {table[cell].drop_duplicates().shape[0]}). "
        "`evidence_significant_sparse`: (dataset, 20 % keep) groups where Spearman(evidence, "
        "|error|) < 0 at p < 0.05 in most seeds.",
        "",
        summary.round(3).to_markdown(),
        "",
        "## Spearman(σ, |error|) per cell (mean over seeds)",
        "",
        per_cell.round(3).to_markdown(),
        "",
    ]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "ablation_sigma.md").write_text("\n".join(lines))
    table.to_csv(RESULTS / "ablation_sigma.csv", index=False)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
