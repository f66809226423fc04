"""Seasonal windows (``seasonal_period``) against seasons and frequencies written by hand."""

import io
import warnings

import numpy as np
import pandas as pd
import pytest

from levy_sklearn.forecaster import LevyForecaster
from levy_sklearn.serialization import load, save
from levy_sklearn.windows import infer_seasonal_period, seasonal_periods, series_windows

# One year of monthly effects (mean 0, with an alternating part) on a line.
EFFECTS = np.array([3.0, 1.0, -2.0, 5.0, 0.0, 1.0, -4.0, 2.0, 2.0, -1.0, -6.0, -1.0])


def seasonal_series(t: np.ndarray) -> np.ndarray:
    return (10.0 + 0.5 * t + EFFECTS[t.astype(int) % 12])[:, None]


@pytest.mark.parametrize(
    ("index", "expected"),
    [
        (pd.period_range("2020-01", periods=4, freq="M"), 12.0),
        (pd.period_range("2020Q1", periods=4, freq="Q"), 4.0),
        (pd.period_range("2020-01-01", periods=4, freq="D"), 7.0),
        (pd.period_range("2020-01-01", periods=4, freq="h"), 24.0),
        (pd.date_range("2020", periods=4, freq="MS"), pd.Timedelta(days=365.2425)),
        (pd.date_range("2020", periods=4, freq="D"), pd.Timedelta(days=7)),
        (pd.date_range("2020", periods=4, freq="h"), pd.Timedelta(days=1)),
        # a regular index without a stored frequency: read from its spacing
        (pd.DatetimeIndex(["2020-01-01", "2020-01-02", "2020-01-03"]), pd.Timedelta(days=7)),
        (pd.period_range("2020", periods=4, freq="Y"), None),
        (pd.date_range("2020", periods=4, freq="2h"), pd.Timedelta(days=1)),
        (pd.date_range("2020", periods=4, freq="7h"), None),
        (pd.DatetimeIndex(["2020-01-01", "2020-01-02", "2020-01-04"]), None),
        (pd.RangeIndex(4), None),
    ],
)
def test_infer_seasonal_period(index, expected):
    assert infer_seasonal_period(index) == expected


def test_pure_seasonal_series_is_forecast_exactly_by_the_window_location():
    # Trend + any 12-step pattern: the window's location (what the network adds to) is the
    # future itself, and every normalised context value and target is 0.
    t = np.arange(48.0)
    v = seasonal_series(t)
    w = series_windows(
        [t],
        [v],
        [np.array([35.0])],
        context_length=36,
        horizon=12,
        normalization="trend",
        seasonal_period=12.0,
    )
    np.testing.assert_allclose(w.query_loc[0], v[36:, 0], atol=1e-9)
    np.testing.assert_allclose(w.targets, 0.0, atol=1e-9)
    np.testing.assert_allclose(w.tokens["values"][w.tokens["mask"]], 0.0, atol=1e-6)
    # Without the season the targets are the effects a year ago, scaled.
    plain = series_windows(
        [t], [v], [np.array([35.0])], context_length=36, horizon=12, normalization="trend"
    )
    assert np.abs(plain.targets).max() > 0.5


def test_season_is_read_from_irregular_times():
    # A smooth yearly cycle observed at random times (continuous time, no grid).
    rng = np.random.default_rng(0)
    t = np.sort(rng.uniform(0, 48, 60))
    cycle = 3.0 * np.sin(2 * np.pi * t / 12) + np.cos(4 * np.pi * t / 12)
    v = (2.0 + cycle)[:, None]
    w = series_windows(
        [t],
        [v],
        [np.array([t[-1]])],
        context_length=48,
        query_times=[np.array([1.0, 6.5])],
        normalization="mean",
        seasonal_period=12.0,
    )
    future = t[-1] + np.array([1.0, 6.5])
    expected = 2.0 + 3.0 * np.sin(2 * np.pi * future / 12) + np.cos(4 * np.pi * future / 12)
    np.testing.assert_allclose(w.query_loc[0], expected, atol=1e-8)


