"""LevyForecaster: output types, time zones, the calibrated distribution and the uncertainty
breakdown (issue 14)."""

import numpy as np
import pandas as pd
import pytest
import torch
from sktime.forecasting.naive import NaiveForecaster

from levy_sklearn.forecaster import LevyForecaster

torch.set_num_threads(1)

TINY = {**LevyForecaster.get_test_params()[0], "random_state": 0}


def hourly(n=48, tz=None):
    index = pd.date_range("2021-01-01", periods=n, freq="h", tz=tz)
    return pd.Series(np.sin(np.arange(n) / 3.0) + 10.0, index=index, name="y")


@pytest.mark.filterwarnings("ignore:The default of config:FutureWarning")  # sktime's, on Naive
def test_update_predict_single_keeps_a_series_a_series_like_naive():
    y = hourly(60)
    for forecaster in (NaiveForecaster(), LevyForecaster(**TINY)):
        forecaster.fit(y[:48])
        out = forecaster.update_predict_single(y[48:50], fh=[1, 2])
        assert isinstance(out, pd.Series), type(forecaster).__name__
        assert isinstance(forecaster.predict(fh=[1]), pd.Series)
        assert isinstance(forecaster.predict_interval(fh=[1]), pd.DataFrame)
    assert forecaster.cutoff[0] == y.index[49]


def test_update_predict_single_equals_update_then_predict():
    y = hourly(60)
    a = LevyForecaster(**TINY).fit(y[:48])
    b = LevyForecaster(**TINY).fit(y[:48])
    pd.testing.assert_series_equal(
        a.update_predict_single(y[48:52], fh=[1, 2, 3]), b.update(y[48:52]).predict([1, 2, 3])
    )


def test_tz_naive_fh_on_tz_aware_series_asks_to_localise():
    y = hourly(48, tz="US/Eastern")  # ends 2021-01-02 23:00-05:00
    forecaster = LevyForecaster(**TINY).fit(y)
    with pytest.raises(ValueError, match=r"tz-naive .* US/Eastern.*tz_localize\('US/Eastern'\)"):
        forecaster.predict(pd.DatetimeIndex(["2021-01-03 01:00"]))
    # The same instant in any zone is one forecast, labelled in the series' zone.
    eastern = forecaster.predict(pd.DatetimeIndex(["2021-01-03 01:00"], tz="US/Eastern"))
    utc = forecaster.predict(pd.DatetimeIndex(["2021-01-03 06:00"], tz="UTC"))
    pd.testing.assert_series_equal(eastern, utc)
    assert str(eastern.index.tz) == "US/Eastern"
    assert eastern.index[0] == pd.Timestamp("2021-01-03 01:00", tz="US/Eastern")
    # Relative steps need no zone.
    steps = forecaster.predict(fh=[2])
    np.testing.assert_array_equal(steps.to_numpy(), eastern.to_numpy())


def test_tz_aware_fh_on_naive_series_is_refused():
    forecaster = LevyForecaster(**TINY).fit(hourly(48))
    with pytest.raises(ValueError, match=r"time zone UTC but y is tz-naive"):
        forecaster.predict(pd.DatetimeIndex(["2021-01-03 01:00"], tz="UTC"))
