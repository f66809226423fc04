"""levy-sklearn: Lévy attention with single-pass predictive uncertainty."""

from .attention import LevyAttention, psi
from .network import LevyNet

__version__ = "0.1.0.dev0"

__all__ = ["LevyAttention", "LevyNet", "psi", "__version__"]
