"""levy-sklearn: Lévy attention with single-pass predictive uncertainty.

The torch core (:func:`psi`, :class:`LevyAttention`, :class:`LevyNet`) is imported eagerly;
the front-ends (:class:`LevyAttentionRegressor`, :class:`LevyForecaster`) load on first use,
so ``import levy_sklearn`` does not pay for importing sktime and MAPIE.
"""

from importlib import import_module
from typing import Any

from .attention import LevyAttention, psi
from .network import LevyNet

__version__ = "0.1.0.dev0"

_LAZY = {
    "LevyAttentionRegressor": "levy_sklearn.regressor",
    "LevyForecaster": "levy_sklearn.forecaster",
}

__all__ = [
    "LevyAttention",
    "LevyAttentionRegressor",
    "LevyForecaster",
    "LevyNet",
    "psi",
    "__version__",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'levy_sklearn' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
