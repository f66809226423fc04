"""Scoring on a Dask cluster: throughput with 1 and 2 worker processes, and memory per worker.

Two cases, each scored through :mod:`levy_sklearn.scaleout` on a fresh
``LocalCluster(n_workers=k, threads_per_worker=1, processes=True)`` for k = 1 and 2 (one torch
thread per worker: distributed's nanny sets ``OMP_NUM_THREADS=1``):

* ``regressor``: :class:`~levy_sklearn.LevyAttentionRegressor` (default network size) fitted
  on 2,000 rows, then ``predict(X, return_std=True)`` on 10⁶ rows × 10 features (20% of
  cells missing) through ``predict_blocks``, in 16 blocks of rows. The rows are drawn on the
  workers (``dask.array.random``, seeded), as data read from storage would be.
* ``forecaster``: :class:`~levy_sklearn.LevyForecaster` fitted on 32 irregular series, then
  ``predict_interval(fh, coverage=0.9)`` at 12 horizons for 10⁵ *new* irregular series of
  24 observations each through ``predict_panel`` (16 partitions), from a panel in the
  client's memory.

Times run from the call to the results in the client's memory (data transfer included), on
clusters whose workers have imported levy-sklearn (start-up excluded). Peak memory per worker
is the peak resident set size of each worker process (``getrusage``), whose life is the
cluster's. The 2-worker results must equal the 1-worker ones, and both the in-process ones,
computed here for the first ``--check`` rows and a tenth as many series (rows and series
are scored independently).

Writes ``benchmarks/results/scaleout.md`` (``scaleout_quick.md`` with ``--quick``: 40,000 rows,
2,000 series, for a check that everything runs).

Run: ``python -m benchmarks.scaleout [--quick] [--rows N] [--series N] [--check N]``.
"""

from __future__ import annotations

import argparse
import copy
import importlib
import os
import resource
import time

import dask
import dask.array as da
import numpy as np
import pandas as pd
import torch
from distributed import Client, LocalCluster

from levy_sklearn import LevyAttentionRegressor, LevyForecaster
from levy_sklearn.scaleout import predict_blocks, predict_panel

from ._common import GIB, machine_line, short_commit, write_report
from .memory import irregular_panel

N_FEATURES = 10
# Row blocks of the regressor and partitions of the forecaster's panel: the same work for
# 1 and 2 workers, in pieces enough to balance the load.
N_PIECES = 16
HORIZONS = pd.to_timedelta(np.arange(1, 13), unit="h")
SPEEDUP_BAR = 1.6
FIRST_NEW = 10**9


def peak_rss() -> int:
    """Peak resident set size of this process, in bytes (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def rows(n_rows: int) -> da.Array:
    """Seeded rows drawn block by block where they are computed (the same on any cluster)."""
    rng = da.random.default_rng(0)
    X = rng.normal(size=(n_rows, N_FEATURES), chunks=(-(-n_rows // N_PIECES), N_FEATURES))
    return da.where(rng.random(X.shape, chunks=X.chunks) < 0.2, np.nan, X)


def fitted_regressor() -> LevyAttentionRegressor:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(2000, N_FEATURES))
    y = X @ rng.normal(size=N_FEATURES) + 0.1 * rng.normal(size=2000)
    X[rng.random(X.shape) < 0.2] = np.nan
    return LevyAttentionRegressor(max_epochs=5, random_state=0).fit(X, y)


def new_series(n_series: int) -> pd.DataFrame:
    """Irregular series whose keys (from ``FIRST_NEW``) the fitted forecaster has not seen."""
    y = irregular_panel(n_series, 24, seed=2)
    y.index = y.index.set_levels(y.index.levels[0] + FIRST_NEW, level=0)
    return y


def forecast_in_process(forecaster: LevyForecaster, y: pd.DataFrame) -> np.ndarray:
    """What ``predict_panel`` computes, in this process: update with y, keep y's rows."""
    out = copy.deepcopy(forecaster).update(y, update_params=False)
    out = out.predict_interval(HORIZONS, coverage=0.9)
    return out[out.index.get_level_values(0) >= FIRST_NEW].to_numpy()


def fitted_forecaster() -> LevyForecaster:
    forecaster = LevyForecaster(max_epochs=2, windows_per_series=64, random_state=0)
    return forecaster.fit(irregular_panel(32, 200, seed=1))


