"""LevyForecaster against independent references: sktime's own forecasters, scipy, pandas."""

import io
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from conftest import TINY_FC
from scipy.stats import norm
from sktime.benchmarking.forecasting import ForecastingBenchmark
from sktime.datasets import load_airline
from sktime.forecasting.base import ForecastingHorizon
from sktime.forecasting.model_selection import ForecastingGridSearchCV
from sktime.forecasting.naive import NaiveForecaster
from sktime.performance_metrics.forecasting import MeanAbsoluteError
from sktime.performance_metrics.forecasting.probabilistic import (
    CRPS,
    EmpiricalCoverage,
    PinballLoss,
)
from sktime.split import ExpandingWindowSplitter
from sktime.utils._testing.hierarchical import _make_hierarchical

from levy_sklearn.forecaster import LevyForecaster
from levy_sklearn.serialization import load, save

pytestmark = pytest.mark.filterwarnings(
    "ignore:The default of config ``remember_data``:FutureWarning"
)

# Small and quick: a few hundred optimiser steps per fit at most.
FAST = {
    "d_model": 16,
    "n_heads": 2,
    "n_windowed_heads": 1,
    "max_epochs": 20,
    "batch_size": 64,
    "windows_per_series": 100,
    "random_state": 0,
}


def irregular_frame(n=160, seed=0, nan_fraction=0.15):
    """Two noisy periodic channels on an irregular hourly-ish DatetimeIndex without freq."""
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.uniform(0.4, 1.6, n))
    index = pd.DatetimeIndex(pd.Timestamp("2021-03-01") + pd.to_timedelta(t, unit="h"))
    y = pd.DataFrame(
        {
            "hr": 70 + 8 * np.sin(2 * np.pi * t / 12) + rng.normal(0, 1, n),
            "temp": 37 + 0.5 * np.cos(2 * np.pi * t / 12) + rng.normal(0, 0.1, n),
        },
        index=index,
    )
    for col in y.columns:
        y.loc[y.index[rng.random(n) < nan_fraction], col] = np.nan
    return y


def sine_panel(n_series=24, n=60, seed=0):
    """Panel of phase/level/amplitude-shifted noisy sines, daily index (pd-multiindex)."""
    rng = np.random.default_rng(seed)
    frames = []
    for i in range(n_series):
        t = np.arange(n)
        level, amp, phase = rng.uniform(5, 50), rng.uniform(1, 5), rng.uniform(0, 2 * np.pi)
        values = level + amp * np.sin(2 * np.pi * t / 10 + phase) + rng.normal(0, 0.1 * amp, n)
        index = pd.MultiIndex.from_product(
            [[f"s{i}"], pd.date_range("2022-01-01", periods=n, freq="D")],
            names=["series", "time"],
        )
        frames.append(pd.DataFrame({"y": values}, index=index))
    return pd.concat(frames)


@pytest.fixture(scope="module")
def irregular_fit():
    """Fit on all but the last 10 hours of an irregular, gappy, bivariate series."""
    y = irregular_frame()
    train = y[y.index <= y.index[-1] - pd.Timedelta(hours=10)]
    forecaster = LevyForecaster(context_length=24, max_horizon=8, **FAST).fit(train)
    return train, y[y.index > train.index[-1]], forecaster


def test_intervals_read_the_history_group_of_each_prediction_window(irregular_fit):
    # A two-group calibration (the Normal's half-widths in the first history group, three
    # times them in the second), split below or above every context count: the forecasts
    # must read the group of their window's count of observations, so the 90 % intervals
    # differ by exactly the factor 3.
    from copy import deepcopy

    from levy_sklearn.calibration import LeadCalibration
    from levy_sklearn.calibration.schema import LEVELS

    train, test, fitted = irregular_fit
    fh = pd.DatetimeIndex(test.index[:4])
    n_ch = train.shape[1]
    normal = norm.ppf(0.5 + LEVELS / 2)
    quantiles = np.tile(np.stack([normal, 3 * normal])[:, None], (n_ch, 1, 1))
    widths = []
    for edge in (0.5, 1e9):  # every window saw each channel: all second group, all first
        f = deepcopy(fitted)
        f.calibration_ = LeadCalibration.from_state(
            {
                "quantiles": quantiles,
                "second_moment": np.ones((2 * n_ch, 1)),
                "edges": np.empty(0),
                "n_scores": np.ones((2 * n_ch, 1), int),
                "history_edges": np.array([edge]),
            }
        )
        interval = f.predict_interval(fh, coverage=0.9).to_numpy()
        widths.append(interval[:, 1::2] - interval[:, ::2])
    np.testing.assert_allclose(widths[0], 3 * widths[1], rtol=1e-9)


@pytest.mark.parametrize("kind", ["absolute", "timedelta"])
def test_irregular_multivariate_outputs_are_indexed_and_consistent(irregular_fit, kind):
    y, _, f = irregular_fit
    steps = pd.to_timedelta([0.5, 2.0, 7.5, 30.0], unit="h")
    if kind == "absolute":
        fh = ForecastingHorizon(y.index[-1] + steps, is_relative=False)
    else:
        fh = ForecastingHorizon(steps, is_relative=True)
    expected = pd.DatetimeIndex(y.index[-1] + steps)

    mean = f.predict(fh)
    var = f.predict_var(fh)
    intervals = f.predict_interval(fh, coverage=[0.5, 0.9])
    quantiles = f.predict_quantiles(fh, alpha=[0.05, 0.25, 0.5, 0.9])
    for frame in (mean, var, intervals, quantiles):
        pd.testing.assert_index_equal(frame.index, expected, check_names=False)
    assert list(mean.columns) == list(var.columns) == ["hr", "temp"]
    assert np.isfinite(mean.to_numpy()).all() and (var.to_numpy() > 0).all()

    # Normal(mean, var) is the one distribution behind all of them (scipy as the reference).
    sd = np.sqrt(var)
    for col in y.columns:
        for cov in (0.5, 0.9):
            z = norm.ppf(0.5 + cov / 2)
            np.testing.assert_allclose(intervals[(col, cov, "lower")], mean[col] - z * sd[col])
            np.testing.assert_allclose(intervals[(col, cov, "upper")], mean[col] + z * sd[col])
        for a in (0.05, 0.25, 0.5, 0.9):
            expected_q = norm.ppf(a, loc=mean[col], scale=sd[col])
            np.testing.assert_allclose(quantiles[(col, a)], expected_q, rtol=1e-10)
    # predict_proba is that Normal too.
    dist = f.predict_proba(fh)
    np.testing.assert_allclose(dist.mean().to_numpy(), mean.to_numpy())
    np.testing.assert_allclose(dist.var().to_numpy(), var.to_numpy())


def test_forecasts_track_the_signal(irregular_fit):
    train, test, f = irregular_fit
    # Forecast the held-out timestamps; compare with carrying the last observation forward.
    pred = f.predict(ForecastingHorizon(test.index, is_relative=False))
    naive = test.copy()
    naive[:] = train.ffill().iloc[-1].to_numpy()
    ours = np.nanmean(np.abs(pred - test) / train.std())
    theirs = np.nanmean(np.abs(naive - test) / train.std())
    assert ours < theirs


def test_integer_fh_on_irregular_index_raises(irregular_fit):
    *_, f = irregular_fit
    with pytest.raises(ValueError, match="timestamps.*Timedelta|absolute timestamps"):
        f.predict(fh=[1, 2])