def test_context_shorter_than_two_periods_keeps_its_season():
    t = np.arange(48.0)
    v = seasonal_series(t)
    kwargs = dict(context_length=18, horizon=12, normalization="trend")
    with_period = series_windows([t], [v], [np.array([35.0])], seasonal_period=12.0, **kwargs)
    without = series_windows([t], [v], [np.array([35.0])], **kwargs)
    np.testing.assert_array_equal(with_period.query_loc, without.query_loc)
    np.testing.assert_array_equal(with_period.targets, without.targets)


@pytest.mark.parametrize(
    ("y", "seasonal_period", "expected"),
    [
        (pd.Series(np.arange(40.0), pd.period_range("2000-01", periods=40, freq="M")), "auto", 12),
        (pd.Series(np.arange(40.0)), "auto", None),
        (pd.Series(np.arange(40.0), pd.period_range("2000-01", periods=40, freq="M")), None, None),
        (pd.Series(np.arange(40.0), pd.date_range("2000", periods=40, freq="h")), "1D", 24),
        (pd.Series(np.arange(40.0)), 6, 6),
    ],
)
def test_forecaster_seasonal_period_in_time_units(y, seasonal_period, expected):
    forecaster = LevyForecaster(seasonal_period=seasonal_period, max_epochs=1, random_state=0)
    forecaster.fit(y)
    assert forecaster.seasonal_period_ == expected
    assert np.isfinite(forecaster.predict(fh=[1, 2]).to_numpy()).all()


@pytest.mark.parametrize("freq", ["D", "24h", "1440min"])
def test_a_daily_step_implies_a_weekly_season_however_pandas_names_it(freq):
    # "24h" and "1440min" got no season (the table knew "D" only): error 1.82 against 0.32
    index = pd.date_range("2021-01-04", periods=30, freq=freq)
    assert infer_seasonal_period(index) == pd.Timedelta(days=7)


def test_a_panels_season_is_the_one_most_series_imply():
    # The first series alone decided: one missing day there switched the weekly season off
    # for every series of the panel.
    days = pd.date_range("2021-01-04", periods=42, freq="D")
    series = {
        k: pd.DataFrame({"y": np.sin(np.arange(42) * 2 * np.pi / 7 + k)}, index=days)
        for k in range(4)
    }
    series[0] = series[0].drop(days[10])
    forecaster = LevyForecaster(context_length=21, max_epochs=1, random_state=0)
    assert forecaster.fit(pd.concat(series)).seasonal_period_ == 7.0


def test_forecaster_rejects_unreadable_seasonal_period():
    y = pd.Series(np.arange(40.0), pd.period_range("2000-01", periods=40, freq="M"))
    with pytest.raises(ValueError, match="seasonal_period='yearly' is not a time span"):
        LevyForecaster(seasonal_period="yearly", max_epochs=1).fit(y)


def _fourier_design(t: np.ndarray) -> np.ndarray:
    """Line and the 11 seasonal columns of a 12-step period (``sin(πτ)`` vanishes)."""
    angle = 2 * np.pi * np.outer(t, np.arange(1, 7)) / 12
    return np.column_stack([np.ones_like(t), t, np.cos(angle), np.sin(angle[:, :5])])


def test_season_coefficients_are_shrunk_by_the_james_stein_factor_of_the_f_statistic():
    import statsmodels.api as sm

    from levy_sklearn._normalisation import seasonal_coefficients

    rng = np.random.default_rng(0)
    t = np.arange(-35.0, 1.0)
    for amplitude, expect in ((0.6, "shrunk"), (0.0, "shrunk"), (8.0, "kept")):
        v = 0.1 * t + amplitude * EFFECTS[t.astype(int) % 12] / 3 + rng.normal(size=t.size)
        full = sm.OLS(v, _fourier_design(t)).fit()
        line = sm.OLS(v, _fourier_design(t)[:, :2]).fit()
        f_stat, _, p = full.compare_f_test(line)  # F of the 11 seasonal coefficients
        factor = max(0.0, 1 - (p - 2) / (p * f_stat))
        coef = seasonal_coefficients(t, np.zeros(t.size, int), v, 1, 12.0)[0]
        cos_sin = np.concatenate([coef[:, 0], coef[:5, 1]])
        np.testing.assert_allclose(cos_sin, factor * full.params[2:], rtol=1e-8, atol=1e-10)
        assert factor < 0.9 if expect == "shrunk" else factor > 0.98