def score_regressor(reg, X):
    mean, std = predict_blocks(reg, X, return_std=True)
    return np.stack(dask.compute(mean, std), axis=1)


def score_forecaster(forecaster, y, client=None):
    return predict_panel(
        forecaster,
        y,
        HORIZONS,
        "predict_interval",
        coverage=0.9,
        client=client,
        npartitions=N_PIECES,
    ).to_numpy()


def on_cluster(n_workers: int, score) -> dict:
    """Time ``score(client)`` on a fresh cluster of ``n_workers`` single-thread processes."""
    with (
        LocalCluster(
            n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        client.run(importlib.import_module, "levy_sklearn.forecaster")  # start-up, untimed
        threads = set(client.run(torch.get_num_threads).values())
        assert threads == {1}, f"torch threads per worker: {threads}"
        started = sorted(client.run(peak_rss).values())
        start = time.perf_counter()
        result = score(client)
        seconds = time.perf_counter() - start
        peaks = sorted(client.run(peak_rss).values())
    return {"workers": n_workers, "seconds": seconds, "started": started, "peaks": peaks,
            "result": result}  # fmt: skip


def case(name: str, size: int, check: int, score, reference) -> list[dict]:
    """In-process on the first ``check`` items, then 1 and 2 workers on all ``size``."""
    start = time.perf_counter()
    expected = reference(check)
    local = {"workers": 0, "seconds": time.perf_counter() - start, "size": check}
    runs = [local] + [{**on_cluster(k, score), "size": size} for k in (1, 2)]
    one, two = runs[1]["result"], runs[2]["result"]
    for run in runs[1:]:
        head = run.pop("result")[: len(expected)]
        run["vs_local"] = relative_difference(head, expected)
    runs[2]["vs_one"] = relative_difference(two, one)
    for run in runs:
        run["case"] = name
        run["throughput"] = run["size"] / run["seconds"]
    return runs


def relative_difference(a: np.ndarray, b: np.ndarray) -> float:
    assert a.shape == b.shape, (a.shape, b.shape)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300), initial=0.0))


def machine(load: float) -> str:
    """The machine, the versions and the commit measured."""
    commit = short_commit() or "unknown"
    return (
        f"{machine_line()}, dask {dask.__version__}; "
        f"commit {commit} (plus uncommitted changes, if any). The load average was "
        f"{load:.1f} when the run started: with other work on the machine, the 2-worker "
        "speed-up is understated."
    )


