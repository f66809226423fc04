"""Bounded memory: resident memory added by predicting 10⁶ tabular rows and 10⁵ forecast windows.

Each case runs in a fresh subprocess. It fits a small model, builds the prediction input, and
then measures the peak resident set size (RSS, sampled every millisecond by a psutil thread)
while predicting, minus the RSS just before: the memory prediction itself adds, its outputs
included. The bar (issue 7) is < 2 GiB for each case.

* ``regressor``: :class:`~levy_sklearn.LevyAttentionRegressor` (default network size),
  ``predict(X, return_std=True)`` on 10⁶ rows × 10 features, 20% of cells missing.
* ``forecaster``: :class:`~levy_sklearn.LevyForecaster` (default network size), pretrained on a
  small panel, then fitted (zero-shot: no training, only the context) on a panel of 10⁵
  irregular series of 24 observations each, and ``predict_interval(fh, coverage=0.9)`` at 12
  horizons. A *forecast window* is one (series, cutoff) context the network reads: 10⁵
  windows here, each answered at 12 horizons (1.2·10⁶ forecasts).

Writes ``benchmarks/results/memory.md``.

Run: ``python -m benchmarks.memory [--rows 1000000] [--series 100000]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pandas as pd
import psutil
import torch

from ._common import GIB, RESULTS, machine_line, short_commit, write_report

BAR_GIB = 2.0


class PeakRSS:
    """Context manager: peak RSS above the RSS on entry, sampled every ``interval`` s."""

    def __init__(self, interval: float = 0.001) -> None:
        self.interval = interval
        self.process = psutil.Process()

    def _sample(self) -> None:
        while not self._done.is_set():
            self.peak = max(self.peak, self.process.memory_info().rss)
            self._done.wait(self.interval)

    def __enter__(self) -> PeakRSS:
        gc.collect()
        self.base = self.peak = self.process.memory_info().rss
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self.seconds = time.perf_counter() - self.start
        self._done.set()
        self._thread.join()
        self.peak = max(self.peak, self.process.memory_info().rss)
        self.added_gib = (self.peak - self.base) / GIB


def regressor_case(n_rows: int) -> dict:
    from levy_sklearn import LevyAttentionRegressor

    rng = np.random.default_rng(0)
    n_features = 10
    beta = rng.normal(size=n_features)
    X_fit = rng.normal(size=(2000, n_features))
    y_fit = X_fit @ beta + 0.1 * rng.normal(size=2000)
    model = LevyAttentionRegressor(max_epochs=2, random_state=0).fit(X_fit, y_fit)
    X = rng.normal(size=(n_rows, n_features))
    X[rng.random(X.shape) < 0.2] = np.nan
    with PeakRSS() as rss:
        mean, std = model.predict(X, return_std=True)
    assert mean.shape == (n_rows,) and np.isfinite(std).all()
    return {
        "case": "regressor",
        "what": f"predict(X, return_std=True), {n_rows:,} rows × {n_features} features",
        "input_gib": X.nbytes / GIB,
        "added_gib": rss.added_gib,
        "seconds": rss.seconds,
    }


def irregular_panel(n_series: int, n_obs: int, seed: int) -> pd.DataFrame:
    """Many irregular, gappy hourly series, as an sktime pd-multiindex frame."""
    rng = np.random.default_rng(seed)
    hours = np.cumsum(rng.uniform(0.5, 1.5, (n_series, n_obs)), axis=1)
    level = rng.uniform(-5, 5, (n_series, 1))
    values = level + np.sin(hours / 4) + 0.2 * rng.normal(size=hours.shape)
    values[rng.random(values.shape) < 0.1] = np.nan
    time = pd.Timestamp("2024-01-01") + pd.to_timedelta(hours.ravel(), unit="h")
    index = pd.MultiIndex.from_arrays(
        [np.repeat(np.arange(n_series), n_obs), time], names=["series", "time"]
    )
    return pd.DataFrame({"y": values.ravel()}, index=index)


def forecaster_case(n_series: int) -> dict:
    from levy_sklearn import LevyForecaster

    n_obs, n_horizons = 24, 12
    forecaster = LevyForecaster(max_epochs=2, windows_per_series=64, random_state=0)
    forecaster.pretrain(irregular_panel(32, 200, seed=1))
    forecaster.fit(irregular_panel(n_series, n_obs, seed=2))
    fh = pd.to_timedelta(np.arange(1, n_horizons + 1), unit="h")
    with PeakRSS() as rss:
        intervals = forecaster.predict_interval(fh=fh, coverage=0.9)
    assert intervals.shape == (n_series * n_horizons, 2)
    assert np.isfinite(intervals.to_numpy()).all()
    return {
        "case": "forecaster",
        "what": (
            f"predict_interval at {n_horizons} horizons, {n_series:,} series × {n_obs} "
            f"observations = {n_series:,} windows"
        ),
        "input_gib": n_series * n_obs * 8 / GIB,
        "added_gib": rss.added_gib,
        "seconds": rss.seconds,
    }


def run_case(case: str, size: int) -> dict:
    """One case in a fresh interpreter, so that nothing of the other inflates its RSS."""
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.memory", "--case", case, "--size", str(size)],
        cwd=RESULTS.parents[1],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def report_text(results: list[dict], load: float) -> str:
    lines = [
        "# Memory added by prediction",
        "",
        "Produced by `benchmarks/memory.py`: peak RSS during one prediction call minus the RSS",
        "just before it (each case in a fresh process, RSS sampled every millisecond).",
        f"Bar: < {BAR_GIB:g} GiB each.",
        "",
        "| case | prediction | input (GiB) | added RSS (GiB) | time (s) | < 2 GiB |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        ok = "yes" if r["added_gib"] < BAR_GIB else "**no**"
        lines.append(
            f"| {r['case']} | {r['what']} | {r['input_gib']:.3f} | {r['added_gib']:.3f} | "
            f"{r['seconds']:.1f} | {ok} |"
        )
    commit = short_commit()
    lines += [
        "",
        f"{machine_line()}, one torch thread; commit {commit or 'unknown'} "
        "(plus uncommitted changes, if any). Times are indicative: the load average was "
        f"{load:.1f} when the run started.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--series", type=int, default=100_000)
    parser.add_argument("--case", choices=["regressor", "forecaster"], help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.case:  # a child process: one case, one JSON line on stdout
        case = regressor_case if args.case == "regressor" else forecaster_case
        print(json.dumps(case(args.size)))
        return
    load = os.getloadavg()[0]
    results = [run_case("regressor", args.rows), run_case("forecaster", args.series)]
    report = report_text(results, load)
    write_report(report, "memory.md")


if __name__ == "__main__":
    main()
