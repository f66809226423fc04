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


# --------------------------------------------------------------------------- plans
def test_plan_scores_by_hand():
    # Normal quantiles around 0 (sd 1) under two plans; the second plan's forecast sits 2
    # higher, its outcomes 1 higher than the first's.
    z = norm.ppf(cov.LEVELS)
    q = {"a": np.tile(z, (4, 1)), "b": np.tile(z + 2.0, (4, 1))}
    y = {"a": np.array([0.0, 0.5, 1.5, 3.0]), "b": np.array([1.0, 1.5, 2.5, 4.0])}
    lead = np.array(["30 min", "60 min", "30 min", "60 min"])
    table = cov.plan_scores(y, q, lead, base="a").set_index(["plan", "lead"])
    assert table.index.tolist() == [
        ("a", "all"),
        ("a", "30 min"),
        ("a", "60 min"),
        ("b", "all"),
        ("b", "30 min"),
        ("b", "60 min"),
    ]
    a, b = table.loc[("a", "all")], table.loc[("b", "all")]
    # |y| = 0, 0.5, 1.5, 3 against 0.674, 1.282, 1.645, 1.960: inside 2, 2, 3, 3 of 4.
    assert [a.cov50, a.cov80, a.cov90, a.cov95] == [0.5, 0.5, 0.75, 0.75]
    # y - 2 = -1, -0.5, 0.5, 2: inside 2, 3, 3, 3 of 4.
    assert [b.cov50, b.cov80, b.cov90, b.cov95] == [0.5, 0.75, 0.75, 0.75]
    assert a.width50 == pytest.approx(2 * 0.6744898, rel=1e-6)
    assert a.width90 == pytest.approx(2 * 1.6448536, rel=1e-6)
    assert a["median shift"] == 0.0 and b["median shift"] == pytest.approx(2.0)
    assert b["outcome shift"] == pytest.approx(1.0)
    assert table.loc[("b", "30 min"), "n"] == 2
    assert table.loc[("b", "30 min"), "cov50"] == 0.5  # y - 2 = -1, 0.5
    assert (table["goal met"] == "no").all()


def test_coverage_goal_holds_within_five_points_of_every_level():
    on_target = {"cov50": 0.5, "cov80": 0.8, "cov90": 0.9, "cov95": 0.95}
    assert cov.meets_coverage_goal(on_target)
    # On the bounds, as shares of 20 tasks: 11/20, 17/20 and 18/20 meet the goal.
    assert cov.meets_coverage_goal({**on_target, "cov50": 11 / 20, "cov90": 17 / 20})
    assert cov.meets_coverage_goal({**on_target, "cov95": 18 / 20})
    assert not cov.meets_coverage_goal({**on_target, "cov90": 0.84})
    assert not cov.meets_coverage_goal({**on_target, "cov50": 0.56})
    assert not cov.meets_coverage_goal({**on_target, "cov80": 0.86})
    assert cov.meets_coverage_goal({**on_target, "cov95": 1.0})  # over, but within 0.05


def test_plan_problem_gives_each_plan_on_the_forecast_times():
    # A made-up alternative plan for every origin: the covariates as they happened, doubled,
    # and the glucose 10 higher; the plan's frames must continue y's index from the origin.
    p = cov.load_problem("simulated", quick=True)
    origins = cov._meal_origins(p.test)
    outcomes = {}
    for i, s in enumerate(p.test):
        for o in origins[i]:
            rows = s.frame.iloc[o + 1 : o + 61]
            outcomes["double", s.key, int(s.t[o])] = rows.assign(
                glucose=rows["glucose"] + 10, CHO=2 * rows["CHO"], insulin=2 * rows["insulin"]
            )
    plan_p, plans, targets = cov.plan_problem(p, outcomes)
    assert list(plans) == [cov.HAPPENED, "double"]
    assert plan_p.levy["max_horizon"] == "120min"
    assert set(plan_p.tasks.lead) == set(cov.PLAN_STEPS)
    np.testing.assert_array_equal(targets["double"], targets[cov.HAPPENED] + 10)
    assert set(plan_p.train_tasks.lead) == set(cov.PLAN_STEPS)
    for i, o, t in plan_p.tasks[["series", "origin", "target"]].to_numpy()[::17]:
        s = p.test[i]
        happened = plans[cov.HAPPENED](s, o, t)
        assert happened.index.equals(s.frame.index[o + 1 : t + 1])
        pd.testing.assert_frame_equal(plans["double"](s, o, t), 2 * happened)
    # HGB's features under the plan as it happened are the set's own; under "double" the
    # covariates' sums up to the target (known ahead) double, the past ones do not.
    X_te, _, last = cov.design(plan_p.test, plan_p.tasks, plan_p, True)
    X_happened, last_happened = cov.plan_design(plan_p, plans[cov.HAPPENED])
    np.testing.assert_array_equal(X_happened, X_te)
    np.testing.assert_array_equal(last_happened, last)
    X_double, _ = cov.plan_design(plan_p, plans["double"])
    ahead = 2 * plan_p.n_lags + 2 + np.array([4, 5, 10, 11])  # per column: last, 3 sums, 2
    np.testing.assert_allclose(X_double[:, ahead], 2 * X_te[:, ahead])
    past = np.setdiff1d(np.arange(X_te.shape[1]), ahead)
    np.testing.assert_array_equal(X_double[:, past], X_te[:, past])


def test_plans_file_changes_only_each_meal_and_its_bolus():
    # benchmarks/data/simglucose_plans.csv.gz against the cohort file it was re-simulated
    # from: every meal origin of the adolescents, 3 h from the meal's step, the same reading
    # at the meal's step (the state before the plan acts), and the documented inputs.
    from levy_sklearn.datasets import load_simulated_glucose

    happened = load_simulated_glucose("adolescent", time_as="float")
    outcomes = cov.load_plans()
    assert {plan for plan, _, _ in outcomes} == {"half meal", "no bolus"}
    p = cov.load_problem("simulated", quick=False)
    origins = cov._meal_origins(p.test)
    expected = {(s.key, int(s.t[o])) for i, s in enumerate(p.test) for o in origins[i]}
    assert {(k, o) for _, k, o in outcomes} == expected
    for (plan, patient, origin), rows in outcomes.items():
        minute = rows.index / pd.Timedelta(minutes=1)
        np.testing.assert_array_equal(minute, origin + 3 * np.arange(1, 61))
        h = happened.loc[patient]
        meal, bolus = h.loc[origin + 3], h.loc[origin + 6]
        first = rows.iloc[0]
        assert first.glucose == meal.glucose and first.insulin == meal.insulin
        if plan == "no bolus":
            assert first.CHO == meal.CHO
            assert rows.iloc[1].insulin == h.loc[origin, "insulin"] < bolus.insulin  # basal
        else:
            assert first.CHO == pytest.approx(meal.CHO / 2, rel=1e-5)
            assert rows.iloc[1].insulin == bolus.insulin
