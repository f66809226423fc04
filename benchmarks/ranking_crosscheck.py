"""Whose errors does each σ rank? Claim (2b) of ``claims.py`` read on common errors.

Claim (2b) compares Spearman(σ, |error|) of the Lévy σ on the Lévy mean's errors with that of
``mc_dropout+head`` (20 dropout passes of the softmax twin: σ² = the passes' spread + the
twin's variance head) on *its own* mean's errors, the average of the passes. The two means
differ, so the claim mixes two questions: how well a σ ranks errors, and how much of a
method's own error its σ was built from. This script fits the claims' networks on the claims'
cells (``claims.make_cell_data``, ``claims.NETWORK``, full mode: 7 datasets × 4 keeps × seeds
0–4, model seed ``100 · seed``) and scores every σ against every mean's errors:

* ``levy σ / levy err`` and ``mc+head σ / mc err``: the two numbers claim (2b) compares
  (they reproduce ``claims.csv``);
* ``mc+head σ / levy err``: the dropout σ ranking the errors of the Lévy mean;
* ``levy σ / mc err``: the Lévy σ ranking the errors of the dropout mean;
* ``mc spread / mc err`` and ``mc spread / levy err``: the passes' spread alone;

each also by AURC (claim 2b asks both: Spearman higher and AURC lower).

Per cell (dataset, keep) the means over seeds; the report counts the cells where the Lévy σ
ranks better on each pair of errors, and the MSE of the dropout mean relative to the Lévy
mean's. Only the public API of levy-sklearn (``predict(return_std=True)``, ``sample_y``).

Run: ``OMP_NUM_THREADS=1 python -m benchmarks.ranking_crosscheck --workers 2`` (about 3 min
on two cores) → ``benchmarks/results/ranking_crosscheck.md``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
import torch
from joblib import Parallel, delayed

from levy_sklearn.metrics import aurc, spearman_uncertainty
from levy_sklearn.regressor import LevyAttentionRegressor

from ._common import short_commit, write_report
from .claims import (
    DATASETS,
    MIN_HELD_OUT_ROWS,
    MIN_TRAIN_ROWS,
    MODES,
    N_MC_PASSES,
    NETWORK,
    make_cell_data,
)

PAIRS = {
    "levy σ / levy err": ("levy", "levy"),
    "mc+head σ / mc err": ("mc+head", "mc"),
    "mc+head σ / levy err": ("mc+head", "levy"),
    "levy σ / mc err": ("levy", "mc"),
    "mc spread / mc err": ("mc spread", "mc"),
    "mc spread / levy err": ("mc spread", "levy"),
}


def run_cell(name: str, raw, keep: float, seed: int, mode: dict) -> dict | None:
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    data, times = make_cell_data(name, raw, keep, seed, mode["caps"])
    (X_tr, y_tr), (X_cal, _), (X_te, y_te) = data
    if len(y_tr) < MIN_TRAIN_ROWS or min(len(X_cal), len(y_te)) < MIN_HELD_OUT_ROWS:
        return None

    def fit(attention: str) -> LevyAttentionRegressor:
        return LevyAttentionRegressor(
            **NETWORK,
            attention=attention,
            max_epochs=mode["max_epochs"],
            feature_times=times,
            random_state=100 * seed,
        ).fit(X_tr, y_tr)

    levy, twin = fit("levy"), fit("softmax")
    mean_l, std_l = levy.predict(X_te, return_std=True)
    _, head = twin.predict(X_te, return_std=True)
    draws = twin.sample_y(X_te, N_MC_PASSES, method="mc_dropout", random_state=seed)
    spread2 = draws.var(1, ddof=1)
    means = {"levy": mean_l, "mc": draws.mean(1)}
    sigmas = {"levy": std_l, "mc+head": np.sqrt(spread2 + head**2), "mc spread": np.sqrt(spread2)}
    row = {"dataset": name, "keep": keep, "seed": seed}
    for label, (sigma, err) in PAIRS.items():
        errors = np.abs(y_te - means[err])
        row[label] = spearman_uncertainty(errors, sigmas[sigma])
        row[f"AURC {label}"] = aurc(errors, sigmas[sigma])
    row["mse mc / levy"] = np.mean((y_te - means["mc"]) ** 2) / np.mean((y_te - mean_l) ** 2)
    return row


def report(table: pd.DataFrame, seconds: float) -> str:
    cells = table.groupby(["dataset", "keep"], sort=False).mean(numeric_only=True)
    cells = cells.drop(columns="seed")
    n = len(cells)

    def wins(a: str, b: str) -> str:
        return f"{int((cells[a] > cells[b]).sum())}/{n}"

    def both(a: str, b: str) -> str:
        better = (cells[a] > cells[b]) & (cells[f"AURC {a}"] < cells[f"AURC {b}"])
        return f"{int(better.sum())}/{n}"

    commit = short_commit()
    lines = [
        "# Whose errors does each σ rank? Claim (2b) on common errors",
        "",
        f"commit `{commit}`, torch {torch.__version__}, 1 torch thread per process, "
        f"{seconds / 60:.1f} min. Produced by `OMP_NUM_THREADS=1 python "
        "-m benchmarks.ranking_crosscheck --workers 2`; the claims' full grid, network and "
        "seeds (see `claims.md`), the Lévy net and the twin with model seed 100 · seed. "
        "Spearman(σ, |error|), means over seeds per cell.",
        "",
        "| comparison | cells where the first's Spearman is higher | ... and its AURC lower "
        "too | median Spearman of the first | of the second |",
        "|---|---|---|---|---|",
    ]
    for first, second in (
        ("levy σ / levy err", "mc+head σ / mc err"),
        ("levy σ / levy err", "mc+head σ / levy err"),
        ("levy σ / mc err", "mc+head σ / mc err"),
        ("mc spread / mc err", "mc spread / levy err"),
    ):
        lines.append(
            f"| {first} vs {second} | {wins(first, second)} | {both(first, second)} | "
            f"{cells[first].median():.3f} | {cells[second].median():.3f} |"
        )
    lines += [
        "",
        f"MSE of the dropout mean / the Lévy mean's: median {cells['mse mc / levy'].median():.3f}"
        f", above 1 in {int((cells['mse mc / levy'] > 1).sum())}/{n} cells.",
        "",
        "Reading: the first row is claim (2b) as `claims.py` scores it (each σ on its own "
        "mean's errors); the second and third put both σ on the same errors, the Lévy mean's "
        "and the dropout mean's, where AURC compares rankings of one set of errors. The last "
        "row asks how much better the passes' spread ranks the errors of the mean it was "
        "averaged into than those of another model's mean; its AURC column compares two error "
        "levels, not two rankings.",
        "",
        "## Per cell",
        "",
        cells[[*PAIRS, "mse mc / levy"]].reset_index().to_markdown(index=False, floatfmt=".3f"),
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(1)
    mode = MODES["full"]
    start = time.perf_counter()
    raw = {name: DATASETS[name].load() for name in mode["datasets"]}
    jobs = [(n, k, s) for k in mode["keeps"] for n in mode["datasets"] for s in mode["seeds"]]
    rows = Parallel(n_jobs=args.workers)(
        delayed(run_cell)(n, raw[n], k, s, mode) for n, k, s in jobs
    )
    table = pd.DataFrame([r for r in rows if r is not None])
    text = report(table, time.perf_counter() - start)
    write_report(text, "ranking_crosscheck.md")


if __name__ == "__main__":
    main()
