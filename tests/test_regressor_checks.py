"""scikit-learn's estimator checks on LevyAttentionRegressor, with one expected failure."""

import torch
from sklearn.utils.estimator_checks import check_estimator, parametrize_with_checks

from levy_sklearn.regressor import LevyAttentionRegressor

# Tiny models spend their time in per-op overhead, not arithmetic: one intra-op thread per
# pytest(-xdist) worker is faster and avoids oversubscribing the cores.
torch.set_num_threads(1)

# Small and short, yet it must really learn: check_regressors_train asks for R² > 0.5.
FAST = {"d_model": 16, "n_heads": 4, "max_epochs": 10, "random_state": 0}


# The one expected failure, as for scikit-learn's own SGDRegressor and MLPRegressor: a row of
# weight k is trained on like k copies of it only in expectation. Mini-batches and the seeded
# observation-dropout draws depend on the rows given, so a weighted fit and a fit on repeated
# rows differ by a few percent, not by the 1e-7 the check asks for.
# Weight 0 (removal) and equal weights (none) are exact: tests/test_regressor_options.py.
EXPECTED_FAILURES = {
    "check_sample_weight_equivalence_on_dense_data": (
        "sample_weight is not equivalent to removing/repeating samples (mini-batch SGD)."
    ),
}


@parametrize_with_checks(
    [LevyAttentionRegressor(**FAST)], expected_failed_checks=lambda _: EXPECTED_FAILURES
)
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
    results = check_estimator(
        LevyAttentionRegressor(), on_fail=None, expected_failed_checks=EXPECTED_FAILURES
    )
    failed = [r["check_name"] for r in results if r["status"] == "failed"]
    assert not failed
    xfailed = [r["check_name"] for r in results if r["status"] == "xfail"]
    assert xfailed == list(EXPECTED_FAILURES)
    assert sum(r["status"] == "passed" for r in results) >= 50
