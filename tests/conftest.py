"""Shared fast hyperparameters of the test suite: a fit with these takes well under a second.

Test modules import them (``from conftest import TINY_REG``) and override single entries
where a test needs to.
"""

#: A regressor that trains a few steps: for tests of the API, not of what it learns.
TINY_REG = {"d_model": 8, "n_heads": 2, "max_epochs": 3, "random_state": 0}
#: A regressor that learns simple tables well enough to be checked against references.
FAST_REG = {"d_model": 16, "n_heads": 4, "max_epochs": 10, "random_state": 0}
#: A forecaster that trains a few steps on short series: windowed heads, no encoder block.
TINY_FC = {
    "d_model": 8,
    "n_heads": 2,
    "n_windowed_heads": 1,
    "n_layers": 0,
    "max_epochs": 3,
    "batch_size": 64,
    "context_length": 8,
    "max_horizon": 4,
    "windows_per_series": 30,
    "random_state": 0,
}
