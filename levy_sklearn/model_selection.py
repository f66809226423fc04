"""Backtesting with sktime's ``evaluate`` where its splitters' ``fh`` does not fit.

:class:`ObservedTimesSplitter` forecasts each fold of an irregularly sampled series at the
times of its test observations (see :doc:`/user_guide/global_forecasting`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sktime.split.base import BaseSplitter

__all__ = ["ObservedTimesSplitter"]


class ObservedTimesSplitter(BaseSplitter):
    """An sktime splitter's folds, forecast at each test window's own observation times.

    sktime's ``evaluate`` forecasts every fold at the splitter's ``fh``, steps or spans
    after the cutoff that are the same for all folds; on an irregularly sampled series no
    such ``fh`` lands on the observations of each fold (integer steps have no time there,
    and sktime's splitters look up ``cutoff + span`` among the observations). This splitter
    keeps the train and test windows of ``cv`` and has no ``fh``, so ``evaluate`` forecasts
    each fold at the times of its test observations, which it reads from the test window.

    Parameters
    ----------
    cv : sktime splitter
        The splitter whose windows are kept, with integer ``fh`` (steps are observations:
        ``ExpandingWindowSplitter(fh=[1, 2, 3], ...)`` tests each cutoff's next three).

    Notes
    -----
    sktime holds absolute times only as timestamps (a ``Timedelta`` is always a span after
    the cutoff), so the series needs a ``DatetimeIndex``; a series indexed by time since a
    start is one after ``y.index = pd.Timestamp(0) + y.index`` (after ``pretrain`` on a
    ``TimedeltaIndex`` panel, both kinds of time are measured in the pretraining unit).
    sktime's metrics take no missing value: on a subject whose channels are observed at
    different times, the test windows hold missing cells, which its probabilistic metrics
    refuse.

    Examples
    --------
    >>> import pandas as pd
    >>> from sktime.forecasting.model_evaluation import evaluate
    >>> from sktime.split import ExpandingWindowSplitter
    >>> from levy_sklearn.datasets import make_irregular_vitals
    >>> from levy_sklearn.forecaster import LevyForecaster
    >>> from levy_sklearn.model_selection import ObservedTimesSplitter
    >>> panel = make_irregular_vitals(8, n_channels=1, random_state=0)
    >>> forecaster = LevyForecaster(max_epochs=1, random_state=0).pretrain(panel.loc[:6])
    >>> subject = panel.loc[7]
    >>> subject.index = pd.Timestamp(0) + subject.index
    >>> cv = ObservedTimesSplitter(ExpandingWindowSplitter(fh=[1, 2], initial_window=60))
    >>> results = evaluate(forecaster, cv=cv, y=subject)  # doctest: +SKIP
    """

    def __init__(self, cv: BaseSplitter):
        self.cv = cv
        super().__init__()

    def _fh(self) -> None:
        # No fh: evaluate then forecasts each fold at its test window's index.
        return None

    def _split(self, y: pd.Index):
        if isinstance(y, pd.TimedeltaIndex):
            raise ValueError(
                "sktime reads Timedelta forecast times as spans after the cutoff, so a fold "
                "cannot be forecast at its observations' own times on a TimedeltaIndex: give "
                "the series a DatetimeIndex, e.g. y.index = pd.Timestamp(0) + y.index."
            )
        steps = getattr(self.cv, "fh", None)
        if steps is not None and not pd.api.types.is_integer_dtype(np.asarray(steps)):
            # sktime's window and cutoff splitters find a span's test observations by exact
            # time, which an irregular series never has (a KeyError inside sktime).
            raise ValueError(
                f"ObservedTimesSplitter needs a splitter with integer steps (observations "
                f"after the cutoff, e.g. fh=[1, 2, 3]), got fh={steps!r}: sktime's splitters "
                "look the spans up among the observation times, which they miss on an "
                "irregularly sampled series. Give cv integer fh and window lengths."
            )
        yield from self.cv.split(y)

    def get_n_splits(self, y=None) -> int:
        """Number of splits: those of ``cv``.

        Parameters
        ----------
        y : pd.Series or pd.Index, optional
            The time series to split.

        Returns
        -------
        int
            The number of folds.

        Examples
        --------
        >>> import numpy as np
        >>> from sktime.split import ExpandingWindowSplitter
        >>> from levy_sklearn.model_selection import ObservedTimesSplitter
        >>> cv = ExpandingWindowSplitter(fh=[1, 2], initial_window=6, step_length=2)
        >>> ObservedTimesSplitter(cv).get_n_splits(np.arange(12))
        3
        """
        return self.cv.get_n_splits(y)

    @classmethod
    def get_test_params(cls, parameter_set: str = "default") -> list[dict]:
        """Parameters for sktime's estimator checks.

        Parameters
        ----------
        parameter_set : str, default="default"
            Unused: the same sets for all.

        Returns
        -------
        list of dict
            Parameter sets.

        Examples
        --------
        >>> from levy_sklearn.model_selection import ObservedTimesSplitter
        >>> ObservedTimesSplitter(**ObservedTimesSplitter.get_test_params()[0]).cv
        ExpandingWindowSplitter(fh=[1, 2], initial_window=6)
        """
        from sktime.split import ExpandingGreedySplitter, ExpandingWindowSplitter

        return [
            {"cv": ExpandingWindowSplitter(fh=[1, 2], initial_window=6)},
            {"cv": ExpandingGreedySplitter(test_size=2, folds=2)},
        ]
