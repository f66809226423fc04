"""ObservedTimesSplitter: sktime's evaluate on an irregularly sampled subject, zero-shot."""

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import TINY_FC
from sktime.forecasting.model_evaluation import evaluate
from sktime.performance_metrics.forecasting.probabilistic import CRPS, PinballLoss
from sktime.split import ExpandingWindowSplitter
from sktime.utils.estimator_checks import check_estimator

from levy_sklearn.datasets import make_irregular_vitals
from levy_sklearn.forecaster import LevyForecaster
from levy_sklearn.model_selection import ObservedTimesSplitter

torch.set_num_threads(1)


def irregular_subject_and_pretrained():
    """A forecaster pretrained on seven irregularly sampled patients and an eighth one."""
    panel = make_irregular_vitals(8, n_channels=1, random_state=0)
    forecaster = LevyForecaster(**TINY_FC).pretrain(panel.loc[:6])
    return forecaster, panel.loc[7]


def test_zero_shot_evaluate_on_an_irregular_subject_forecasts_its_observed_times():
    forecaster, subject = irregular_subject_and_pretrained()
    steps = ExpandingWindowSplitter(fh=[1, 2, 3], initial_window=20, step_length=6)
    # sktime passes the splitter's steps as fh: the error names the splitter that works.
    with pytest.raises(ValueError, match="wrap its splitter in .*ObservedTimesSplitter"):
        evaluate(forecaster, cv=steps, y=subject, error_score="raise")
    # sktime has no absolute Timedelta: the error says how to index the subject instead.
    cv = ObservedTimesSplitter(steps)
    with pytest.raises(ValueError, match=r"y.index = pd.Timestamp\(0\) \+ y.index"):
        evaluate(forecaster, cv=cv, y=subject, error_score="raise")
    dated = subject.set_axis(pd.Timestamp(0) + subject.index)
    # Spans: sktime's splitter looks them up among the observations (a KeyError inside it).
    spans = ExpandingWindowSplitter(
        fh=pd.to_timedelta([1, 2], unit="h"),
        initial_window=pd.Timedelta("20h"),
        step_length=pd.Timedelta("10h"),
    )
    with pytest.raises(ValueError, match="needs a splitter with integer steps"):
        evaluate(forecaster, cv=ObservedTimesSplitter(spans), y=dated, error_score="raise")
    results = evaluate(
        forecaster,
        cv=cv,
        y=dated,
        scoring=[PinballLoss(), CRPS()],
        error_score="raise",
        return_data=True,
    )
    assert len(results) == 3
    for fold, end in enumerate([20, 26, 32]):
        times = dated.index[end : end + 3]  # the next three observations after the cutoff
        assert results["cutoff"][fold] == dated.index[end - 1]
        pd.testing.assert_index_equal(results["y_test"][fold].index, times)
        # A zero-shot fit of the pretrained network on the history, asked for those times;
        # the same subject indexed by time since its start, asked the same spans, agrees.
        zero_shot = forecaster.clone().fit(dated.iloc[:end])
        quantiles = zero_shot.predict_quantiles(fh=times, alpha=[0.05, 0.95])
        pd.testing.assert_frame_equal(results["y_pred_quantiles"][fold], quantiles)
        spans = subject.index[end : end + 3] - subject.index[end - 1]
        as_spans = forecaster.clone().fit(subject.iloc[:end]).predict(fh=spans)
        np.testing.assert_array_equal(as_spans.to_numpy(), zero_shot.predict(times).to_numpy())
    assert np.isfinite(results[["test_PinballLoss", "test_CRPS"]].to_numpy()).all()


def test_observed_times_splitter_passes_sktime_splitter_checks():
    results = check_estimator(ObservedTimesSplitter, raise_exceptions=False)
    assert {k: v for k, v in results.items() if v != "PASSED"} == {}
