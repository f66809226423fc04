"""LevyAttentionRegressor: fit options and messages of issue 14 (float32 targets, the
reported learning rate, small calibration sets, sample weights, warm starts)."""

import warnings

import numpy as np
import pytest
import torch

from levy_sklearn.regressor import LevyAttentionRegressor

torch.set_num_threads(1)

TINY = {"d_model": 8, "n_heads": 2, "max_epochs": 3, "random_state": 0}


def table(n=80, p=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    return X, X[:, 0] - 0.5 * X[:, 1] + 0.1 * rng.normal(size=n)


def test_float32_targets_fit_without_overflow_warning_and_like_float64():
    X, y = table()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        reg32 = LevyAttentionRegressor(**TINY).fit(X, y.astype(np.float32))
    reg64 = LevyAttentionRegressor(**TINY).fit(X, y.astype(np.float32).astype(np.float64))
    np.testing.assert_array_equal(reg32.predict(X), reg64.predict(X))


def test_verbose_reports_the_set_learning_rate_not_the_log_parameters_rate(capsys):
    X, y = table()
    reg = LevyAttentionRegressor(**{**TINY, "lr": 5e-3, "verbose": 1}).fit(X, y)
    recorded = reg.net_.history[:, "event_lr"]
    # The cosine schedule starts at lr: epoch 1 reports the set rate itself.
    assert recorded[0] == pytest.approx(5e-3)
    assert max(recorded) == pytest.approx(5e-3)
    assert "0.0050" in capsys.readouterr().out
    # The log-scale scalars still train at their own (10x) rate: only the report changed.
    rates = sorted(group["initial_lr"] for group in reg.net_.optimizer_.param_groups)
    assert rates == pytest.approx([5e-3, 5e-2])


def test_conformalize_rejects_too_few_rows_at_once():
    X, y = table(120)
    reg = LevyAttentionRegressor(**TINY).fit(X[:80], y[:80])
    with pytest.raises(ValueError, match=r"5 rows, too few .* at least 10 calibration rows"):
        reg.conformalize(X[80:85], y[80:85])
    assert not hasattr(reg, "conformal_")
    reg.conformalize(X[80:100], y[80:100])  # 20 rows: 0.9 and 0.95 are reachable
    assert reg.predict_interval(X[:3], coverage=0.95, method="conformal").shape == (3, 2)
    with pytest.raises(ValueError, match=r"coverage=0.99 needs at least 100 .* has 20"):
        reg.predict_interval(X[:3], coverage=0.99, method="conformal")
