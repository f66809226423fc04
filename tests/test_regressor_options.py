"""LevyAttentionRegressor: fit options and messages of issue 14 (float32 targets, the
reported learning rate, small calibration sets, sample weights, warm starts)."""

import warnings

import numpy as np
import pytest
import torch

from levy_sklearn.regressor import LevyAttentionRegressor

torch.set_num_threads(1)

TINY = {"d_model": 8, "n_heads": 2, "max_epochs": 3, "random_state": 0}


def test_float32_targets_fit_without_overflow_warning_and_like_float64():
    X, y = table()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        reg32 = LevyAttentionRegressor(**TINY).fit(X, y.astype(np.float32))
    reg64 = LevyAttentionRegressor(**TINY).fit(X, y.astype(np.float32).astype(np.float64))
    np.testing.assert_array_equal(reg32.predict(X), reg64.predict(X))