def test_integer_fh_on_regular_index_without_freq_matches_timedelta_fh():
    rng = np.random.default_rng(3)
    index = pd.DatetimeIndex(pd.date_range("2020-01-01", periods=80, freq="2h").to_numpy())
    assert index.freq is None
    y = pd.Series(np.sin(np.arange(80) / 4) + rng.normal(0, 0.1, 80), index=index)
    f = LevyForecaster(context_length=16, max_horizon=4, **{**FAST, "max_epochs": 5}).fit(y)
    by_step = f.predict(fh=[1, 3])
    by_span = f.predict(fh=ForecastingHorizon(pd.to_timedelta([2, 6], unit="h")))
    pd.testing.assert_series_equal(by_step, by_span)
    assert list(by_step.index) == [index[-1] + pd.Timedelta(hours=2 * k) for k in (1, 3)]


def test_the_same_values_forecast_alike_whatever_the_date_and_the_spacing():
    # Times as float seconds since 1970 would lose the steps: in 2024 a float second holds
    # 0.24 µs, so 100 µs steps read as irregular and σ at fh=1 goes 0.65 / 0.61 / 0.22 for
    # starts in 1970 / 2000 / 2024, and nanosecond data cannot be cut into windows at all.
    values = np.sin(np.arange(60) / 3) + 0.05 * np.arange(60)
    fits = []
    for start, freq in [("1970-01-01", "1s"), ("2024-01-01", "1s"), ("2024-01-01", "100us")]:
        y = pd.Series(values, index=pd.date_range(start, periods=60, freq=freq))
        fits.append(LevyForecaster(**TINY_FC).fit(y))
    for start in (0, 10**17):  # an integer index far from 0 (its float steps were 16)
        fits.append(LevyForecaster(**TINY_FC).fit(pd.Series(values, index=start + np.arange(60))))
    reference = fits[0].predict_interval(fh=[1, 2, 3], coverage=0.9).to_numpy()
    assert fits[2].time_unit_ == pd.Timedelta(microseconds=100)
    for f in fits[1:]:
        np.testing.assert_array_equal(f.predict_interval(fh=[1, 2, 3], coverage=0.9), reference)


def random_walk(n=300, seed=1):
    """A random walk with runs of missing values (so training sees cutoffs inside gaps)."""
    rng = np.random.default_rng(seed)
    y = pd.Series(np.cumsum(rng.normal(0, 1, n)), index=pd.RangeIndex(n), dtype=float)
    for start in rng.choice(n - 10, 20, replace=False):
        y.iloc[start : start + rng.integers(2, 8)] = np.nan
    return y


@pytest.fixture(scope="module")
def walk_pretrained():
    panel = pd.concat({f"w{i}": random_walk(seed=i) for i in range(6)}).to_frame("y")
    f = LevyForecaster(context_length=20, max_horizon=10, **FAST)
    return f.pretrain(panel)


def test_uncertainty_grows_with_horizon(walk_pretrained):
    y = random_walk(seed=100)
    f = walk_pretrained.clone().fit(y.loc[: y.last_valid_index()])  # ends in an observation
    sd = np.sqrt(f.predict_var(fh=np.arange(1, 41)).to_numpy().ravel())
    # Within the trained horizon: learned (a random walk's error grows like √h).
    assert sd[7:10].mean() > sd[0:3].mean()
    # Beyond it (max_horizon = 10): the held-out errors of random walks keep growing, so
    # most of the horizon's variance grows on like a random walk's (share ρ), at least.
    rho = f.calibration_.growth.min()
    assert rho > 0.7
    assert sd[39] >= sd[9] * np.sqrt(1 + rho * (40 / 10 - 1)) * (1 - 1e-9)
    assert sd[19] >= sd[9] * np.sqrt(1 + rho * (20 / 10 - 1)) * (1 - 1e-9)


def test_the_floor_beyond_the_horizon_grows_by_the_learned_share(walk_pretrained):
    # The same forecasts with the share ρ set to 0 and to 1 (max_horizon h = 10): beyond h
    # the variance is at least the horizon's times 1 + ρ(L/h − 1), the horizon's own at
    # ρ = 0 and a random walk's at ρ = 1; within h nothing moves.
    y = random_walk(seed=100)
    f = walk_pretrained.clone().fit(y.loc[: y.last_valid_index()])
    fh = np.array([5, 10, 20, 40])
    var = {}
    for rho in (0.0, 1.0):
        f.calibration_ = replace(f.calibration_, growth=np.full_like(f.calibration_.growth, rho))
        var[rho] = f.predict_var(fh=fh).to_numpy().ravel()
    np.testing.assert_array_equal(var[0.0][:2], var[1.0][:2])
    assert (var[0.0][2:] >= var[0.0][1] * (1 - 1e-9)).all()
    assert var[1.0][3] > var[0.0][3]  # the random walk's floor binds 4 horizons ahead
    walk = np.maximum(var[0.0][2:], var[0.0][1] * fh[2:] / 10)
    np.testing.assert_allclose(var[1.0][2:], walk, rtol=1e-9)


def test_uncertainty_grows_across_a_gap(walk_pretrained):
    full = random_walk(seed=101).interpolate()
    gap = full.copy()
    gap.iloc[-6:] = np.nan  # the same history, its last 6 points unobserved
    fh = [1, 3, 5]  # same forecast times, same cutoff
    var_full = walk_pretrained.clone().fit(full).predict_var(fh=fh).to_numpy()
    var_gap = walk_pretrained.clone().fit(gap).predict_var(fh=fh).to_numpy()
    assert (var_gap > var_full).all()


def noisy_sine(seed, keep=1.0, n=400):
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    y = pd.Series(np.sin(2 * np.pi * t / 25 + rng.uniform(0, 6)) + rng.normal(0, 0.3, n))
    y[rng.random(n) > keep] = np.nan
    return y


def test_uncertainty_grows_when_history_is_sparse():
    # Trained on series observed at several rates, so thin contexts are seen in training.
    rates = [1.0, 0.5, 0.2, 0.1]
    panel = pd.concat({f"s{i}": noisy_sine(i, keep) for i, keep in enumerate(rates)})
    f = LevyForecaster(context_length=50, max_horizon=5, **FAST).pretrain(panel.to_frame("y"))
    dense = noisy_sine(99)
    sparse = dense.copy()
    sparse[np.arange(sparse.size) % 10 != 9] = np.nan  # every 10th point, the last one kept
    fh = [1, 2, 3]
    dense_var = f.clone().fit(dense).predict_var(fh=fh).to_numpy()
    sparse_var = f.clone().fit(sparse).predict_var(fh=fh).to_numpy()
    assert (sparse_var > dense_var).all()


def test_panel_trains_one_global_model_and_beats_naive():
    y = sine_panel()
    train = y.groupby(level=0).head(50)
    test = y.groupby(level=0).tail(10)
    f = LevyForecaster(context_length=20, max_horizon=10, **{**FAST, "windows_per_series": 25})
    f.fit(train)
    fh = ForecastingHorizon(np.arange(1, 11))
    pred = f.predict(fh)
    pd.testing.assert_index_equal(pred.index, test.index)
    intervals = f.predict_interval(fh, coverage=0.9)
    pd.testing.assert_index_equal(intervals.index, test.index)
    naive = NaiveForecaster(strategy="last").fit(train).predict(fh)
    ours = (pred - test).abs().to_numpy().mean()
    theirs = (naive - test).abs().to_numpy().mean()
    assert ours < 0.7 * theirs
    assert len(f.net_.history) == FAST["max_epochs"]  # one network, trained once


