"""sktime's own conformance suite for LevyForecaster (every test, exceptions raised).

The suite's tests are dealt into three parts, each one pytest test, so that pytest-xdist's
workers share them (one test of the whole suite held one worker for over a minute while the
other ran out of work). Together the parts run every test of the suite.
"""

import pytest
from sktime.tests.test_class_register import get_test_classes_for_obj
from sktime.utils.estimator_checks import check_estimator

from levy_sklearn.forecaster import LevyForecaster

N_PARTS = 3
SUITE = sorted(
    {
        name
        for test_class in get_test_classes_for_obj(LevyForecaster)
        for name in dir(test_class)
        if name.startswith("test_")
    }
)


def test_the_suite_is_the_whole_forecaster_suite():
    assert len(SUITE) > 60  # every forecaster test of sktime, not a subset


@pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning")
@pytest.mark.parametrize("part", range(N_PARTS))
def test_sktime_check_estimator(part):
    names = SUITE[part::N_PARTS]
    results = check_estimator(
        LevyForecaster, raise_exceptions=True, verbose=False, tests_to_run=names
    )
    failed = {name: result for name, result in results.items() if result != "PASSED"}
    assert not failed
    ran = {key.split("[")[0] for key in results}
    assert ran == set(names), set(names) - ran  # each test ran, with at least one fixture
    print(f"sktime check_estimator part {part}: {len(results)} checks passed")
