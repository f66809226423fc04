"""The forecaster's public outputs beyond sktime's own.

:class:`ForecastOutputs` is a mixin of :class:`~levy_sklearn.forecaster.LevyForecaster`,
listed before sktime's ``BaseForecaster`` among its bases: the uncertainty breakdown
(``predict_uncertainty``), the fitted index names (``index_names_``), and sktime's
``predict_interval`` and ``predict_quantiles`` checking their levels with the package's one
check (:func:`~levy_sklearn.metrics.check_coverage`; sktime's fails on an int or a string with
a ``TypeError`` from inside its check, and reads ``True`` as an iterable), and sktime's
``save`` and ``load`` writing and reading the package's model file (no pickle of the
estimator). It reads the forecaster's ``_moments``, so that every output comes from one
calibrated set of moments.
"""

from __future__ import annotations

import warnings
from typing import ClassVar

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

from .metrics import check_coverage

__all__ = ["ForecastOutputs"]


class ForecastOutputs:
    """Public outputs of a forecaster that defines ``_moments(fh, diagnostics)`` (rows,
    mean, calibrated variance, ...; see ``LevyForecaster._moments``) on top of sktime's
    ``BaseForecaster``."""

    # LevyForecaster's state a model file holds (levy_sklearn.serialization saves exactly
    # these): name -> (type family, required of every fitted forecaster, shape: dimensions,
    # an int's value, or a calibration's channels, as the network's targets q (y's channels;
    # X's are input channels after them) and the fitted series s; a pretrained_ attribute's,
    # its pretrained network's; checked at load).
    # "sktime" marks sktime's own bookkeeping, saved as sktime keeps it.
    _saved_attributes: ClassVar[dict[str, tuple]] = {
        "net_": ("net", True, None),
        "calibration_": ("calibration", True, "q"),
        "channel_mean_": ("floats", True, ("q",)),
        "channel_scale_": ("scales", True, ("q",)),
        "series_mean_": ("floats", True, ("s", "q")),
        "series_scale_": ("scales", True, ("s", "q")),
        "n_channels_": ("int", False, "q"),
        "spec_": ("spec", True, None),
        "ar_order_": ("int", False, None),
        "calibration_fraction_": ("number", False, None),
        "_index_names": ("value", False, None),
        "_series": ("frames", True, None),
        "_step": ("value", False, None),
        "covariates_": ("covariates", False, None),
        "_covariates": ("frames", False, None),
        "pretrained_net_": ("net", False, None),
        "pretrained_calibration_": ("calibration", False, "q"),
        "pretrained_channel_mean_": ("floats", False, ("q",)),
        "pretrained_channel_scale_": ("scales", False, ("q",)),
        "pretrained_n_channels_": ("int", False, "q"),
        "pretrained_columns_": ("value", False, None),
        "pretrained_time_unit_": ("span", False, None),
        "pretrained_time_kind_": ("text", False, None),
        "pretrained_covariates_": ("covariates", False, None),
        "_cutoff": ("index", True, None),
        "_fh": ("sktime", False, None),
        "_y": ("sktime", False, None),
        "_X": ("sktime", False, None),
        "_converter_store_y": ("sktime", False, None),
        "_state": ("sktime", False, None),
        "_tags_dynamic": ("sktime", False, None),
        "_config_dynamic": ("sktime", False, None),
        "_y_metadata": ("sktime", False, None),
        "_y_mtype_last_seen": ("sktime", False, None),
        "_X_mtype_last_seen": ("sktime", False, None),
        "_pretrained_attrs": ("sktime", False, None),
        "_is_vectorized": ("sktime", False, None),
        "_feature_names": ("sktime", False, None),
        "_is_fitted": ("sktime", False, None),
        "_yvec": ("sktime", False, None),
        "_y_before": ("sktime", False, None),  # what an update in progress restores if refused
    }

    @property
    def index_names_(self) -> list:
        """Names of the index levels of the fitted ``y`` (instance levels, then time).

        Returns
        -------
        list
            One name per level (``None`` for an unnamed one).

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from levy_sklearn.forecaster import LevyForecaster
        >>> y = pd.Series(np.arange(30.0), index=pd.RangeIndex(30, name="t"))
        >>> LevyForecaster(max_epochs=1, d_model=8, n_heads=2).fit(y).index_names_
        ['t']
        """
        self.check_is_fitted()
        return list(self._index_names)

    def predict_uncertainty(self, fh=None, X=None) -> Bunch:
        """Per-forecast uncertainty breakdown: why is a forecast uncertain?

        The forecaster's twin of
        :meth:`LevyAttentionRegressor.predict_uncertainty
        <levy_sklearn.regressor.LevyAttentionRegressor.predict_uncertainty>`, per channel and
        forecast time.

        Parameters
        ----------
        fh : int, list, pd.Index or ForecastingHorizon, optional
            Forecast times (see the class docstring); the ``fh`` of ``fit`` when omitted.
        X : pd.DataFrame, optional
            Covariates after the cutoff: the plan to forecast under, as for ``predict``.

        Returns
        -------
        Bunch
            DataFrames indexed like :meth:`predict_var` (one row per forecast time, and per
            series of a panel), one column per channel:
            ``mean`` and ``std``: as ``predict`` and ``sqrt(predict_var)`` (calibrated, and
            floored beyond ``max_horizon``).
            ``evidence``: expected number of Poisson points supporting the forecast, summed
            over the output layer's heads; low where little was observed near the forecast
            time. ``disagreement``: spread of the attended values through the readout,
            summed over heads, in squared data units (calibrated like the variance); high
            where the context conflicts. Neither is floored beyond
            ``max_horizon``. ``evidence_per_head``, ``disagreement_per_head``: the same per
            head, columns ``(channel, head)``. For ``attention="softmax"`` evidence and
            disagreement are 0. ``noise_variance``: the learned noise variance inside
            ``std²`` in squared data units (rescaled like it): 0 for the Lévy forecaster,
            whose σ comes from the Lévy layer alone; the variance head, all of ``std²``, for
            the softmax twin. A channel a series has never shown, after ``pretrain``, is
            forecast by the population (see :doc:`/user_guide/new_subjects`): there
            ``evidence`` is 0 (nothing of the series supports it) and ``disagreement`` is
            all of ``std²`` (the spread of the population's values), split evenly over the
            heads; ``noise_variance`` is 0.

        Examples
        --------
        >>> from sktime.datasets import load_airline
        >>> from levy_sklearn.forecaster import LevyForecaster
        >>> forecaster = LevyForecaster(max_epochs=2, random_state=0).fit(load_airline())
        >>> u = forecaster.predict_uncertainty(fh=[1, 2, 3])
        >>> sorted(u)  # doctest: +NORMALIZE_WHITESPACE
        ['disagreement', 'disagreement_per_head', 'evidence', 'evidence_per_head', 'mean',
         'noise_variance', 'std']
        >>> u.std.shape, u.evidence_per_head.shape  # (fh, channels), (fh, channels x heads)
        ((3, 1), (3, 4))
        >>> bool((u.std.to_numpy() > 0).all())
        True
        """
        self.check_is_fitted()
        fh = self._check_fh(fh)
        parts: dict = {}
        rows, mean, var, *_ = self._moments(fh, parts, self._check_X(X))
        columns = self._get_columns("predict_var")
        heads = pd.MultiIndex.from_product(
            [columns, range(parts["evidence"].shape[-1])], names=[None, "head"]
        )

        def frame(a, cols=columns):
            return pd.DataFrame(a.reshape(len(rows), -1), index=rows, columns=cols)

        return Bunch(
            mean=frame(mean),
            std=frame(np.sqrt(var)),
            evidence=frame(parts["evidence"].sum(-1)),
            disagreement=frame(parts["disagreement"].sum(-1)),
            evidence_per_head=frame(parts["evidence"], heads),
            disagreement_per_head=frame(parts["disagreement"], heads),
            noise_variance=frame(parts["noise"]),
        )

    def predict_interval(self, fh=None, X=None, coverage=0.90):
        """Central prediction intervals, calibrated at each coverage level.

        ``mean ± q(coverage)·σ`` with ``q`` the split-conformal quantile of the σ-normalised
        error for the forecast's channel and lead (see ``calibration_``; the Normal's
        quantile when nothing was calibrated). This override checks ``coverage`` with
        :func:`~levy_sklearn.metrics.check_coverage`, which names a bad value where sktime's
        check raises a ``TypeError`` from inside it.

        Parameters
        ----------
        fh : int, list, pd.Index or ForecastingHorizon, optional
            Forecast times (see the class docstring); the ``fh`` of ``fit`` when omitted.
        X : pd.DataFrame, optional
            Covariates after the cutoff: the plan to forecast under, as for ``predict``.
        coverage : float or list of float, default=0.90
            Nominal coverage(s), each strictly between 0 and 1 (ints are read as floats;
            strings and booleans are refused).

        Returns
        -------
        pd.DataFrame
            sktime's interval format: columns ``(variable, coverage, "lower"/"upper")``.

        Examples
        --------
        >>> from sktime.datasets import load_airline
        >>> from levy_sklearn.forecaster import LevyForecaster
        >>> forecaster = LevyForecaster(max_epochs=2, random_state=0).fit(load_airline())
        >>> intervals = forecaster.predict_interval(fh=[1, 2], coverage=[0.5, 0.9])
        >>> intervals.shape  # columns (variable, coverage, "lower"/"upper")
        (2, 4)
        >>> lower, upper = intervals.xs(0.9, axis=1, level=1).to_numpy().T
        >>> bool((lower < upper).all())
        True
        """
        return super().predict_interval(fh=fh, X=X, coverage=_levels(coverage, "coverage"))

    def predict_quantiles(self, fh=None, X=None, alpha=None):
        """Quantile forecasts of the calibrated distribution (see :meth:`predict_interval`).

        This override checks ``alpha`` with :func:`~levy_sklearn.metrics.check_coverage`,
        which names a bad value where sktime's check raises a ``TypeError`` from inside it.

        Parameters
        ----------
        fh : int, list, pd.Index or ForecastingHorizon, optional
            Forecast times (see the class docstring); the ``fh`` of ``fit`` when omitted.
        X : pd.DataFrame, optional
            Covariates after the cutoff: the plan to forecast under, as for ``predict``.
        alpha : float or list of float, optional
            Quantile levels, each strictly between 0 and 1 (ints are read as floats;
            strings and booleans are refused);
            sktime's default ``[0.05, 0.95]`` when omitted.

        Returns
        -------
        pd.DataFrame
            sktime's quantile format: columns ``(variable, alpha)``.

        Examples
        --------
        >>> from sktime.datasets import load_airline
        >>> from levy_sklearn.forecaster import LevyForecaster
        >>> forecaster = LevyForecaster(max_epochs=2, random_state=0).fit(load_airline())
        >>> q = forecaster.predict_quantiles(fh=[1, 2], alpha=[0.1, 0.5, 0.9])
        >>> q.shape, bool((q.iloc[:, 0] < q.iloc[:, 2]).all())
        ((2, 3), True)
        """
        return super().predict_quantiles(fh=fh, X=X, alpha=_levels(alpha, "alpha"))

    def predict_proba(self, fh=None, X=None, marginal=True):
        """The predictive Normal of every forecast: mean ``predict``, variance ``predict_var``.

        On a panel it warns: sktime's ``CRPS`` and ``LogLoss`` cannot score an skpro
        distribution with a row ``MultiIndex`` (a ``KeyError`` inside skpro); sktime's
        ``evaluate`` then writes the score computed before the failure into every metric's
        column, not ``NaN``, and ``ForecastingBenchmark`` records no row (see
        :doc:`/user_guide/global_forecasting`). ``predict_proba`` is what those metrics
        call, so the warning reaches a backtest that scores them.

        Parameters
        ----------
        fh : int, list, pd.Index or ForecastingHorizon, optional
            Forecast times (see the class docstring); the ``fh`` of ``fit`` when omitted.
        X : pd.DataFrame, optional
            Covariates after the cutoff: the plan to forecast under, as for ``predict``.
        marginal : bool, default=True
            Only marginal distributions are returned.

        Returns
        -------
        skpro.distributions.Normal
            One Normal per forecast time and channel, indexed like ``predict``.

        Examples
        --------
        >>> import numpy as np
        >>> from sktime.datasets import load_airline
        >>> from levy_sklearn.forecaster import LevyForecaster
        >>> forecaster = LevyForecaster(max_epochs=2, random_state=0).fit(load_airline())
        >>> dist = forecaster.predict_proba(fh=[1, 2])
        >>> mean = forecaster.predict(fh=[1, 2]).to_numpy()
        >>> bool(np.allclose(dist.mean().to_numpy().ravel(), mean))
        True
        """
        dist = super().predict_proba(fh=fh, X=X, marginal=marginal)
        if isinstance(dist.index, pd.MultiIndex):
            warnings.warn(
                "predict_proba on a panel returns an skpro Normal with a row MultiIndex, "
                "which sktime's CRPS and LogLoss cannot score (a KeyError inside skpro); "
                "evaluate then writes the score computed before the failure into every "
                "metric's column, and ForecastingBenchmark records no row. Score panels "
                "with PinballLoss or EmpiricalCoverage, or levy_sklearn.metrics."
                "gaussian_crps of predict and predict_var.",
                UserWarning,
                stacklevel=2,
            )
        return dist

    def save(self, path=None, serialization_format="pickle"):
        """sktime's ``save``, writing :func:`levy_sklearn.serialization.save`'s model file.

        Parameters
        ----------
        path : None, str or path-like
            ``None`` returns ``(type(self), bytes)``. A string is a name to which sktime adds
            ``.zip`` (``"model"`` writes ``model.zip``); a ``Path`` is the file itself.
        serialization_format : {"pickle", "cloudpickle"}
            Accepted for sktime's sake; the file holds no pickle of the estimator either way.

        Returns
        -------
        tuple or zipfile.ZipFile
            ``(type(self), bytes)`` for ``path=None``, else the written archive, opened.

        Examples
        --------
        >>> import pathlib, tempfile
        >>> from sktime.base import load
        >>> from sktime.datasets import load_airline
        >>> from levy_sklearn.forecaster import LevyForecaster
        >>> forecaster = LevyForecaster(max_epochs=1, d_model=8, n_heads=2).fit(load_airline())
        >>> name = str(pathlib.Path(tempfile.mkdtemp()) / "airline")
        >>> forecaster.save(name).close()
        >>> again = load(name)  # reads airline.zip
        >>> bool((again.predict(fh=[1, 2]) == forecaster.predict(fh=[1, 2])).all())
        True
        """
        from ._persistence import sktime_save

        return sktime_save(self, path, serialization_format)

    @classmethod
    def load_from_path(cls, serial):
        """Read a model file for ``sktime.base.load``, without unpickling (sktime reads the
        file's ``_metadata``, a reference to this class, first).

        Parameters
        ----------
        serial : str or path-like
            A file written by ``save`` or :func:`levy_sklearn.serialization.save`.

        Returns
        -------
        LevyForecaster

        Examples
        --------
        >>> import pathlib, tempfile
        >>> from levy_sklearn.forecaster import LevyForecaster
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "model.levy.zip"
        >>> LevyForecaster(d_model=8).save(path).close()
        >>> LevyForecaster.load_from_path(path).d_model
        8
        """
        from ._persistence import sktime_load

        return sktime_load(cls, serial, in_memory=False)

    @classmethod
    def load_from_serial(cls, serial):
        """Read the in-memory file of ``save()`` for ``sktime.base.load``.

        Parameters
        ----------
        serial : bytes
            The second item of ``save()``'s ``(type, bytes)``.

        Returns
        -------
        LevyForecaster

        Examples
        --------
        >>> from levy_sklearn.forecaster import LevyForecaster
        >>> cls, data = LevyForecaster(d_model=8).save()
        >>> cls.load_from_serial(data).d_model
        8
        """
        from ._persistence import sktime_load

        return sktime_load(cls, serial, in_memory=True)


def _levels(levels: object, name: str) -> float | list[float] | None:
    """Checked levels as sktime takes them: a float, a list of floats, or ``None`` (its
    default)."""
    if levels is None:
        return None
    checked, scalar = check_coverage(levels, name)
    return checked[0] if scalar else checked