def instance_tuples(y):
    """The instances of the panel/hierarchy ``y`` in order of appearance, as tuples, read from
    ``y``'s own index rather than from any groupby key."""
    return [k if isinstance(k, tuple) else (k,) for k in y.index.droplevel(-1).unique()]


def instance_tuples_of_rows(y):
    """The instance of every row of ``y``, as a tuple."""
    return [k if isinstance(k, tuple) else (k,) for k in y.index.droplevel(-1)]


def expected_rows(y, times):
    """Every instance of ``y`` at each of ``times``."""
    rows = [(*k, t) for k in instance_tuples(y) for t in times]
    return pd.MultiIndex.from_tuples(rows, names=y.index.names)


# Instance keys come from groupby(level=[...]), whose keys are scalars on pandas 2.x for one
# instance level and 1-tuples on pandas 3; string keys ("h0_0") were unpacked letter by letter.
@pytest.mark.filterwarnings("error:Creating a Groupby object:FutureWarning")  # pandas 2.x
@pytest.mark.parametrize(
    "levels, min_len",
    [((3,), 20), ((2, 2), 20), ((3,), 12)],
    ids=["single-level-panel", "two-level-hierarchy", "unequal-length-panel"],
)
def test_panels_and_hierarchies_keep_their_instance_keys(levels, min_len):
    y = _make_hierarchical(
        hierarchy_levels=levels,
        min_timepoints=min_len,
        max_timepoints=20,
        same_cutoff=min_len == 20,
        random_state=0,
    )
    f = LevyForecaster(context_length=8, max_horizon=3, **{**FAST, "max_epochs": 2})
    f.fit(y)
    cutoff = y.index.get_level_values(-1).max()
    # A relative fh counts from each instance's own last time point (sktime's vectorised
    # convention), which differs between instances when their lengths differ.
    last = {}
    for k, t in zip(instance_tuples_of_rows(y), y.index.get_level_values(-1), strict=True):
        last[k] = max(last.get(k, t), t)
    rows = pd.MultiIndex.from_tuples(
        [(*k, last[k] + pd.Timedelta(days=d)) for k in instance_tuples(y) for d in (1, 2)],
        names=y.index.names,
    )
    pred = f.predict([1, 2])
    pd.testing.assert_index_equal(pred.index, rows, check_exact=True)
    assert np.isfinite(pred.to_numpy()).all()
    pd.testing.assert_index_equal(f.predict_var([1, 2]).index, rows)
    assert f.predict_interval([1, 2], coverage=0.9).index.equals(rows)
    assert f.predict_quantiles([1, 2], alpha=[0.1, 0.9]).index.equals(rows)

    # update matches its instances to the fitted ones (no new keys, no duplicated rows).
    nxt = cutoff + pd.Timedelta(days=1)
    new = pd.DataFrame({"c0": 1.0}, index=expected_rows(y, [nxt]))
    f.update(new, update_params=False)
    assert len(f._series) == len(instance_tuples(y))
    later = pd.DatetimeIndex([nxt + pd.Timedelta(days=1)])  # timestamps: the update left gaps
    assert f.predict(ForecastingHorizon(later, is_relative=False)).index.equals(
        expected_rows(y, later)
    )


def test_pretrain_then_fit_forecasts_an_unseen_series():
    panel = sine_panel(n_series=24, seed=0)
    unseen = sine_panel(n_series=1, seed=99).droplevel(0)  # a series not in the panel
    train, test = unseen.iloc[:50], unseen.iloc[50:]
    # One training (calibration_folds=1): what pretrain's folds do is tested below.
    f = LevyForecaster(
        context_length=20,
        max_horizon=10,
        calibration_folds=1,
        **{**FAST, "windows_per_series": 25},
    )
    f.pretrain(panel)
    assert f.state == "pretrained"
    net = f.pretrained_net_
    weights = {k: v.clone() for k, v in net.module_.state_dict().items()}
    f.fit(train)
    assert f.state == "fitted" and f.net_ is net
    for k, v in net.module_.state_dict().items():  # zero-shot: fit did not train
        assert (v == weights[k]).all()
    pred = f.predict(fh=np.arange(1, 11))
    pd.testing.assert_index_equal(pred.index, test.index, check_names=False)
    naive = NaiveForecaster(strategy="last").fit(train).predict(fh=np.arange(1, 11))
    assert (pred["y"] - test["y"]).abs().mean() < 0.7 * (naive["y"] - test["y"]).abs().mean()
    with pytest.raises(ValueError, match=r"missing: \[\], unknown: \['z'\]"):
        f.fit(pd.concat([train, train.rename(columns={"y": "z"})], axis=1))
    # scikit-learn's clone keeps the pretraining as sktime's does: sktime's ConformalIntervals
    # clones with it, and fitted a from-scratch network under the zero-shot model's spread.
    from sklearn.base import clone
    from sktime.forecasting.conformal import ConformalIntervals

    for copy in (clone(f), f.clone()):
        assert copy.state == "pretrained" and not hasattr(copy, "net_")
        pd.testing.assert_frame_equal(copy.fit(train).predict(fh=[1, 2]), pred.iloc[:2])
    conformal = ConformalIntervals(f, initial_window=40, sample_frac=0.5).fit(train, fh=[1, 2])
    pd.testing.assert_frame_equal(conformal.predict(), pred.iloc[:2])
    assert clone(LevyForecaster(**FAST)).state == "new"


def held_out_count(monkeypatch) -> list[int]:
    """The number of held-out forecasts each calibration rests on, recorded as it is made."""
    import levy_sklearn.calibration.held_out as held_out

    counts = []
    calibrate = held_out.calibrate

    def spy(parts, n_channels):
        counts.append(sum(p[0].size for p in parts))
        return calibrate(parts, n_channels)

    monkeypatch.setattr(held_out, "calibrate", spy)
    return counts


@pytest.fixture(scope="module")
def one_fold_calibration():
    with pytest.MonkeyPatch.context() as monkeypatch:
        counts = held_out_count(monkeypatch)
        LevyForecaster(**{**TINY_FC, "calibration_folds": 1}).pretrain(sine_panel(10, seed=1))
    return counts[-1]


def test_pretrain_calibrates_the_first_forecasts_of_long_series_apart():
    """Held-out subjects are scored from their first observations on (a new subject's first
    forecasts), not only at the evenly spaced cutoffs of their long records: the
    calibration has a group for contexts shorter than a full one, read by a new subject
    fitted on its first observations, and its factor is the held-out first forecasts'
    (here calmer: every series starts calm)."""
    rng = np.random.default_rng(0)
    frames = []
    for i in range(30):
        steps = rng.normal(0, 1, 120) * np.where(np.arange(120) < 10, 0.1, 1.0)
        index = pd.MultiIndex.from_product(
            [[f"s{i}"], pd.date_range("2022-01-01", periods=120, freq="D")],
            names=["series", "time"],
        )
        frames.append(pd.DataFrame({"y": 50 + np.cumsum(steps)}, index=index))
    cal = LevyForecaster(**TINY_FC).pretrain(pd.concat(frames)).pretrained_calibration_
    full = TINY_FC["context_length"] + 1  # observations a full context holds, both ends
    assert cal.history_edges.size and cal.history_edges.max() < full
    rows = cal.rows(np.zeros(2, int), np.ones(2), np.array([3.0, full]))
    first, later = cal.quantile(0.9, rows, np.ones(2))
    assert first < later