def test_shrinking_a_weak_season_forecasts_the_mean_better_than_least_squares():
    # Monte Carlo: a weak yearly pattern (about a third of the noise) on a line, 36 months of
    # context; the window's location over the next year against the true mean, and against
    # the plain least-squares forecast of the same model (statsmodels).
    import statsmodels.api as sm

    rng = np.random.default_rng(1)
    t = np.arange(-35.0, 13.0)
    past, future = t <= 0, t > 0
    truth = 0.2 * t + 0.35 * EFFECTS[t.astype(int) % 12]
    errors = {"shrunk": [], "least squares": []}
    for _ in range(300):
        v = truth + rng.normal(size=t.size)
        w = series_windows(
            [t],
            [v[:, None]],
            [np.array([0.0])],
            context_length=36,
            query_times=[t[future]],
            normalization="trend",
            seasonal_period=12.0,
        )
        ols = sm.OLS(v[past], _fourier_design(t[past])).fit()
        errors["shrunk"].append(np.mean((w.query_loc[0] - truth[future]) ** 2))
        errors["least squares"].append(
            np.mean((ols.predict(_fourier_design(t[future])) - truth[future]) ** 2)
        )
    gain = np.subtract(errors["least squares"], errors["shrunk"])
    assert gain.mean() > 4 * gain.std() / np.sqrt(gain.size)  # better beyond 4 standard errors


def _half_hourly(days: int, seed: int = 0) -> pd.Series:
    """A daily cycle (48 half-hours, a sharp morning peak) plus noise."""
    t = np.arange(48 * days)
    phase = t % 48
    cycle = 5.0 * np.exp(-(((phase - 16) / 3.0) ** 2)) + np.sin(2 * np.pi * phase / 48)
    noise = 0.1 * np.random.default_rng(seed).normal(size=t.size)
    return pd.Series(
        20.0 + cycle + noise, pd.date_range("2024-01-01", periods=t.size, freq="30min")
    )


FAST_SEASONAL = dict(d_model=8, n_heads=2, max_epochs=2, windows_per_series=64, random_state=0)


def test_a_daily_season_on_half_hourly_data_is_removed_with_the_default_context():
    # The default context was 36 half-hours, less than the two days a daily season needs:
    # the season was ignored and the forecasts equalled those without it, silently.
    y = _half_hourly(10)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        seasonal = LevyForecaster(seasonal_period="1D", **FAST_SEASONAL).fit(y)
    plain = LevyForecaster(seasonal_period=None, **FAST_SEASONAL).fit(y)
    assert seasonal.seasonal_period_ == 48.0
    assert seasonal.context_span_ == 97.0  # two days and a step: 97 half-hours
    assert plain.context_span_ == 36.0
    fh = np.arange(1, 49)
    truth = _half_hourly(11).to_numpy()[-48:]
    seasonal_error = np.abs(seasonal.predict(fh=fh).to_numpy() - truth).mean()
    plain_error = np.abs(plain.predict(fh=fh).to_numpy() - truth).mean()
    assert seasonal_error < 0.5 * plain_error  # the morning peak is forecast


@pytest.mark.parametrize("freq", ["5min", "15min", "30min", "h"])
def test_auto_reads_a_daily_season_from_sub_hourly_and_hourly_indexes(freq):
    index = pd.date_range("2024-01-01", periods=12, freq=freq)
    assert infer_seasonal_period(index) == pd.Timedelta(days=1)


