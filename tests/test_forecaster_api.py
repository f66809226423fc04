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