@pytest.mark.parametrize("folds", [1, 3, "auto"])
def test_pretrain_calibrates_on_held_out_folds_of_series(monkeypatch, one_fold_calibration, folds):
    """Each scored fold is forecast by a network trained without it; with more than one,
    the pretrained network learns from every series (cross-fitting); "auto" cross-fits
    every fold of a small panel."""
    import levy_sklearn._series_training as module

    rows = []  # training windows of each network trained

    def spy(net, windows, targets, seed):  # windows: a dataset cut per batch
        rows.append(len(windows))
        return fit(net, windows, targets, seed)

    fit = module.fit_levy_net
    monkeypatch.setattr(module, "fit_levy_net", spy)
    counts = held_out_count(monkeypatch)
    panel = sine_panel(n_series=10, seed=1)  # two series per fold, all of one length
    LevyForecaster(**{**TINY_FC, "calibration_folds": folds}).pretrain(panel)
    n_scored = {1: 1, 3: 3, "auto": 5}[folds]
    assert len(rows) == n_scored + (n_scored > 1)
    if n_scored > 1:  # fold networks see four fifths of the windows, the last one all
        assert rows[:-1] == [round(0.8 * rows[-1])] * n_scored
    # The calibration rests on every scored fold's forecasts.
    assert counts[-1] == pytest.approx(n_scored * one_fold_calibration, rel=0.2)


@pytest.mark.parametrize("folds", [3, "auto"])
def test_where_the_fold_networks_grew_the_largest_is_pretrained_and_all_step_alike(
    monkeypatch, one_fold_calibration, folds
):
    """Where the fold networks' windows are too many for two passes within max_steps (their
    batch grows), every fold is still scored (the cost never falls as a panel grows), the
    fold network with the most windows is the pretrained one (no network on every series),
    and every fold network takes as many optimizer steps as it: σ is calibrated on networks
    trained alike."""
    import levy_sklearn._series_training as module

    nets, rows, steps = [], [], []  # each network trained, its windows and optimizer steps

    def spy(net, windows, targets, seed):
        rows.append(len(windows))
        nets.append(fit(net, windows, targets, seed))
        steps.append(sum("train_loss" in b for e in nets[-1].history for b in e["batches"]))
        return nets[-1]

    fit = module.fit_levy_net
    monkeypatch.setattr(module, "fit_levy_net", spy)
    counts = held_out_count(monkeypatch)
    params = {**TINY_FC, "max_epochs": 10, "batch_size": 8, "max_steps": 4}
    panel = sine_panel(n_series=10, seed=1)  # hundreds of windows: a grown batch of 64
    panel = panel.drop(panel.loc["s3"].index[:30].map(lambda t: ("s3", t)))  # folds unequal
    f = LevyForecaster(**params, calibration_folds=folds).pretrain(panel)
    n_scored = 5 if folds == "auto" else folds
    assert len(rows) == n_scored and len(set(rows)) > 1
    assert f.pretrained_net_ is nets[int(np.argmax(rows))]
    assert f.pretrained_net_.batch_size == 64
    assert steps == [steps[int(np.argmax(rows))]] * n_scored  # fewer windows, as many steps
    assert counts[-1] == pytest.approx(n_scored * one_fold_calibration, rel=0.2)


