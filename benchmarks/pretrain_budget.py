"""LevyForecaster's pretraining budget: zero-shot accuracy against optimizer steps.

``make_irregular_vitals(n_patients=60, random_state=1)`` (another draw than the one
``benchmarks/speed.py`` times and ``benchmarks/sigma_missing.py`` reports): pretrain on
patients 0–19 (``context_length="12h"``, ``max_horizon="4h"``, as issue 12's timing) with
``max_steps`` given on the command line, then forecast patients 40–59 zero-shot from 60 % of
each stay, every observation in the next 4 h at its real time. Reports the Gaussian CRPS,
the 90 % coverage and the pretraining CPU seconds (one torch thread); writes
``benchmarks/results/pretrain_budget.md`` (the tables of this run only; the run log kept by
hand is ``pretrain_budget_notes.md``, which no script writes). ``--levy`` overrides other
defaults (JSON), for every budget.

Run: ``OMP_NUM_THREADS=1 python -m benchmarks.pretrain_budget 5000 1500 500
[--levy '{"normalization": "trend"}']``.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import pandas as pd
import torch

from levy_sklearn import LevyForecaster
from levy_sklearn.datasets import make_irregular_vitals
from levy_sklearn.metrics import gaussian_crps, gaussian_interval, interval_coverage

from ._common import write_report
from .sigma_missing import held_out_cuts


def score(forecaster: LevyForecaster, panel: pd.DataFrame) -> dict:
    means, stds, truths = [], [], []
    for _, history, future in held_out_cuts(panel):
        forecaster.fit(history)
        fh = pd.to_timedelta(future.index - history.index[-1])
        mean = forecaster.predict(fh=fh).to_numpy()
        std = np.sqrt(forecaster.predict_var(fh=fh).to_numpy())
        observed = np.isfinite(future.to_numpy())
        truths.append(future.to_numpy()[observed])
        means.append(mean[observed])
        stds.append(std[observed])
    y, mean, std = (np.concatenate(a) for a in (truths, means, stds))
    return {
        "crps": float(gaussian_crps(y, mean, std)),
        "cov90": interval_coverage(y, *gaussian_interval(mean, std, coverage=0.9)),
        "points": len(y),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("budgets", nargs="*", type=int, default=[5000], help="max_steps")
    parser.add_argument("--levy", default="{}", help="LevyForecaster overrides, as JSON")
    args = parser.parse_args()
    budgets, levy = args.budgets, json.loads(args.levy)
    torch.set_num_threads(1)
    panel = make_irregular_vitals(n_patients=60, random_state=1)
    train = panel[panel.index.get_level_values(0) < 20]
    rows = []
    for steps in budgets:
        forecaster = LevyForecaster(
            context_length="12h", max_horizon="4h", max_steps=steps, random_state=0, **levy
        )
        start = time.process_time()
        forecaster.pretrain(train)
        seconds = time.process_time() - start
        rows.append(
            {
                "max_steps": steps,
                "epochs": len(forecaster.pretrained_net_.history),
                "pretrain CPU s": seconds,
                **score(forecaster, panel),
            }
        )
        print(rows[-1], flush=True)
    table = pd.DataFrame(rows)
    table["CRPS / first"] = table["crps"] / table["crps"].iloc[0]
    text = (
        "# LevyForecaster pretraining budget (held-out vitals draw)\n\n"
        f"Produced by `OMP_NUM_THREADS=1 python -m benchmarks.pretrain_budget "
        f"{' '.join(map(str, budgets))}"
        + (f" --levy '{args.levy}'" if levy else "")
        + "` (see its docstring).\n\n"
        + table.to_markdown(index=False, floatfmt=".3f")
        + "\n"
    )
    write_report(text, "pretrain_budget.md")


if __name__ == "__main__":
    main()