def test_auto_gives_half_hourly_data_a_daily_season_and_a_context_of_two_days():
    forecaster = LevyForecaster(**FAST_SEASONAL).fit(_half_hourly(6))
    assert forecaster.seasonal_period_ == 48.0
    assert forecaster.context_span_ == 97.0


def test_auto_takes_a_week_where_max_tokens_holds_two():
    y = pd.Series(
        np.random.default_rng(0).normal(size=24 * 21),
        pd.date_range("2024-01-01", periods=24 * 21, freq="h"),
    )
    day = LevyForecaster(**FAST_SEASONAL).fit(y)
    week = LevyForecaster(max_tokens=400, **FAST_SEASONAL).fit(y)
    assert (day.seasonal_period_, day.context_span_) == (24.0, 49.0)
    assert (week.seasonal_period_, week.context_span_) == (168.0, 337.0)


def test_monthly_and_daily_auto_spans_are_unchanged():
    monthly = pd.Series(np.arange(60.0), pd.period_range("2000-01", periods=60, freq="M"))
    daily = pd.Series(np.arange(60.0), pd.date_range("2000", periods=60, freq="D"))
    for y, period in ((monthly, 12.0), (daily, 7.0)):
        forecaster = LevyForecaster(**FAST_SEASONAL).fit(y)
        assert (forecaster.seasonal_period_, forecaster.context_span_) == (period, 36.0)


@pytest.mark.parametrize(
    ("params", "named"),
    [
        # A week of half-hours: two periods (673 steps) exceed the default max_tokens.
        (
            dict(seasonal_period="7D"),
            ["seasonal_period='7D'", "context_length=673", "max_tokens=673"],
        ),
        # A context given too short for a given season.
        (
            dict(seasonal_period="1D", context_length="12h"),
            ["seasonal_period='1D'", "context_length='12h'", "context_length=97"],
        ),
        # Five-minute data: two days are 577 steps, beyond max_tokens=256.
        (dict(), ["seasonal_period='auto'", "1 days", "context_length=577", "max_tokens=577"]),
    ],
)
def test_a_season_the_windows_cannot_see_is_named_with_what_to_set(params, named):
    days = 30 if "seasonal_period" in params else 3
    y = _half_hourly(days)
    if not params:
        y.index = pd.date_range("2024-01-01", periods=len(y), freq="5min")
    with pytest.warns(UserWarning, match="no season is removed") as record:
        forecaster = LevyForecaster(**params, **FAST_SEASONAL).fit(y)
    message = next(str(w.message) for w in record if "no season is removed" in str(w.message))
    for text in named:
        assert text in message
    if not params:  # the "auto" season out of reach is none: windows carry no season
        assert forecaster.seasonal_period_ is None


def test_a_season_longer_than_the_data_is_named_with_the_data_span():
    y = _half_hourly(3)  # three days of half-hours
    with pytest.warns(UserWarning, match="longest series of y spans") as record:
        LevyForecaster(seasonal_period="7D", **FAST_SEASONAL).fit(y)
    message = next(str(w.message) for w in record if "longest series" in str(w.message))
    assert "seasonal_period='7D'" in message and "7 days" in message
    assert "2 days 23:30:00" in message  # the data's span


def test_several_seasons_at_once_the_longest_removable_is_removed():
    y = _half_hourly(20)
    forecaster = LevyForecaster(seasonal_period=["7D", "1D"], **FAST_SEASONAL).fit(y)
    # A week's two periods (673 half-hours) exceed max_tokens=256: the day is removed,
    # and both are the forecaster's seasons, longest first.
    assert forecaster.seasonal_period_ == 48.0
    assert forecaster.spec_.axis.seasons == (336.0, 48.0)
    assert forecaster.context_span_ == 97.0  # two days and a step, as with "1D" alone
    spans = LevyForecaster(seasonal_period=[pd.Timedelta("1D"), 336], **FAST_SEASONAL).fit(y)
    assert spans.spec_.axis.seasons == (336.0, 48.0)


