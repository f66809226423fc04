"""Covariates (sktime's ``X``): input channels of their own, known ahead or past only, static
traits, forecasts under alternative plans, their errors, their evidence and their model file.

The synthetic series ``y_t = a·x_{t−lag} + noise`` (``x`` white noise) is unpredictable
from its own past: only ``x`` forecasts it, so a forecaster that reads ``X`` must beat the
same forecaster without it by far.
"""

import io
import warnings

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import TINY_FC

from levy_sklearn._covariates import CovariateSpec
from levy_sklearn.forecaster import LevyForecaster
from levy_sklearn.serialization import load, save
from levy_sklearn.windows import PLAN_CUT_SHARE, InputSeries, WindowPlan, series_windows

A, LAG, NOISE, N = 3.0, 2, 0.3, 240
FH = [1, 2, 3, 4]
# Learns the lagged dependence on x in about three seconds (y is no random walk: its
# levels, not its changes from the last value, are what x explains).
FAST = {
    **TINY_FC,
    "d_model": 16,
    "n_heads": 4,
    "max_epochs": 30,
    "windows_per_series": 200,
    "ar_order": 0,
    "normalization": "none",
}


def _lagged(n=N + 20, seed=0):
    """``y_t = A·x_{t−LAG} + noise`` on a regular integer index, ``x`` white noise."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    y = A * np.r_[np.zeros(LAG), x[:-LAG]] + NOISE * rng.normal(size=n)
    index = pd.RangeIndex(n)
    return pd.DataFrame({"y": y}, index=index), pd.DataFrame({"x": x}, index=index)


def _fit(known_ahead="all", with_x=True, **params):
    y, X = _lagged()
    forecaster = LevyForecaster(**{**FAST, **params}, known_ahead=known_ahead)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        forecaster.fit(y.iloc[:N], X=X.iloc[:N] if with_x else None)
    return forecaster, y, X


@pytest.fixture(scope="module")
def with_plan():
    return _fit()


def test_known_ahead_x_lowers_the_error_far_below_the_fit_without_x(with_plan):
    forecaster, y, X = with_plan
    truth = y["y"].to_numpy()[N : N + len(FH)]
    mae_x = np.abs(forecaster.predict(FH, X=X.iloc[N:]).to_numpy().ravel() - truth).mean()
    without, *_ = _fit(known_ahead=None, with_x=False)
    mae_0 = np.abs(without.predict(FH).to_numpy().ravel() - truth).mean()
    # Without x, y is noise of sd A (MAE ≈ 2.4); with the plan, of sd NOISE.
    assert mae_x < 0.4 * mae_0, (mae_x, mae_0)


def test_plans_give_their_own_forecasts_with_the_sign_of_the_dependence(with_plan):
    forecaster, _, X = with_plan
    future = X.iloc[N:]
    high, low = future + 1.5, future - 1.5
    mean_high = forecaster.predict(FH, X=high).to_numpy().ravel()
    mean_low = forecaster.predict(FH, X=low).to_numpy().ravel()
    again = forecaster.predict(FH, X=high).to_numpy().ravel()
    np.testing.assert_array_equal(mean_high, again)  # the same plan twice: the same forecast
    # y follows x LAG steps later (a > 0): a higher plan raises the forecasts it reaches.
    reached = np.array(FH) > LAG
    assert (mean_high[reached] - mean_low[reached] > 0.5 * A).all()
    var_high = forecaster.predict_var(FH, X=high).to_numpy()
    assert np.isfinite(var_high).all() and (var_high > 0).all()  # each plan has its σ


def test_a_past_only_column_is_never_read_after_the_cutoff():
    forecaster, _, X = _fit(known_ahead=None)
    future = X.iloc[N:]
    first = forecaster.predict(FH, X=future)
    changed = forecaster.predict(FH, X=future * -5 + 7)
    pd.testing.assert_frame_equal(first, changed)
    # Nor X after the cutoff given to fit: it changes nothing either.
    y, X = _lagged()
    late = X.copy()
    late.iloc[N:] = 100.0
    refit = LevyForecaster(**FAST).fit(y.iloc[:N], X=late)
    pd.testing.assert_frame_equal(refit.predict(FH, X=future), first)


def test_inputs_are_no_lags_of_the_autoregression():
    """An input's tokens keep their standardised level, which the windows do not
    normalise as they do y's: the autoregression (``ar_order``) reads y's lags alone."""
    forecaster, *_ = _fit(known_ahead=None, ar_order=3)
    lags = forecaster.net_.module_.lags
    assert lags.weight.shape[2:] == (1, 3)  # y's channel alone, three lags
    # Input tokens alone (and y's anchor at 0): no shift, whatever their values.
    shift = lags(
        *(torch.tensor([[-1.0, 0.0, 0.0]]), torch.tensor([[1, 1, 0]])),
        *(torch.tensor([[5.0, 6.0, 0.0]]), torch.ones(1, 3, dtype=torch.bool)),
        torch.tensor([[1.0]]),
        torch.zeros(1, 1, dtype=torch.long),
    )
    assert shift.item() == 0.0


def test_known_ahead_tokens_add_evidence():
    """Evidence Λ counts every observation token, covariates included: with no encoder
    block (n_layers=0) each token is a key of its own, so more planned values can only add
    mass to every head's Λ (a key never takes mass from another)."""
    forecaster, _, X = _fit(n_layers=0)
    future = X.iloc[N:]
    sparse = future.copy()
    sparse.iloc[1:] = np.nan  # the plan's first value only
    full = forecaster.predict_uncertainty(FH, X=future).evidence_per_head.to_numpy()
    thin = forecaster.predict_uncertainty(FH, X=sparse).evidence_per_head.to_numpy()
    assert (full > thin).all()


