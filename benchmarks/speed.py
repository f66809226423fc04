"""Training throughput at default hyperparameters (issue 12's three timings), one torch thread.

* ``airline``   ``LevyForecaster(random_state=0).fit(load_airline())``;
* ``vitals``    ``LevyForecaster(context_length="12h", max_horizon="4h", random_state=0)``
  ``.pretrain(make_irregular_vitals(n_patients=20, random_state=0))`` (one fixed draw: the
  panel's size, and so the time, varies from draw to draw);
* ``regressor`` ``LevyAttentionRegressor(random_state=0).fit(X, y)``, ``X`` 5,000 × 10 normal.

Prints wall and process CPU seconds with the load average of the machine (CPU seconds are
the better guide on a shared machine) and writes ``benchmarks/results/speed.md``.
``--repeats N`` times every run ``N`` times in turn and reports the fastest and the slowest
(the fastest is the least disturbed by other load, as with :mod:`timeit`).
``--vitals-epochs N`` pretrains the vitals panel for ``N`` epochs instead of the default
budget. ``--profile`` adds the torch.profiler top table of each run, shortened to a few
epochs (a trace of a whole default fit is too large to summarise).

Run: ``python benchmarks/speed.py [--profile] [--vitals-epochs N] [--repeats N]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np
import torch
from provenance import short_commit
from sktime.datasets import load_airline
from torch.profiler import ProfilerActivity, profile

from levy_sklearn import LevyAttentionRegressor, LevyForecaster
from levy_sklearn.datasets import make_irregular_vitals

RESULTS = Path(__file__).resolve().parent / "results"


def epochs(max_epochs: int | None) -> dict:
    return {} if max_epochs is None else {"max_epochs": max_epochs}


def airline(max_epochs: int | None = None) -> object:
    return LevyForecaster(random_state=0, **epochs(max_epochs)).fit(load_airline())


def vitals(max_epochs: int | None = None) -> object:
    forecaster = LevyForecaster(
        context_length="12h", max_horizon="4h", random_state=0, **epochs(max_epochs)
    )
    return forecaster.pretrain(make_irregular_vitals(n_patients=20, random_state=0))


def regressor(max_epochs: int | None = None) -> object:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 10))
    y = X @ rng.normal(size=10) + rng.normal(size=5000)
    return LevyAttentionRegressor(random_state=0, **epochs(max_epochs)).fit(X, y)


def timed(run: Callable[[], object]) -> tuple[float, float, object]:
    """Wall and CPU seconds of ``run()`` and its result."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = run()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def top_ops(run: Callable[[], object]) -> str:
    """torch.profiler's table of the operators with the most self CPU time in ``run()``."""
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        run()
    return prof.key_averages().table(
        sort_by="self_cpu_time_total", row_limit=15, max_name_column_width=45
    )


def epochs_run(result: object) -> int:
    net = getattr(result, "net_", None) or getattr(result, "pretrained_net_", None)
    return len(net.history)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--vitals-epochs", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(1)
    commit = short_commit()
    runs = {
        "airline fit": (airline, None, 10),
        "vitals-20 pretrain": (vitals, args.vitals_epochs, 1),
        "regressor fit 5000 × 10": (regressor, None, 2),
    }
    rows, tables = [], []
    timings = {name: [] for name in runs}
    for _ in range(args.repeats):  # in turn, so that a burst of load hits every run alike
        for name, (run, max_epochs, _profiled) in runs.items():
            load = os.getloadavg()[0]
            wall, cpu, result = timed(partial(run, max_epochs))
            timings[name].append((cpu, wall, load, epochs_run(result)))
            print(name, f"wall {wall:.1f} s, CPU {cpu:.1f} s, load {load:.1f}", flush=True)
    for name, (run, _max_epochs, profiled_epochs) in runs.items():
        cpu, wall, load, n_epochs = min(timings[name])
        slow_cpu, slow_wall, _, _ = max(timings[name])
        rows.append(
            f"| {name} | {n_epochs} | {wall:.1f} | {cpu:.1f} | {slow_wall:.1f} | {slow_cpu:.1f} "
            f"| {cpu / n_epochs:.2f} | {load:.1f} |"
        )
        if args.profile:
            table = top_ops(partial(run, profiled_epochs))
            tables.append(f"### {name}, {profiled_epochs} epoch(s)\n\n```\n{table}```\n")
    lines = [
        "# Training throughput at defaults",
        "",
        f"commit `{commit}`, torch {torch.__version__}, {platform.machine()}, 1 thread"
        + (f", vitals for {args.vitals_epochs} epoch(s)" if args.vitals_epochs else "")
        + f"; each run timed {args.repeats} time(s) in turn: the fastest (wall, CPU), the slowest"
        + " and the load average before the fastest. Produced by `OMP_NUM_THREADS=1 python"
        + " benchmarks/speed.py"
        + "".join(f" {a}" for a in sys.argv[1:])
        + "`.",
        "",
        "| run | epochs | wall (s) | CPU (s) | slowest wall (s) | slowest CPU (s) "
        "| CPU per epoch (s) | load average |",
        "|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        *tables,
    ]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "speed.md").write_text("\n".join(lines))


if __name__ == "__main__":
    main()