def test_auto_gives_sub_daily_data_a_day_and_a_week_the_data_spans_twice():
    long = LevyForecaster(**FAST_SEASONAL).fit(_half_hourly(15))
    short = LevyForecaster(**FAST_SEASONAL).fit(_half_hourly(6))  # not two weeks
    assert long.spec_.axis.seasons == (336.0, 48.0)
    assert short.spec_.axis.seasons == (48.0,)
    assert long.seasonal_period_ == short.seasonal_period_ == 48.0


def test_a_listed_season_longer_than_the_data_is_named():
    y = _half_hourly(5)
    with pytest.warns(UserWarning, match="longest series of y spans") as record:
        forecaster = LevyForecaster(seasonal_period=["1D", "7D"], **FAST_SEASONAL).fit(y)
    messages = [str(w.message) for w in record if "longest series" in str(w.message)]
    assert len(messages) == 1  # the week, not the day
    assert "holds a season of 336 time units" in messages[0]
    assert forecaster.seasonal_period_ == 48.0


def test_an_empty_list_of_seasons_is_refused_with_the_fix():
    with pytest.raises(ValueError, match="seasonal_period=None"):
        LevyForecaster(seasonal_period=[], **FAST_SEASONAL).fit(_half_hourly(3))


def test_echo_tokens_are_the_forecast_span_a_cycle_back_at_their_true_times():
    t = np.arange(100.0)
    t = t[(t < 40) | (t > 42)]  # a gap where one echo would fall
    v = (1000 + t)[:, None]
    w = series_windows(
        [t],
        [v],
        [np.array([80.0])],
        context_length=5,
        horizon=3,
        echoes=[20.0, 38.0],
        normalization="last",
    )
    times = np.sort(w.tokens["times"][0][w.tokens["mask"][0]])
    # The look-back (75, 80]; the span (80, 83] shifted back by 20 and by 38, a unit wider
    # on each side: (59, 64] and (41, 46], less the gap (40, 42] and the look-back.
    expected = np.array([43, 44, 45, 46, 60, 61, 62, 63, 64, 76, 77, 78, 79, 80]) - 80.0
    np.testing.assert_array_equal(times, expected)
    # Each token keeps its own value, measured from the last one (normalization="last").
    values = w.tokens["values"][0][w.tokens["mask"][0]] * w.query_scale[0, 0]
    order = np.argsort(w.tokens["times"][0][w.tokens["mask"][0]])
    np.testing.assert_allclose(values[order], expected, atol=1e-4)


def test_echo_tokens_take_at_most_half_of_max_tokens_the_nearest_first():
    t = np.arange(200.0)
    v = t[:, None]
    w = series_windows(
        [t],
        [v],
        [np.array([150.0])],
        context_length=40,
        horizon=3,
        echoes=[50.0, 100.0],
        max_tokens=12,
    )
    times = np.sort(w.tokens["times"][0][w.tokens["mask"][0]]) + 150.0
    # The nearer echo (99, 104] has 5 cells, within half of 12; the farther one would
    # exceed it. The look-back keeps its latest 12 - 5.
    np.testing.assert_array_equal(
        times, [100, 101, 102, 103, 104, 144, 145, 146, 147, 148, 149, 150]
    )


def test_calendar_phases_are_the_time_of_day_and_week_of_each_window_origin():
    y = _half_hourly(8)
    forecaster = LevyForecaster(**FAST_SEASONAL).fit(y)
    assert forecaster.net_.module_.calendar_periods == (48.0, 336.0)
    plan = forecaster.spec_.plan()
    t = forecaster.spec_.axis.times(y.index)
    windows = plan.windows([t], [y.to_numpy()[:, None]], "train", seed=0)
    stamps = y.index[np.searchsorted(t, windows.origins)]
    day = (stamps.hour * 60 + stamps.minute) / 1440.0
    week = (stamps.dayofweek + day) / 7.0
    np.testing.assert_allclose(windows.tokens["calendar"][:, 0], day, atol=1e-6)
    np.testing.assert_allclose(windows.tokens["calendar"][:, 1], week, atol=1e-6)


