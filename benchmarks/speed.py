"""Training throughput at default hyperparameters (issue 12's three timings), one torch thread.

* ``airline``   ``LevyForecaster(random_state=0).fit(load_airline())``;
* ``vitals``    ``LevyForecaster(context_length="12h", max_horizon="4h", random_state=0)``
  ``.pretrain(make_irregular_vitals(n_patients=20))``;
* ``regressor`` ``LevyAttentionRegressor(random_state=0).fit(X, y)``, ``X`` 5,000 × 10 normal.

Prints wall and process CPU seconds with the load average of the machine (CPU seconds are
the better guide on a shared machine) and, with ``--profile``, the torch.profiler top table of
each run; writes ``benchmarks/results/speed.md``. ``--vitals-epochs N`` pretrains the vitals
panel for ``N`` epochs instead of the default budget and reports seconds per epoch too (the
default budget took 79 min before issue 12).

Run: ``python benchmarks/speed.py [--profile] [--vitals-epochs N]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import time
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import torch
from sktime.datasets import load_airline
from torch.profiler import ProfilerActivity, profile

from levy_sklearn import LevyAttentionRegressor, LevyForecaster
from levy_sklearn.datasets import make_irregular_vitals

RESULTS = Path(__file__).resolve().parent / "results"


def airline() -> object:
    return LevyForecaster(random_state=0).fit(load_airline())


def vitals(epochs: int | None) -> Callable[[], object]:
    def run() -> object:
        params = {} if epochs is None else {"max_epochs": epochs}
        forecaster = LevyForecaster(
            context_length="12h", max_horizon="4h", random_state=0, **params
        )
        return forecaster.pretrain(make_irregular_vitals(n_patients=20))

    return run


def regressor() -> object:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 10))
    y = X @ rng.normal(size=10) + rng.normal(size=5000)
    return LevyAttentionRegressor(random_state=0).fit(X, y)


def timed(run: Callable[[], object], profiled: bool) -> tuple[float, float, object, str]:
    """Wall and CPU seconds of ``run()``, its result and (``profiled``) the top-op table."""
    context = profile(activities=[ProfilerActivity.CPU]) if profiled else nullcontext()
    with context as prof:
        wall, cpu = time.perf_counter(), time.process_time()
        result = run()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    table = ""
    if profiled:
        table = prof.key_averages().table(
            sort_by="self_cpu_time_total", row_limit=15, max_name_column_width=45
        )
    return wall, cpu, result, table


def epochs_run(result: object) -> int:
    net = getattr(result, "net_", None) or getattr(result, "pretrained_net_", None)
    return len(net.history)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--vitals-epochs", type=int, default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    runs = {
        "airline fit": airline,
        "vitals-20 pretrain": vitals(args.vitals_epochs),
        "regressor fit 5000 × 10": regressor,
    }
    rows, tables = [], []
    for name, run in runs.items():
        load = os.getloadavg()[0]
        wall, cpu, result, table = timed(run, args.profile)
        epochs = epochs_run(result)
        rows.append(
            f"| {name} | {epochs} | {wall:.1f} | {cpu:.1f} | {cpu / epochs:.2f} | {load:.1f} |"
        )
        print(rows[-1], flush=True)
        if table:
            tables.append(f"### {name}\n\n```\n{table}```\n")
    lines = [
        "# Training throughput at defaults",
        "",
        f"commit `{commit}`, torch {torch.__version__}, {platform.machine()}, 1 thread"
        + (f", vitals for {args.vitals_epochs} epoch(s)" if args.vitals_epochs else "")
        + ".",
        "",
        "| run | epochs | wall (s) | CPU (s) | CPU per epoch (s) | load average |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
        *tables,
    ]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "speed.md").write_text("\n".join(lines))


if __name__ == "__main__":
    main()