def test_pretrain_scores_a_seeded_share_of_held_out_windows_above_its_cap(monkeypatch):
    """Above the cap on held-out windows, pretrain scores that many over its folds (an
    equal share each), every held-out subject its share of them, spread over its cutoffs
    from its first ones on, drawn from the seed: the same seed gives the same calibration,
    another seed other windows."""
    import levy_sklearn._series_training as module

    scored = []  # (series, cutoffs) of each fold's scored windows

    def spy(net, windows, n_channels, population=None):
        scored.append((windows.series, windows.cutoffs))
        return forecasts(net, windows, n_channels, population)

    forecasts = module.held_out_forecasts
    monkeypatch.setattr(module, "held_out_forecasts", spy)
    panel = sine_panel(n_series=10, seed=1)  # two series of 60 days per fold
    params = {**TINY_FC, "max_epochs": 1}
    LevyForecaster(**params).pretrain(panel)
    every, n_all = list(scored), sum(c.size for _, c in scored)
    scored.clear()
    monkeypatch.setattr(module, "_MAX_HELD_OUT_WINDOWS", n_all // 8)
    capped = LevyForecaster(**params).pretrain(panel).pretrained_calibration_
    share = -(-(n_all // 8) // 5)  # each of the five folds', rounded up
    assert [c.size for _, c in scored] == [share] * 5
    for (series, cutoffs), (all_series, all_cutoffs) in zip(scored, every, strict=True):
        stride = all_cutoffs.size / share  # every stride-th window is scored
        counts = np.bincount(series, minlength=2)
        assert abs(counts[0] - counts[1]) <= 1  # both subjects, half of them each
        for s in (0, 1):
            mine, full = np.sort(cutoffs[series == s]), np.sort(all_cutoffs[all_series == s])
            assert np.isin(mine, full).all()
            # from its first cutoffs (a new subject's first forecasts) to its last ones
            assert mine[0] <= full[int(stride)] and mine[-1] >= full[-int(stride) - 1]
    first = [c for _, c in scored]
    scored.clear()
    again = LevyForecaster(**params).pretrain(panel).pretrained_calibration_
    assert all(np.array_equal(a, b) for a, (_, b) in zip(first, scored, strict=True))
    np.testing.assert_array_equal(again.quantiles, capped.quantiles)
    scored.clear()
    LevyForecaster(**{**params, "random_state": 1}).pretrain(panel)
    assert any(not np.array_equal(a, b) for a, (_, b) in zip(first, scored, strict=True))


def test_after_pretrain_channels_are_matched_by_name_not_position():
    """A new subject's columns in another order give the same forecasts per name (they were
    read by position: the forecasts landed under the wrong names); a missing or unknown name
    is refused with the names, and update after a plain fit matches by name as well."""
    rng = np.random.default_rng(0)
    t = np.cumsum(rng.uniform(0.5, 1.5, (4, 60)), axis=1)
    frames = {
        i: pd.DataFrame(
            {
                "hr": 70 + 10 * np.sin(t[i] / 3) + rng.normal(0, 1, 60),
                "temp": 37 + 0.3 * np.cos(t[i] / 3) + rng.normal(0, 0.05, 60),
                "spo2": 95 + rng.normal(0, 1, 60),
            },
            index=pd.DatetimeIndex(pd.Timestamp("2024-01-01") + pd.to_timedelta(t[i], "h")),
        )
        for i in range(4)
    }
    panel = pd.concat(list(frames.values())[:3], keys=range(3), names=["patient", "time"])
    new = frames[3]
    last = new.index[-1]
    fh = ForecastingHorizon(pd.DatetimeIndex([last + pd.Timedelta(h, "h") for h in [1, 3]]))
    f = LevyForecaster(**{**FAST, "max_epochs": 2, "windows_per_series": 20})
    f.pretrain(panel)
    assert f.pretrained_columns_ == ["hr", "temp", "spo2"]
    expected = f.fit(new).predict(fh)
    permuted = f.fit(new[["spo2", "hr", "temp"]]).predict(fh)
    assert list(permuted.columns) == ["spo2", "hr", "temp"]
    pd.testing.assert_frame_equal(permuted[expected.columns], expected)
    sd = np.sqrt(f.predict_var(fh))
    assert list(sd.columns) == ["spo2", "hr", "temp"]
    with pytest.raises(ValueError, match=r"missing: \['temp'\], unknown: \['glucose'\]"):
        f.fit(new.rename(columns={"temp": "glucose"}))
    with pytest.raises(ValueError, match=r"missing: \['spo2'\]"):
        f.fit(new[["hr", "temp"]])
    # no name in common (sktime's pretrain tests fit default 0, 1, … columns): by position
    with pytest.warns(UserWarning, match=r"taken by position \(0 as 'hr', 1 as 'temp'"):
        by_position = f.fit(new.set_axis([0, 1, 2], axis=1)).predict(fh)
    np.testing.assert_array_equal(by_position.to_numpy(), expected.to_numpy())
    # update after a plain fit: the same observations in another column order
    plain = LevyForecaster(**{**FAST, "max_epochs": 1}).fit(new.iloc[:40])
    plain.update(new.iloc[40:][["temp", "spo2", "hr"]], update_params=False)
    other = LevyForecaster(**{**FAST, "max_epochs": 1}).fit(new.iloc[:40])
    other.update(new.iloc[40:], update_params=False)
    # sktime labels outputs in the latest update's column order; every name keeps its values
    pd.testing.assert_frame_equal(plain.predict(fh)[["hr", "temp", "spo2"]], other.predict(fh))


def mixed_scale_panel(n_series=20, n=40, seed=0):
    """Quarterly panel mixing scales: half near 1,000 with a season and a trend, half near
    1.0 with steps of sd 0.01 (the mixed-scale report of the many-series issue)."""
    rng = np.random.default_rng(seed)
    index = pd.period_range("2000Q1", periods=n, freq="Q")
    frames = {}
    for i in range(n_series):
        if i < n_series // 2:
            season = 100 * np.sin(2 * np.pi * np.arange(n) / 4)
            v = 1000 + season + 5 * np.arange(n) + rng.normal(0, 20, n)
        else:
            v = 1.0 + np.cumsum(rng.normal(0.002, 0.01, n))
        frames[f"s{i}"] = pd.DataFrame({"y": v}, index=index)
    return pd.concat(frames, names=["series", "time"]), frames


def test_global_fit_forecasts_each_series_in_its_own_units():
    """A panel of series near 1,000 and near 1.0: the small series are forecast within their
    own noise of their last value (a random walk with steps of sd 0.01: 2 · 0.01 · √h), with
    σ in their own units. One panel-wide scale forecast them at 1.5–2.3 where the last values
    are about 1.08, with 90 % intervals 13 units wide. Fitted alone, the same series get
    forecasts within 0.003 of the global fit's at the default settings (stop note)."""
    panel, frames = mixed_scale_panel()
    f = LevyForecaster(**{**FAST, "max_epochs": 5}).fit(panel)
    fh = [1, 2, 3, 4]
    pred = f.predict(fh=fh)
    sd = np.sqrt(f.predict_var(fh=fh))
    band = 2 * 0.01 * np.sqrt(fh)
    for key in ["s10", "s15", "s19"]:
        small = pred.loc[key, "y"].to_numpy()
        last = frames[key]["y"].iloc[-1]
        assert (np.abs(small - last) < band).all(), (key, small, last)
        assert (sd.loc[key, "y"] < 0.1).all() and (sd.loc[key, "y"] > 0.001).all()
    big = pred.loc["s0", "y"].to_numpy()
    assert np.abs(big - frames["s0"]["y"].iloc[-4:].to_numpy()).max() < 150  # a season away


def test_a_flat_series_forecast_exactly_keeps_a_positive_sigma_and_saves():
    # A flat series is forecast without error, so every held-out score is 0; a calibration
    # factor of 0 made σ 0 and the model file unloadable ("second_moment must be positive").
    y = pd.Series(7.0, index=pd.date_range("2020", periods=200, freq="D"))
    f = LevyForecaster(**{**TINY_FC, "calibration_fraction": 0.3}).fit(y)
    var = f.predict_var(fh=[1, 2, 3]).to_numpy()
    assert (var > 0).all() and np.isfinite(var).all()
    buffer = io.BytesIO()
    save(f, buffer)
    buffer.seek(0)
    g = load(buffer)
    a, b = f.predict_interval(fh=[1, 2, 3]), g.predict_interval(fh=[1, 2, 3])
    np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())


def test_a_flat_or_short_series_beside_a_large_one_keeps_its_own_units():
    """A stuck sensor (7.0 throughout) and a series of three observations beside one near
    10⁶: each is forecast in its own units, as alone (a flat 7 alone: 7.00 ± 0.03). Taking
    the panel's scale where a series has no spread or few observations forecast them at
    -7,005 ± 23,400 and 391 ± 9,800."""
    rng = np.random.default_rng(0)
    index = pd.date_range("2000-01-01", periods=120, freq="D")
    panel = pd.concat(
        {
            "big": pd.DataFrame({"y": 1e6 + np.cumsum(rng.normal(size=120))}, index=index),
            "const": pd.DataFrame({"y": np.full(60, 7.0)}, index=index[-60:]),
            "len3": pd.DataFrame({"y": [10.0, 11.0, 12.0]}, index=index[-3:]),
        },
        names=["series", "time"],
    )
    f = LevyForecaster(max_epochs=2, random_state=0).fit(panel)
    pred, sd = f.predict(fh=[1, 2, 3])["y"], np.sqrt(f.predict_var(fh=[1, 2, 3])["y"])
    assert (np.abs(pred.loc["const"] - 7.0) <= 0.7).all() and (sd.loc["const"] <= 1).all()
    assert pred.loc["len3"].between(5, 20).all() and (sd.loc["len3"] <= 10).all()
    # Each takes a scale of its own: 1 for the flat 7 (its level, capped at 1), and 1 for
    # the three points (their spread, 0.82, is below that cap: too few to shrink σ).
    np.testing.assert_allclose(f.series_scale_[1:, 0], [1.0, 1.0])


def test_ar_order_auto_reads_regularly_spaced_series_only():
    quick = {**FAST, "max_epochs": 1, "windows_per_series": 8}
    # Month ends ("ME" is not a frequency before pandas 2.2): the day before each month start.
    ends = pd.date_range("2015-02-01", periods=60, freq="MS") - pd.Timedelta(days=1)
    month_ends = pd.Series(np.arange(60.0), index=ends)
    for y, params, order in [
        (load_airline(), {}, 13),  # monthly PeriodIndex
        (load_airline(), {"context_length": 8}, 9),  # lags 0 … 8: no further than the context
        (month_ends, {}, 13),  # steps of 28–31 days: regular within 25 %
        (irregular_frame(), {"context_length": 24, "max_horizon": 8}, 0),
        (irregular_frame(), {"context_length": 24, "max_horizon": 8, "ar_order": 5}, 5),
        (load_airline(), {"ar_order": 0}, 0),
    ]:
        f = LevyForecaster(**quick, **params).fit(y)
        assert f.ar_order_ == order
        lags = f.net_.module_.lags
        assert (lags is None) if order == 0 else (lags.weight.shape[-1] == order)
    # Where a season is removed the autoregression learns at 5 × lr, elsewhere at lr.
    lr = FAST.get("lr", LevyForecaster().lr)
    seasonal = LevyForecaster(**quick).fit(load_airline()).net_.get_params()
    assert seasonal["optimizer__param_groups"] == [("lags.*", {"lr": 5 * lr})]
    yearly = pd.Series(np.arange(40.0), index=pd.period_range("1950", periods=40, freq="Y"))
    plain = LevyForecaster(**quick).fit(yearly).net_.get_params()
    assert plain["module__n_lags"] == 13 and plain["optimizer__param_groups"] == []
    short = LevyForecaster(**quick, context_length=20).fit(load_airline()).net_.get_params()
    assert short["optimizer__param_groups"] == []  # 20 months: no season is removed
    # After pretrain the network (and its order) is the pretraining panel's.
    f = LevyForecaster(context_length=6, max_horizon=3, **quick)
    f.pretrain(sine_panel(n_series=3, seed=0)).fit(irregular_frame()[["hr"]])
    assert f.ar_order_ == 7
    with pytest.raises(ValueError, match="ar_order=-1 must be"):
        LevyForecaster(ar_order=-1).fit(load_airline())


def test_max_targets_caps_training_targets_not_forecasts():
    quick = {**FAST, "max_epochs": 1, "windows_per_series": 8}
    y = load_airline()
    fh = np.arange(1, 25)
    # "auto" leaves a regular series' windows whole, however long max_horizon is: 24 target
    # times each here, as without a cap.
    default = LevyForecaster(**quick, max_horizon=24).fit(y)
    uncapped = LevyForecaster(**quick, max_horizon=24, max_targets=100).fit(y)
    assert default.max_targets_ is None and uncapped.max_targets_ == 100
    pd.testing.assert_series_equal(default.predict(fh=fh), uncapped.predict(fh=fh))
    pd.testing.assert_frame_equal(default.predict_var(fh=fh), uncapped.predict_var(fh=fh))
    # A cap that binds trains another network, which still forecasts every time asked.
    capped = LevyForecaster(**quick, max_horizon=24, max_targets=3).fit(y)
    pred = capped.predict(fh=fh)
    assert len(pred) == fh.size and np.isfinite(pred).all()
    assert not np.allclose(pred, default.predict(fh=fh))
    # Irregular series get 16 under "auto".
    irregular = LevyForecaster(**quick, context_length=24, max_horizon=8).fit(irregular_frame())
    assert irregular.max_targets_ == 16
    with pytest.raises(ValueError, match="max_targets"):
        LevyForecaster(max_targets=0).fit(y)


def test_update_extends_context_without_retraining():
    panel = sine_panel(n_series=20, seed=2)
    series = sine_panel(n_series=1, seed=7).droplevel(0)
    f = LevyForecaster(context_length=20, max_horizon=10, **{**FAST, "max_epochs": 3})
    f.pretrain(panel)
    updated = f.clone().fit(series.iloc[:40])
    updated.update(series.iloc[40:50], update_params=True)
    direct = f.clone().fit(series.iloc[:50])
    assert updated.cutoff == direct.cutoff == series.index[49]
    pd.testing.assert_frame_equal(updated.predict(fh=[1, 2, 3]), direct.predict(fh=[1, 2, 3]))

    # Without pretraining too: update keeps the trained network; refit_on_update retrains.
    y = series["y"]
    g = LevyForecaster(context_length=20, max_horizon=5, **{**FAST, "max_epochs": 3}).fit(y[:40])
    net = g.net_
    g.update(y[40:50])
    assert g.net_ is net and g.cutoff == y.index[49]
    h = g.clone().set_params(refit_on_update=True).fit(y[:40])
    net = h.net_
    h.update(y[40:50])
    assert h.net_ is not net


def test_conformal_intervals_are_calibrated_and_consistent():
    rng = np.random.default_rng(11)
    n = 700
    t = np.arange(n)
    y = pd.Series(np.sin(2 * np.pi * t / 20) + rng.standard_t(3, n) * 0.3, index=pd.RangeIndex(n))
    train, test = y.iloc[:600], y.iloc[600:]
    f = LevyForecaster(
        context_length=40, max_horizon=5, calibration_fraction=0.3, **{**FAST, "max_epochs": 15}
    ).fit(train)
    assert f.calibration_.n_scores.sum() > 0
    fh = [1, 2, 3, 4, 5]
    mean = f.predict(fh)
    iv = f.predict_interval(fh, coverage=[0.5, 0.9])
    q = f.predict_quantiles(fh, alpha=[0.05, 0.5, 0.95])
    col = mean.name if mean.name is not None else iv.columns[0][0]
    # Symmetric around the mean, nested, and the quantiles are the interval ends.
    np.testing.assert_allclose(
        iv[(col, 0.9, "upper")] - mean, mean - iv[(col, 0.9, "lower")], rtol=1e-9
    )
    assert (iv[(col, 0.9, "upper")] > iv[(col, 0.5, "upper")]).all()
    np.testing.assert_allclose(q[(col, 0.05)], iv[(col, 0.9, "lower")])
    np.testing.assert_allclose(q[(col, 0.95)], iv[(col, 0.9, "upper")])
    np.testing.assert_allclose(q[(col, 0.5)], mean)

    # Rolling one-step-to-five-step forecasts over the test period: coverage near 90%.
    hits = []
    g = f.clone().fit(train)
    for start in range(0, 95, 5):
        iv = g.predict_interval(fh, coverage=0.9)
        truth = test.iloc[start : start + 5].to_numpy()
        hits.extend((iv.iloc[:, 0].to_numpy() <= truth) & (truth <= iv.iloc[:, 1].to_numpy()))
        g.update(test.iloc[start : start + 5], update_params=False)
    assert 0.8 <= np.mean(hits) <= 0.98


def test_auto_calibration_holds_out_a_tenth_of_long_series_only():
    """``calibration_fraction="auto"``: a 12,000-step random walk with Student-t (3)
    steps calibrates on its last tenth, which brings the rolling 90% coverage of the next
    600 values nearer 0.9 than the model's own σ (the Gaussian trained by CRPS is too narrow
    for heavy tails); a short series keeps all of it for training."""
    rng = np.random.default_rng(0)
    n = 12_000
    y = pd.DataFrame({"y": np.cumsum(rng.standard_t(3, n + 600))})
    coverage = {}
    for fraction in ("auto", 0.0):
        f = LevyForecaster(calibration_fraction=fraction, random_state=0)
        f.fit(y.iloc[:n])
        hits = []
        for start in range(n, n + 600, 10):
            if start > n:
                f.update(y.iloc[start - 10 : start], update_params=False)
            iv = f.predict_interval(fh=[1, 2, 3, 4, 5], coverage=0.9).to_numpy()
            truth = y.iloc[start : start + 5, 0].to_numpy()
            hits.extend((iv[:, 0] <= truth) & (truth <= iv[:, 1]))
        coverage[fraction] = np.mean(hits)
        if fraction == "auto":
            assert f.calibration_fraction_ == 0.1
            widened = f.calibration_.quantile(0.9, np.array([0]), np.array([1.0]))
            assert widened[0] > norm.ppf(0.95)
    assert abs(coverage["auto"] - 0.9) < abs(coverage[0.0] - 0.9)
    assert 0.85 <= coverage["auto"] <= 0.95

    short = LevyForecaster(**{**FAST, "max_epochs": 2}).fit(load_airline())
    assert short.calibration_fraction_ == 0.0 and short.calibration_.n_scores.sum() == 0


def test_grid_search_over_two_hyperparameters():
    y = load_airline().iloc[:96]
    cv = ExpandingWindowSplitter(fh=[1, 2, 3], initial_window=72, step_length=12)
    grid = ForecastingGridSearchCV(
        LevyForecaster(**{**FAST, "max_epochs": 3}),
        cv=cv,
        param_grid={"context_length": [12, 24], "normalization": ["mean", "trend"]},
        scoring=MeanAbsoluteError(),
    )
    grid.fit(y)
    assert set(grid.best_params_) == {"context_length", "normalization"}
    assert len(grid.cv_results_) == 4
    pred = grid.predict(fh=[1, 2, 3])
    assert list(pred.index) == list(pd.period_range(y.index[-1] + 1, periods=3, freq="M"))


def test_airline_backtest_beats_seasonal_naive(tmp_path):
    """Acceptance: expanding-window backtest of load_airline, fh 1-12, in ForecastingBenchmark.

    CRPS below NaiveForecaster(strategy="last", sp=12) and 90% coverage in [0.80, 0.97].
    """
    benchmark = ForecastingBenchmark()
    benchmark.add_estimator(LevyForecaster(random_state=0), estimator_id="Levy")
    benchmark.add_estimator(NaiveForecaster(strategy="last", sp=12), estimator_id="Naive")
    benchmark.add_task(
        load_airline,
        ExpandingWindowSplitter(fh=list(range(1, 13)), initial_window=72, step_length=12),
        [CRPS(), PinballLoss(), EmpiricalCoverage(coverage=0.9), MeanAbsoluteError()],
        task_id="airline",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = benchmark.run(str(tmp_path / "results.csv"))
    results = results.set_index("model_id")
    crps = results["CRPS_mean"]
    coverage = results["EmpiricalCoverage_mean"]
    assert crps["Levy"] < crps["Naive"]
    assert 0.80 <= coverage["Levy"] <= 0.97


def _thin(y: pd.Series, every: int) -> pd.Series:
    """Keep every ``every``-th observation counting back from the last one."""
    observed = np.flatnonzero(y.notna().to_numpy())
    drop = np.setdiff1d(observed, observed[::-1][::every])
    out = y.copy()
    out.iloc[drop] = np.nan
    return out


def _gap(y: pd.Series, width: int) -> pd.Series:
    """Hide the last ``width`` observations (a sensor gone silent; the cutoff stays)."""
    out = y.copy()
    out.iloc[np.flatnonzero(y.notna().to_numpy())[-width:]] = np.nan
    return out


@pytest.mark.parametrize(
    ("name", "degrade"), [("thinned", lambda y: _thin(y, 4)), ("gap", lambda y: _gap(y, 6))]
)
def test_less_history_never_lowers_sigma_on_average(walk_pretrained, name, degrade):
    # 60 unseen random walks, zero-shot: thinning a history (every 4th observation) or a gap
    # before the cutoff must not lower σ on average, at any horizon.
    walks = {f"u{i}": random_walk(seed=1000 + i).interpolate() for i in range(60)}
    full = pd.concat(walks).to_frame("y")
    less = pd.concat({k: degrade(w) for k, w in walks.items()}).to_frame("y")
    fh = [1, 3, 5]
    var_full = walk_pretrained.clone().fit(full).predict_var(fh=fh).to_numpy().reshape(60, 3)
    var_less = walk_pretrained.clone().fit(less).predict_var(fh=fh).to_numpy().reshape(60, 3)
    sd_full, sd_less = np.sqrt(var_full).mean(0), np.sqrt(var_less).mean(0)
    assert (sd_less >= sd_full).all(), (name, sd_full, sd_less)


def walk_pair(seed_a: int, seed_b: int) -> pd.DataFrame:
    """Two independent random walks as the channels ``a`` and ``b`` of one series."""
    walks = [random_walk(seed=seed_a), random_walk(seed=seed_b)]
    return pd.concat(walks, axis=1).set_axis(["a", "b"], axis=1)


@pytest.fixture(scope="module")
def pair_pretrained():
    panel = pd.concat({f"p{i}": walk_pair(i, 50 + i) for i in range(6)})
    return LevyForecaster(context_length=20, max_horizon=10, calibration_folds=1, **FAST).pretrain(
        panel
    )


@pytest.mark.parametrize("silence", [12, 30])
def test_a_silent_channel_never_gets_a_smaller_sigma(pair_pretrained, silence):
    # 60 unseen pairs, zero-shot: channel b silent for its last steps while a goes on
    # reporting (so the forecast origin does not move). Its horizon counts from its own last
    # observation, so σ of b must not fall on average, at any horizon (it fell by 17 % when
    # horizons counted from the last observation of any channel). Silent for longer than the
    # look-back (30 > 20 steps), b keeps its last value in the context instead of being
    # answered by the prior (whose σ was 19 % below the full history's).
    full = {f"u{i}": walk_pair(1000 + i, 2000 + i).interpolate() for i in range(60)}
    silent = {k: y.assign(b=y.b.mask(y.index >= y.index[-silence])) for k, y in full.items()}
    fh = [1, 3, 5]
    sd = {
        name: np.sqrt(pair_pretrained.clone().fit(pd.concat(ys)).predict_var(fh=fh)["b"])
        .to_numpy()
        .reshape(60, 3)
        .mean(0)
        for name, ys in {"full": full, "silent": silent}.items()
    }
    assert (sd["silent"] >= sd["full"]).all(), sd


@pytest.mark.parametrize("tz", [None, "Europe/Paris"])
def test_panel_forecast_times_are_sktimes_from_each_series_end(tz):
    """Relative fh on a panel counts from each series' own end: the forecast rows equal
    sktime's ``to_absolute_index`` from that end (the fast paths skip it per series)."""
    frames = {f"s{i}": irregular_frame(n=30 + 7 * i, seed=i) for i in range(3)}
    if tz is not None:
        frames = {k: f.tz_localize(tz) for k, f in frames.items()}
    panel = pd.concat(frames, names=["patient", "time"])
    f = LevyForecaster(**{**FAST, "max_epochs": 1}).fit(panel)
    fh = ForecastingHorizon(pd.to_timedelta([30, 90, 600], unit="min"), is_relative=True)
    rows = f.predict(fh).index
    for key, frame in frames.items():
        end = pd.DatetimeIndex([frame.index[-1]])
        expected = fh.to_absolute_index(end)
        got = rows[rows.get_level_values(0) == key].get_level_values(-1)
        np.testing.assert_array_equal(got.asi8, expected.asi8)
        assert str(got.tz) == str(expected.tz)
    # Regular series ending together: integer steps from the common end.
    quarterly = pd.concat(
        {
            k: pd.Series(
                np.arange(20.0) + i, index=pd.period_range("2000Q1", periods=20, freq="Q")
            )
            for i, k in enumerate("ab")
        }  # fmt: skip
    ).to_frame("y")
    g = LevyForecaster(**{**FAST, "max_epochs": 1}).fit(quarterly)
    times = g.predict(fh=[1, 2]).index.get_level_values(-1)
    assert list(times.astype(str)) == ["2005Q1", "2005Q2"] * 2


def _two_channels(seed, n=48):
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    values = np.column_stack([np.sin(t / 4 + seed), np.cos(t / 5 + seed)])
    values += 0.1 * rng.normal(size=values.shape)
    index = pd.date_range("2021-01-01", periods=n, freq="h")
    return pd.DataFrame(values, index=index, columns=["a", "b"])


def test_a_channel_not_yet_observed_is_not_anchored_on_its_later_values():
    # A window anchored a channel without context observations at the series' own mean,
    # which a lone later observation sets: after pretrain the in-sample forecast at t was
    # that later value (moved by 5 when it moved by 5), and training and held-out
    # calibration learned from such anchors what a new subject never has.
    panel = pd.concat({k: _two_channels(k) for k in range(6)})
    forecaster = LevyForecaster(**TINY_FC).pretrain(panel)
    new = _two_channels(9)
    new.loc[new.index[:40], "b"] = np.nan
    at = ForecastingHorizon(new.index[[30]], is_relative=False)
    forecasts = []
    for later in (1.0, 6.0):
        new.loc[new.index[40:], "b"] = np.nan
        new.loc[new.index[40], "b"] = later
        forecasts.append(forecaster.fit(new).predict(fh=at)["b"].iloc[0])
    assert forecasts[1] == pytest.approx(forecasts[0], abs=1e-9)


def test_a_global_fit_does_not_depend_on_the_order_of_the_panels_series():
    # The series' forecasts moved by up to 0.35 (amplitude 1) with the order of their rows.
    panel = pd.concat({f"s{k}": _two_channels(k) for k in range(5)})
    shuffled = pd.concat({f"s{k}": _two_channels(k) for k in (3, 0, 4, 1, 2)})
    a = LevyForecaster(**TINY_FC).fit(panel).predict_interval(fh=[1, 2])
    b = LevyForecaster(**TINY_FC).fit(shuffled).predict_interval(fh=[1, 2])
    assert b.index.get_level_values(0).unique().tolist() == ["s3", "s0", "s4", "s1", "s2"]
    pd.testing.assert_frame_equal(b.sort_index(), a.sort_index())


def level_pairs(n: int, seed: int) -> pd.DataFrame:
    """``n`` subjects of 30 steps, channels ``a`` and ``b`` each at its own subject level
    (3 × a standard Normal) plus noise of 0.3: a panel whose subjects differ in level."""
    rng = np.random.default_rng(seed)
    frames = {}
    for i in range(n):
        levels = 3 * rng.standard_normal(2)
        frames[f"s{seed}_{i}"] = pd.DataFrame(
            levels + 0.3 * rng.standard_normal((30, 2)), columns=["a", "b"]
        )
    return pd.concat(frames)


def test_a_channel_a_new_subject_never_showed_gets_the_populations_calibrated_spread():
    # The network never saw a subject without b (every pretraining subject shows it): its σ
    # there was 2-3 times the population's (vitals: 90 % coverage 0.99-1.00, width 2.4x).
    # Such a channel is forecast by the population: its mean, and the pretraining panel's
    # conformal spread about it. Reference: the simulated new subjects' values.
    pretrained = LevyForecaster(**{**FAST, "max_epochs": 5}).pretrain(level_pairs(40, 1))
    new = level_pairs(300, 2)
    history = new.groupby(level=0).head(20)
    fh = [1, 2, 3]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # b unobserved; some levels far from the population
        f = pretrained.clone().fit(history.assign(b=np.nan))
        # b observed at first, not at the cutoff: the network's forecast, not the population's
        seen = history.assign(b=history.b.where(history.groupby(level=0).cumcount() < 5))
        seen = pretrained.clone().fit(seen).predict(fh=fh)["b"]
    mean = f.predict(fh=fh)["b"]
    np.testing.assert_allclose(mean, pretrained.pretrained_channel_mean_[1])
    assert not np.allclose(seen, mean)
    # Its breakdown says so: no evidence from the subject, all of σ² the population's spread
    # (the network's evidence and disagreement were reported for a forecast it did not make).
    why = f.predict_uncertainty(fh=fh)
    assert (why.evidence["b"] == 0).all() and (why.evidence["a"] > 0).all()
    np.testing.assert_allclose(why.disagreement["b"], why.std["b"] ** 2)
    assert (why.noise_variance["b"] == 0).all()
    bounds = f.predict_interval(fh=fh, coverage=[0.5, 0.9])
    truth = new.groupby(level=0).nth(slice(20, 23))["b"].to_numpy()
    for c in (0.5, 0.9):
        lower, upper = (bounds[("b", c, side)].to_numpy() for side in ("lower", "upper"))
        covered = ((lower <= truth) & (truth <= upper)).reshape(300, 3)[:, 0].mean()
        assert abs(covered - c) < 0.07, (c, covered)  # 300 subjects: sd of 0.03 at 50 %


@pytest.mark.filterwarnings("ignore:Training ended with a loss")  # three steps learn little
def test_max_steps_bounds_pretraining_below_one_epoch():
    """Where one epoch holds more than max_steps batches, each network trains exactly
    max_steps of them, on rows drawn from the seed: the same seed gives the same network
    and forecasts, another seed other rows."""
    from levy_sklearn.datasets import make_irregular_vitals

    panel = make_irregular_vitals(8, duration=12.0, random_state=0)
    params = {**TINY_FC, "max_epochs": 1, "max_steps": 3, "batch_size": 8}

    def pretrained(seed):
        f = LevyForecaster(**{**params, "random_state": seed}).pretrain(panel)
        net = f.pretrained_net_
        steps = [b for b in net.history[-1, "batches"] if "train_loss" in b]
        assert len(steps) == 3 < len(panel) / 8  # well short of one epoch
        history = panel.xs(0, level=0)
        fh = pd.to_timedelta([5, 20], unit="min")
        return f.fit(history).predict_var(fh=fh).to_numpy(), net.history[-1, "train_loss"]

    (a, loss_a), (b, loss_b), (_, loss_c) = pretrained(0), pretrained(0), pretrained(1)
    np.testing.assert_array_equal(a, b)
    assert loss_a == loss_b != loss_c


def test_pretraining_cost_never_falls_as_the_panel_grows(monkeypatch):
    """calibration_folds="auto" cross-fits every fold whatever the panel's number of
    subjects, each training within max_steps: a panel one subject larger trains as many
    networks, each as long or longer, where a fold count that fell at a number of subjects
    would make the larger panel train one network where the smaller trains six (where the
    windows outgrow max_steps instead, see the rows stepped through in test_training)."""
    import levy_sklearn._series_training as module

    steps = []  # optimizer steps of each network trained

    def spy(net, windows, targets, seed):
        fitted = fit(net, windows, targets, seed)
        steps.append(sum("train_loss" in b for e in fitted.history for b in e["batches"]))
        return fitted

    fit = module.fit_levy_net
    monkeypatch.setattr(module, "fit_levy_net", spy)
    params = {**TINY_FC, "max_epochs": 1, "max_steps": 2, "windows_per_series": 4}
    costs = []
    for n_series in (99, 100):
        steps.clear()
        LevyForecaster(**params).pretrain(sine_panel(n_series, n=30, seed=2))
        costs.append(list(steps))
    assert [len(c) for c in costs] == [6, 6]  # five fold networks and the pretrained one
    assert all(s == 2 for c in costs for s in c)  # each within max_steps


def test_level_gain_trains_a_gain_per_horizon_and_saves():
    y = pd.Series(
        np.exp(np.cumsum(np.random.default_rng(0).normal(0, 0.1, 200))),
        index=pd.date_range("2020", periods=200, freq="D"),
    )
    plain = LevyForecaster(**TINY_FC).fit(y)
    assert plain.net_.module_.level_gain is None  # off by default
    f = LevyForecaster(**TINY_FC, level_gain=True).fit(y)
    gain = f.net_.module_.level_gain
    # One weight per feature (1, loc / scale, 1 / scale), per target and horizon unit.
    assert gain.weight.shape == (1, TINY_FC["max_horizon"], 3)
    assert (gain.weight != 0).any()  # it starts at 0 (a gain of 1) and trains
    var = f.predict_var(fh=[1, 2, 3]).to_numpy()
    assert (var > 0).all() and np.isfinite(var).all()
    buffer = io.BytesIO()
    save(f, buffer)
    buffer.seek(0)
    a, b = f.predict_interval(fh=[1, 2, 3]), load(buffer).predict_interval(fh=[1, 2, 3])
    np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())
