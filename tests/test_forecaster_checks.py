"""sktime's own conformance suite for LevyForecaster (every test, exceptions raised)."""

import pytest
from sktime.utils.estimator_checks import check_estimator

from levy_sklearn.forecaster import LevyForecaster


@pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning")
def test_sktime_check_estimator():
    results = check_estimator(LevyForecaster, raise_exceptions=True, verbose=False)
    failed = {name: result for name, result in results.items() if result != "PASSED"}
    assert not failed
    print(f"sktime check_estimator: {len(results)} checks passed")
    assert len(results) > 800  # the whole forecaster suite ran, not a subset