def test_static_traits_and_own_time_points_on_a_panel_with_pretrain_and_update():
    def minutes(t):
        return pd.to_timedelta(t, unit="min")

    frames, covariates = [], []
    for i in range(6):
        y, X = _lagged(seed=i)
        y = y.iloc[:120].set_axis(minutes(np.arange(120.0)))
        # doses on their own time points (half a step after y's), and a trait per series
        doses = X.iloc[:124].set_axis(minutes(np.arange(124) + 0.5)).assign(weight=60.0 + i)
        frames.append(y.set_index(pd.Index([i] * len(y)), append=True))
        covariates.append(doses.set_index(pd.Index([i] * len(doses)), append=True))
    y = pd.concat(frames).reorder_levels([1, 0])
    X = pd.concat(covariates).reorder_levels([1, 0])
    forecaster = LevyForecaster(**TINY_FC, known_ahead=["x"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        forecaster.pretrain(y, X=X)
        assert forecaster.pretrained_covariates_.static == [False, True]
        one = y.loc[[0]]
        forecaster.fit(one, X=X.loc[[0]])
        first = forecaster.predict([1, 2], X=X.loc[[0]])
        assert np.isfinite(first.to_numpy()).all()
        forecaster.update(y.loc[[0]].iloc[-1:], X=X.loc[[0]].iloc[-2:], update_params=False)
        assert np.isfinite(forecaster.predict([1], X=X.loc[[0]]).to_numpy()).all()
        buffer = io.BytesIO()
        save(forecaster, buffer)
        buffer.seek(0)
        loaded = load(buffer)
        assert loaded.pretrained_covariates_ == forecaster.pretrained_covariates_
        pd.testing.assert_frame_equal(
            loaded.predict([1, 2], X=X.loc[[0]]), forecaster.predict([1, 2], X=X.loc[[0]])
        )
        with pytest.raises(ValueError, match="pretrained network reads X's columns"):
            forecaster.clone().fit(one)


def test_the_model_file_keeps_the_covariates(with_plan):
    forecaster, _, X = with_plan
    buffer = io.BytesIO()
    save(forecaster, buffer)
    buffer.seek(0)
    loaded = load(buffer)
    assert loaded.covariates_ == forecaster.covariates_
    plan = X.iloc[N:]
    pd.testing.assert_frame_equal(loaded.predict(FH, X=plan), forecaster.predict(FH, X=plan))


def test_bad_covariates_are_refused_with_the_fix(with_plan):
    forecaster, y, X = with_plan
    plan = X.iloc[N:]
    with pytest.raises(ValueError, match=r"missing: \['x'\]"):
        forecaster.predict(FH, X=plan.rename(columns={"x": "z"}))
    with pytest.raises(ValueError, match="known-ahead column 'x' .* first forecast time 240"):
        forecaster.predict(FH, X=plan * np.nan)
    with pytest.raises(ValueError, match="known_ahead names \\['dose'\\], which X lacks"):
        LevyForecaster(**TINY_FC, known_ahead=["dose"]).fit(y.iloc[:N], X=X.iloc[:N])
    without = LevyForecaster(**TINY_FC).fit(y.iloc[:N])
    with pytest.raises(ValueError, match="trained without X"):
        without.predict(FH, X=plan)
    with pytest.raises(ValueError, match="trained without X"):
        without.update(y.iloc[N : N + 1], X=plan.iloc[:1], update_params=False)
    assert without.cutoff[0] == N - 1  # a refused update leaves the forecaster as it was
    pd.testing.assert_frame_equal(
        without.predict(FH), LevyForecaster(**TINY_FC).fit(y.iloc[:N]).predict(FH)
    )
    dated = X.iloc[:N].set_axis(pd.date_range("2024", periods=N, freq="h"))
    with pytest.raises(ValueError, match="X has timestamps but y has integer times"):
        LevyForecaster(**TINY_FC).fit(y.iloc[:N], X=dated)


def test_windows_read_past_only_inputs_to_the_cutoff_and_known_ahead_ones_beyond():
    t, v = np.arange(10.0), np.zeros((10, 1))
    x = np.arange(10.0)[:, None] + 100  # the input's value names its time
    windows = {}
    for known in (False, True):
        inputs = InputSeries(t, x, known=np.array([known]), static=np.array([np.nan]))
        w = series_windows(
            [t], [v], [np.array([5.0])], context_length=3, horizon=2, inputs=[inputs]
        )
        mine = w.tokens["mask"][0] & (w.tokens["channels"][0] == 1)
        windows[known] = sorted(w.tokens["values"][0][mine].tolist())
    assert windows[False] == [103.0, 104.0, 105.0]  # (cutoff − 3, cutoff]
    assert windows[True] == [103.0, 104.0, 105.0, 106.0, 107.0]  # and (cutoff, cutoff + 2]
    trait = InputSeries(t, np.full((10, 1), 7.0), known=np.array([False]), static=np.array([7.0]))
    w = series_windows([t], [v], [np.array([5.0])], context_length=3, horizon=2, inputs=[trait])
    mine = w.tokens["mask"][0] & (w.tokens["channels"][0] == 1)
    assert w.tokens["values"][0][mine].tolist() == [7.0]  # a trait: one token per window
    assert (w.tokens["query_channels"][w.query_valid] == 0).all()  # inputs are never queried


def test_a_share_of_training_windows_read_their_plan_to_a_time_drawn_in_the_horizon():
    # A forecast's X need only reach its last forecast time: a network whose training windows
    # all read the plan to the horizon read a plan's earlier end as "nothing after it"
    # (benchmarks/results/covariates_notes.md, "Plans that end before the horizon").
    # Windows that calibrate σ, forecasts made with the whole plan, read it to the horizon.
    t, v = np.arange(400.0), np.zeros((400, 1))
    x = 100 + t[:, None]  # the input's value names its time
    inputs = [InputSeries(t, x, known=np.array([True]), static=np.array([np.nan]))]
    plan = WindowPlan(3.0, 8.0, None, "last", 64, None, 1000, 0.0, 0.0)

    def reach(part):
        w = plan.windows([t], [v], part, seed=0, inputs=inputs)
        mine = w.tokens["mask"] & (w.tokens["channels"] == 1)
        last = np.where(mine, w.tokens["values"], -np.inf).max(axis=1) - 100 - w.cutoffs
        return last[w.cutoffs <= 391]  # a whole horizon of the input after the cutoff

    train = reach("train")
    assert train.size > 350
    cut = train < 8
    assert abs(cut.mean() - PLAN_CUT_SHARE) < 0.08
    # the cut ones end at a time drawn uniformly in the horizon: whole steps 0 to 7
    assert set(np.unique(train[cut])) == set(range(8)) and abs(train[cut].mean() - 3.5) < 0.5
    assert (reach("held_out") == 8).all()
    # the draws are the seed's
    again = [plan.windows([t], [v], "train", seed=0, inputs=inputs) for _ in range(2)]
    np.testing.assert_array_equal(again[0].tokens["values"], again[1].tokens["values"])


@pytest.mark.parametrize(
    ("max_tokens", "expected"),
    [
        # The plan up to the horizon first, then the latest past cells with what it leaves.
        (8, [109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 209.0, 210.0]),
        (3, [111.0, 112.0, 113.0]),  # a plan longer than the budget: its earliest cells
        (None, [*np.arange(101.0, 115.0), *np.arange(201.0, 211.0)]),
    ],
)
def test_all_input_tokens_of_a_window_share_one_max_tokens_budget(max_tokens, expected):
    t, v = np.arange(20.0), np.zeros((20, 1))
    # Values name the column (100s: known ahead, 200s: past only) and the time.
    x = np.column_stack([100 + t, 200 + t])
    inputs = InputSeries(t, x, known=np.array([True, False]), static=np.full(2, np.nan))
    w = series_windows(
        [t], [v], [np.array([10.0])], context_length=10, horizon=4, inputs=[inputs],
        max_tokens=max_tokens,
    )  # fmt: skip
    real = w.tokens["mask"][0]
    mine = real & (w.tokens["channels"][0] >= 1)
    assert sorted(w.tokens["values"][0][mine].tolist()) == expected
    # y's look-back keeps a budget of its own: its latest max_tokens cells.
    assert (real & (w.tokens["channels"][0] == 0)).sum() == min(10, max_tokens or 10)


def test_inputs_in_target_units_are_divided_by_the_window_scale_of_y():
    """With ``in_target_units`` a time-varying input's tokens are its values over the
    window's scale of y: the root mean square of y's steps up to the cutoff (its history
    scale, here above the window's own spread), ``min_scale`` added in quadrature."""
    t = np.arange(12.0)
    v = np.array([0.0, 2.0, 2.0, 5.0, 5.0, 5.0, 6.0, 6.0, 6.0, 6.0, 6.0, 6.0])[:, None]
    x = np.column_stack([np.arange(12.0) + 1.0, np.full(12, 4.0)])  # a rate, a trait
    plain, scaled = (
        InputSeries(t, x, np.array([True, False]), np.array([np.nan, 4.0]), in_target_units=units)
        for units in (False, True)
    )
    tokens = {}
    for inputs in (plain, scaled):
        w = series_windows(
            [t], [v], [np.array([8.0])], context_length=3, horizon=2, inputs=[inputs],
            normalization="last",
        )  # fmt: skip
        real = w.tokens["mask"][0]
        tokens[inputs.in_target_units] = {
            ch: sorted(w.tokens["values"][0][real & (w.tokens["channels"][0] == ch)].tolist())
            for ch in (1, 2)
        }
    steps = np.diff(v[:9, 0])  # the steps that end at or before the cutoff
    scale = np.sqrt(np.mean(steps**2) + 0.05**2)
    np.testing.assert_allclose(tokens[True][1], np.array(tokens[False][1]) / scale)
    assert tokens[False][1] == [7.0, 8.0, 9.0, 10.0, 11.0]  # (cutoff − 3, cutoff + 2]
    assert tokens[True][2] == tokens[False][2] == [4.0]  # a static trait is left alone


def test_input_scaling_target_keeps_zero_at_zero_and_needs_one_column_of_y():
    y, X = _lagged()
    X = X.assign(x=X["x"].abs() * (np.arange(len(X)) % 3 == 0))  # a rate, off 2/3 of the time
    forecaster = LevyForecaster(**TINY_FC, known_ahead="all", input_scaling="target")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        forecaster.fit(y.iloc[:N], X=X.iloc[:N])
    spec = forecaster.covariates_
    # Divided by its standard deviation only: 0 (off) stays 0.
    np.testing.assert_allclose(spec.mean, [0.0])
    np.testing.assert_allclose(spec.scale, [X["x"].iloc[:N].std(ddof=0)])
    assert spec.target_units and CovariateSpec.from_state(spec.to_state()) == spec
    on, off = X.iloc[N:] + 1.0, X.iloc[N:] * 0.0
    assert not np.allclose(forecaster.predict(FH, X=on), forecaster.predict(FH, X=off))
    two = y.assign(z=y["y"] * 2)
    with pytest.raises(ValueError, match="input_scaling='target' reads X in the units of y"):
        LevyForecaster(**TINY_FC, input_scaling="target").fit(two.iloc[:N], X=X.iloc[:N])