def _office_hours() -> pd.Series:
    """Fifteen days of half-hourly data whose level switches at 9:00 and 17:00, under noise."""
    index = pd.date_range("2024-01-01", periods=48 * 15, freq="30min")
    hours = index.hour + index.minute / 60
    noise = 0.1 * np.random.default_rng(0).normal(size=index.size)
    return pd.Series(20.0 + 5.0 * ((hours >= 9) & (hours < 17)) + noise, index)


def test_calendar_encoding_of_half_hourly_data_resolves_a_day_and_survives_a_round_trip():
    # Every harmonic a day of 48 half-hours can hold (24), of the day and of the week: the
    # first harmonic alone gives a smooth day and cannot tell a weekend from a weekday. A
    # level that switches at 9:00 and 17:00 needs them all, which two weeks confirm.
    forecaster = LevyForecaster(**FAST_SEASONAL).fit(_office_hours())
    module = forecaster.net_.module_
    assert module.calendar_harmonics == 24
    assert module.calendar_encoding.in_features == 2 * 24 * 2
    buffer = io.BytesIO()
    save(forecaster, buffer)
    buffer.seek(0)
    loaded = load(buffer)
    fh = np.arange(1, 49)
    np.testing.assert_array_equal(loaded.predict(fh).to_numpy(), forecaster.predict(fh).to_numpy())


def test_a_smooth_daily_cycle_gets_one_harmonic_of_the_calendar():
    # One sine a day under noise: harmonics beyond the first describe noise, which the
    # held-out days do not confirm (24 fixed harmonics cost CRPS on weak daily cycles).
    index = pd.date_range("2024-01-01", periods=48 * 15, freq="30min")
    hours = index.hour + index.minute / 60
    noise = np.random.default_rng(0).normal(size=index.size)
    y = pd.Series(20.0 + np.sin(2 * np.pi * hours / 24) + noise, index)
    forecaster = LevyForecaster(**FAST_SEASONAL).fit(y)
    assert forecaster.net_.module_.calendar_periods == (48.0, 336.0)
    assert forecaster.net_.module_.calendar_harmonics == 1
    assert forecaster.net_.module_.calendar_encoding.in_features == 2 * 2


def test_a_daily_pattern_that_does_not_recur_gets_no_calendar():
    # A morning peak one day, a morning dip the next: whatever profile the even days show,
    # the odd days show its opposite, so no harmonic predicts a held-out day.
    index = pd.date_range("2024-01-01", periods=48 * 15, freq="30min")
    hours = index.hour + index.minute / 60
    sign = np.where(index.dayofyear % 2 == 0, 1.0, -1.0)
    noise = 0.1 * np.random.default_rng(0).normal(size=index.size)
    y = pd.Series(20.0 + sign * np.exp(-(((hours - 9) / 2) ** 2)) + noise, index)
    forecaster = LevyForecaster(**FAST_SEASONAL).fit(y)
    assert forecaster.spec_.axis.seasons == (336.0, 48.0)  # seasons, but no calendar
    assert forecaster.net_.module_.calendar_periods == ()
    assert forecaster.net_.module_.calendar_encoding is None


def _largest_batch(forecaster: LevyForecaster) -> int:
    """The most windows one training step of the forecaster's first epoch took."""
    return max(forecaster.net_.history[0, "batches", :, "train_batch_size"])


