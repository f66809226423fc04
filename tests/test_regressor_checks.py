"""scikit-learn's estimator checks on LevyAttentionRegressor, with no expected failure."""

import torch
from conftest import FAST_REG
from sklearn.utils.estimator_checks import check_estimator, parametrize_with_checks

from levy_sklearn.regressor import LevyAttentionRegressor

# Tiny models spend their time in per-op overhead, not arithmetic: one intra-op thread per
# pytest(-xdist) worker is faster and avoids oversubscribing the cores.
torch.set_num_threads(1)

# Small and short, yet it must really learn: check_regressors_train asks for R² > 0.5.


@parametrize_with_checks([LevyAttentionRegressor(**FAST_REG)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_tags_claim_nan_and_multi_output_but_no_excuses():
    tags = LevyAttentionRegressor().__sklearn_tags__()
    assert tags.input_tags.allow_nan
    assert tags.target_tags.multi_output
    assert not tags.regressor_tags.poor_score
    assert not tags.non_deterministic


def test_check_estimator_with_defaults():
    # The defaults (random_state=None included) pass every check, run in one go.
    results = check_estimator(LevyAttentionRegressor(), on_fail=None)
    failed = [r["check_name"] for r in results if r["status"] == "failed"]
    assert not failed
    assert not [r["check_name"] for r in results if r["status"] == "xfail"]
    assert sum(r["status"] == "passed" for r in results) >= 50