def report_text(runs: list[dict], rows_n: int, series_n: int, load: float) -> str:
    units = {"regressor": "rows/s", "forecaster": "series/s"}
    lines = [
        "# Scoring on a Dask cluster",
        "",
        "Produced by `benchmarks/scaleout.py`: "
        f"`predict(X, return_std=True)` of `LevyAttentionRegressor` on {rows_n:,} rows × "
        f"{N_FEATURES} features (`predict_blocks`, {N_PIECES} blocks of rows), and "
        f"`predict_interval` of `LevyForecaster` at {len(HORIZONS)} horizons for {series_n:,} "
        f"new irregular series of 24 observations (`predict_panel`, {N_PIECES} "
        "partitions), on a `LocalCluster` of 1 or 2 worker processes with one thread (and one "
        "torch thread) each. Times include moving the data and results, not the cluster's "
        "start-up. *In-process* is the estimator's own method in this process (no Dask), on "
        "the first rows or series only. Peak RSS is each worker process's peak resident "
        "memory so far (`getrusage`), after start-up (Python, torch and levy-sklearn "
        "imported) and after scoring.",
        "",
        "| case | run | items | time (s) | throughput | speed-up vs 1 worker | "
        "peak RSS per worker, start-up → end (GiB) | max rel. difference |",
        "|---|---|---|---|---|---|---|---|",
    ]
    speedups = {}
    for run in runs:
        one = next(r for r in runs if r["case"] == run["case"] and r["workers"] == 1)
        speedup = run["throughput"] / one["throughput"]
        if run["workers"] == 2:
            speedups[run["case"]] = speedup
        label = "in-process" if not run["workers"] else f"{run['workers']} worker(s)"
        peaks = (
            ", ".join(
                f"{a / GIB:.2f} → {b / GIB:.2f}"
                for a, b in zip(run.get("started", []), run.get("peaks", []), strict=True)
            )
            or "–"
        )
        if not run["workers"]:
            diff = "reference"
        else:
            diff = f"{run['vs_local']:.1e} vs in-process"
            if "vs_one" in run:
                diff += f", {run['vs_one']:.1e} vs 1 worker"
        speedup = f"{speedup:.2f}×" if run["workers"] else "–"
        lines.append(
            f"| {run['case']} | {label} | {run['size']:,} | {run['seconds']:.1f} | "
            f"{run['throughput']:,.0f} {units[run['case']]} | {speedup} | {peaks} | {diff} |"
        )
    equal = all(r.get("vs_local", 0) <= 1e-12 and r.get("vs_one", 0) <= 1e-12 for r in runs)
    verdict = ", ".join(
        f"{name} {s:.2f}× ({'meets' if s >= SPEEDUP_BAR else '**below**'} the {SPEEDUP_BAR}× bar)"
        for name, s in speedups.items()
    )
    lines += [
        "",
        f"Speed-up of 2 workers over 1: {verdict}. Predictions "
        + ("equal" if equal else "**differ**")
        + " (relative differences ≤ 1e-12: inference runs in float64, and only the grouping "
        "of forecast windows into batches differs, at the last bits).",
        "",
        "## The same code on a multi-machine cluster",
        "",
        "Connect to the cluster's scheduler instead of starting a `LocalCluster`; the calls "
        "are the same:",
        "",
        "```python",
        "from distributed import Client",
        "from levy_sklearn.scaleout import predict_blocks, predict_panel",
        "",
        'client = Client("tcp://scheduler:8786")',
        "mean, std = predict_blocks(regressor, X_dask, return_std=True)  # lazy dask arrays",
        'intervals = predict_panel(forecaster, panel, fh, "predict_interval", coverage=0.9)',
        "```",
        "",
        "Every worker needs levy-sklearn (and the versions of torch and scikit-learn the "
        "estimators were fitted with) installed: the fitted estimators travel pickled, not "
        "their code. Start one single-thread worker process per core, e.g. "
        "`dask worker tcp://scheduler:8786 --nworkers 8 --nthreads 1` on an 8-core machine: "
        "the nanny of each worker sets `OMP_NUM_THREADS=1` (distributed's "
        "`distributed.nanny.pre-spawn-environ`), so torch uses one thread per process. Data "
        "that lives on the cluster (e.g. `dask.array.from_zarr`, or a Dask DataFrame read "
        "from Parquet and converted block by block) is scored where it lies; a panel in the "
        "client's memory is scattered to the workers by `predict_panel`.",
        "",
        machine(load),
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="40,000 rows and 2,000 series")
    parser.add_argument("--rows", type=int, default=None)
    parser.add_argument("--series", type=int, default=None)
    parser.add_argument("--check", type=int, default=None, help="items checked in-process")
    args = parser.parse_args()
    n_rows = args.rows or (40_000 if args.quick else 1_000_000)
    n_series = args.series or (2_000 if args.quick else 100_000)
    check = args.check or (10_000 if args.quick else 100_000)
    torch.set_num_threads(1)
    load = os.getloadavg()[0]

    reg = fitted_regressor()
    X = rows(n_rows)
    regressor_runs = case(
        "regressor",
        n_rows,
        min(check, n_rows),
        score=lambda client: score_regressor(reg, X),
        reference=lambda n: np.stack(
            reg.predict(X[:n].compute(scheduler="sync"), return_std=True), axis=1
        ),
    )
    forecaster = fitted_forecaster()
    y = new_series(n_series)
    forecaster_runs = case(
        "forecaster",
        n_series,
        min(check // 10, n_series),
        score=lambda client: score_forecaster(forecaster, y, client),
        reference=lambda n: forecast_in_process(
            forecaster, y[y.index.get_level_values(0) < FIRST_NEW + n]
        ),
    )
    report = report_text(regressor_runs + forecaster_runs, n_rows, n_series, load)
    write_report(report, "scaleout_quick.md" if args.quick else "scaleout.md")


if __name__ == "__main__":
    main()
