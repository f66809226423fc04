"""The forecaster's predictive distribution, in one place.

:class:`~levy_sklearn.forecaster.LevyForecaster` turns the network's moments into the
distribution it reports in four steps, each written once here or named here:

1. **Network moments** (:class:`~levy_sklearn.network.LevyNet`): mean ``m`` and the
   closed-form Lévy variance ``v`` of every query, in the window's normalised units, the
   mean weighed against the window's level by the calibration's weight ``w`` (1 where the
   network forecast held-out data better than the level) and, after ``pretrain``, pulled
   towards the population's level ``ℓ`` by its weight ``u``: ``w·m + u·ℓ`` (see step 4).
2. **Data units**: ``mean = loc + s·(w·m + u·ℓ)``, ``var = s²·v`` with ``s`` the window's scale
   times the series' scale (:func:`to_data_units`).
3. **Beyond the training horizon**: ``var`` is floored by the variance at ``max_horizon``
   times ``1 + ρ·(lead / max_horizon − 1)``, ``ρ`` in ``[0, 1]`` the share of the held-out
   error variance that grew linearly with lead within the horizon (1: a random walk's
   growth; 0: a level's, none; :func:`horizon_floor`).
4. **Calibration** (:class:`LeadCalibration`, fitted by :func:`fit_forecasts`): on held-out
   forecasts, the weights ``w`` and ``u`` with the least absolute error, each held-out origin
   weighing 1, and the weighted split-conformal quantiles of the σ-normalised error
   ``|y − mean| / σ``, per channel (and, with enough held-out forecasts, per group of
   samples ahead, :func:`samples_ahead`, and of observations the window saw,
   :func:`channel_counts`) and lead bin, for every coverage level. Intervals and quantiles
   read them level by level; ``predict_var`` and ``predict_proba`` use the calibrated second
   moment (the Normal with the calibrated distribution's variance).

After ``pretrain``, a channel a series has never shown skips steps 1–4: the population's
mean with its scale as σ, calibrated by the pretraining panel's spread about that mean
(:func:`population_spread`, :func:`with_unseen`); a series calibrated on its own never
narrows the pretrained intervals (:func:`at_least`).

The lead of a forecast is the time from its channel's last observation to the forecast time,
in time units: a forecast across a gap, or of a channel silent for longer than the others, has
a longer lead, and its interval is calibrated like other forecasts that far ahead.

The modules: ``table`` (the :class:`LeadCalibration` value and how a forecast reads it),
``schema`` (its fields, version and the migration of older files), ``fit`` (fitting it from
held-out forecasts), ``combine`` (:func:`at_least`, :func:`with_unseen`), ``features`` (a
forecast's lead, samples ahead and history from its window's tokens), ``predictive`` (steps
1–3 over prediction windows) and ``held_out`` (forecasts of held-out windows, cross-fitted
over series after ``pretrain``).

Examples
--------
>>> import numpy as np
>>> from levy_sklearn.calibration import fit_scores
>>> rng = np.random.default_rng(0)
>>> leads = rng.uniform(0, 12, 3000)
>>> scores = np.abs(rng.standard_t(4, 3000)) * (1 + leads / 12)  # heavier, wider further out
>>> cal = fit_scores(scores, np.zeros(3000, int), leads, n_channels=1)
>>> near, far = cal.quantile(0.9, np.array([0, 0]), np.array([1.0, 11.0]))
>>> bool(far > near > 1.645)  # wider than the Normal's, and wider further out
True
"""

from .combine import at_least, with_unseen
from .features import channel_counts, samples_ahead
from .fit import fit_forecasts, fit_scores, population_spread
from .predictive import horizon_floor, to_data_units
from .table import LeadCalibration

__all__ = [
    "LeadCalibration",
    "at_least",
    "channel_counts",
    "fit_forecasts",
    "fit_scores",
    "horizon_floor",
    "population_spread",
    "samples_ahead",
    "to_data_units",
    "with_unseen",
]