def test_the_auto_batch_is_16_windows_where_the_calendar_is_learned_and_32_elsewhere():
    # One long sub-daily series gives windows_per_series windows however long it is: at 32
    # a step, taylor's 512 made 160 steps in ten epochs, and 16 a step forecast better on
    # the high-frequency ablation splits at the same CPU. A series whose time encoding
    # carries no calendar trains as before; a batch given is kept.
    y = _office_hours()
    calendar = LevyForecaster(**FAST_SEASONAL).fit(y)
    assert calendar.net_.module_.calendar_periods == (48.0, 336.0)
    assert _largest_batch(calendar) == 16
    assert _largest_batch(LevyForecaster(**FAST_SEASONAL, batch_size=64).fit(y)) == 64
    monthly = pd.Series(
        np.sin(np.arange(120.0)), pd.period_range("2000-01", periods=120, freq="M")
    )
    assert _largest_batch(LevyForecaster(**FAST_SEASONAL).fit(monthly)) == 32
    assert LevyForecaster().get_params()["batch_size"] == "auto"


def _business_hours(weeks: int) -> pd.Series:
    """Five-minute call volumes 7:00-21:00 on weekdays only: gaps every night and weekend
    (fpp3's bank_calls), a morning peak each day."""
    days = pd.bdate_range("2024-01-01", periods=5 * weeks)
    index = pd.DatetimeIndex(
        [d + pd.Timedelta(minutes=m) for d in days for m in range(7 * 60, 21 * 60, 5)]
    )
    hours = index.hour + index.minute / 60
    noise = np.random.default_rng(0).normal(size=index.size)
    return pd.Series(50.0 + 40.0 * np.exp(-(((hours - 10) / 2) ** 2)) + noise, index)


def test_auto_gives_an_irregular_five_minute_index_with_night_gaps_a_day_and_a_week():
    y = _business_hours(3)
    assert seasonal_periods(y.index) == (pd.Timedelta(days=7), pd.Timedelta(days=1))
    with warnings.catch_warnings():
        # max_tokens=256 cannot hold two days of five-minute steps: no season is removed.
        warnings.filterwarnings("ignore", "seasonal_period='auto'", UserWarning)
        forecaster = LevyForecaster(**FAST_SEASONAL).fit(y)
    # A day and a week of five-minute units, their earlier cycles and the calendar.
    assert forecaster.spec_.axis.seasons == (2016.0, 288.0)
    assert forecaster.spec_.echoes() == (288.0, 2016.0)
    assert forecaster.net_.module_.calendar_periods == (288.0, 2016.0)
    # Forecasts at the next morning's true times, across the night.
    fh = pd.DatetimeIndex(["2024-01-22 07:00", "2024-01-22 10:00"])
    assert np.isfinite(forecaster.predict(fh=fh).to_numpy()).all()


@pytest.mark.parametrize(
    "index",
    [
        # a typical step that does not divide a day
        pd.DatetimeIndex(
            ["2024-01-01 00:00", "2024-01-01 00:07", "2024-01-01 00:14", "2024-01-01 00:30"]
        ),
        # daily readings with a day missing
        pd.DatetimeIndex(["2020-01-01", "2020-01-02", "2020-01-04"]),
    ],
)
def test_other_irregular_indexes_imply_no_season(index):
    assert seasonal_periods(index) == ()


def test_daily_and_monthly_series_get_no_calendar_and_no_echoes():
    monthly = pd.Series(np.arange(60.0), pd.period_range("2000-01", periods=60, freq="M"))
    daily = pd.Series(np.arange(60.0), pd.date_range("2000", periods=60, freq="D"))
    for y in (monthly, daily):
        forecaster = LevyForecaster(**FAST_SEASONAL).fit(y)
        assert forecaster.spec_.axis.calendar() == ()
        assert forecaster.spec_.echoes() == ()
        assert forecaster.net_.module_.calendar_encoding is None


def test_max_tokens_too_few_for_an_earlier_cycle_is_named_with_what_to_set():
    y = _half_hourly(15)
    with pytest.warns(UserWarning, match="windows see no earlier cycle") as record:
        LevyForecaster(max_tokens=60, max_horizon=48, **FAST_SEASONAL).fit(y)
    message = next(str(w.message) for w in record if "earlier cycle" in str(w.message))
    assert "max_tokens=60" in message and "max_tokens=100" in message
