"""The covariates benchmark's scoring and task helpers, against hand-computed references."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # the benchmarks package lives beside the library, uninstalled
    sys.path.insert(0, str(ROOT))

from benchmarks import covariates as cov  # noqa: E402


def test_a_point_forecast_scores_its_absolute_error_as_crps():
    # Every quantile at x: the exact CRPS of a point mass at x is |y - x|.
    y = np.array([3.0, -1.0, 2.0])
    x = np.array([1.0, 0.5, 2.0])
    q = np.repeat(x[:, None], len(cov.LEVELS), axis=1)
    np.testing.assert_allclose(cov.quantile_crps(y, q), np.abs(y - x))


def test_pinball_loss_by_hand():
    # y = 1, q = 0 at level 0.9: 0.9 * 1; y = 0, q = 1 at level 0.9: (1 - 0.9) * 1.
    loss = cov.pinball(np.array([1.0, 0.0]), np.array([[0.0], [1.0]]), np.array([0.9]))
    np.testing.assert_allclose(loss.ravel(), [0.9, 0.1])


def test_quantile_crps_approaches_the_normal_closed_form():
    # A 19-level average of the pinball integral: 4-5 % above the exact Gaussian CRPS.
    y = np.array([0.0, 0.7, -1.9])
    q = norm.ppf(cov.LEVELS)[None, :].repeat(3, axis=0)
    exact = y * (2 * norm.cdf(y) - 1) + 2 * norm.pdf(y) - 1 / np.sqrt(np.pi)
    ratio = cov.quantile_crps(y, q) / exact
    assert np.all((ratio > 1.0) & (ratio < 1.06))


def test_coverage_counts_targets_inside_each_central_interval():
    q = norm.ppf(cov.LEVELS)[None, :].repeat(4, axis=0)
    y = np.array([0.0, 1.0, 1.5, 3.0])  # |y| vs 0.674 (50 %), 1.282, 1.645, 1.960
    out = cov.score(y, q)
    assert out["cov50"] == 0.25
    assert out["cov80"] == 0.5
    assert out["cov90"] == 0.75
    assert out["cov95"] == 0.75
    assert out["mae"] == pytest.approx(np.mean(np.abs(y)))


def test_full_rank_columns_drop_a_collinear_and_an_incomplete_column():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(2, 30))
    c = np.r_[np.nan, rng.normal(size=29)]
    X = np.column_stack([a, b, 2 * a - b + 5, c])
    assert cov.full_rank_columns(X) == [0, 1]


def test_next_measurement_tasks_pair_consecutive_observations_within_the_lead():
    t = np.array([0.0, 1.0, 2.0, 10.0, 11.0])
    y = np.array([5.0, np.nan, 6.0, 7.0, np.nan])  # observed at rows 0, 2, 3
    s = cov.Series("a", pd.DataFrame({"y": y}), t, y, np.zeros((5, 0)))
    tasks = cov.next_measurement_tasks([s], max_lead=5.0, label="next")
    assert tasks[["origin", "target"]].to_numpy().tolist() == [[0, 2]]


@pytest.mark.parametrize("name", ["quinidine", "phenobarb"])
def test_ablation_splits_forecast_only_report_training_subjects(name):
    # The inner split never scores (nor trains on) a subject the report forecasts.
    report = cov.load_problem(name, quick=False)
    inner = cov.ablation_problem(report)
    report_train = {s.key for s in report.train}
    held, pretrain = {s.key for s in inner.test}, {s.key for s in inner.train}
    assert held | pretrain == report_train and not held & pretrain
    assert not (held | pretrain) & {s.key for s in report.test}
    assert len(pretrain) == round(0.7 * len(report_train))
    # Tasks: from each held-out measurement, the next one within the set's longest lead.
    assert set(inner.tasks.series) <= set(range(len(inner.test)))
    lead = [inner.test[i].t[b] - inner.test[i].t[a] for i, a, b in inner.tasks.iloc[:, :3].values]
    assert 0 < min(lead) and max(lead) <= cov.MAX_LEAD[name]


def test_ablation_span_of_a_regular_set_ends_before_the_report_origins():
    report = cov.load_problem("us_change", quick=False)
    inner = cov.ablation_problem(report)
    first_report_origin = int(report.tasks.origin.min())
    # 40 one-quarter-ahead origins, the last target the report's first origin itself.
    assert len(inner.tasks) == 40
    assert inner.tasks.target.max() == first_report_origin
    assert len(inner.test[0].t) == first_report_origin + 1
    # HGB trains on origins before the inner ones only.
    assert inner.train_tasks.target.max() <= inner.tasks.origin.min()
