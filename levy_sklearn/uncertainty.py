"""The public names of :mod:`levy_sklearn.calibration`, the forecaster's predictive
distribution, under this module's name as well.

Examples
--------
>>> from levy_sklearn import calibration, uncertainty
>>> uncertainty.LeadCalibration is calibration.LeadCalibration
True
"""

from .calibration import (
    LeadCalibration,
    channel_counts,
    horizon_floor,
    population_spread,
    samples_ahead,
    to_data_units,
)

__all__ = [
    "LeadCalibration",
    "channel_counts",
    "horizon_floor",
    "population_spread",
    "samples_ahead",
    "to_data_units",
]
