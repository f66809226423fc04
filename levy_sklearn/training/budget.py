"""How long and in what steps a fit trains: epochs, batch size and learning rate."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

__all__ = ["LARGE_DATA_BATCH_GROWTH", "LARGE_DATA_LR_GROWTH", "Budget", "training_budget"]

#: Where ``max_steps`` would allow fewer than two passes over the training data, a budget
#: that grows with the data (``grow=True`` in :func:`training_budget`; the forecaster's
#: panels) trains all ``max_epochs`` passes at this many times ``batch_size`` and
#: :data:`LARGE_DATA_LR_GROWTH` times ``lr``. Chosen on competition sets no report uses (M3
#: other and quarterly, M1 monthly and quarterly; ``benchmarks/results/panel_budget.md``):
#: against one capped epoch it lowered MASE 0.5-4 % and scaled CRPS 2-11 % on every set,
#: at 4-5 times the CPU; ten epochs at the small batch gained as much at 7 times.
LARGE_DATA_BATCH_GROWTH = 8
#: See :data:`LARGE_DATA_BATCH_GROWTH` (about the square root of the batch's growth).
LARGE_DATA_LR_GROWTH = 2.0


@dataclass(frozen=True)
class Budget:
    """How long and in what steps a fit trains (see :func:`training_budget`)."""

    epochs: int
    batch_size: int
    lr: float
    #: Rows each epoch draws (seeded, without replacement); ``None``: every row.
    rows: int | None = None
    #: Whether the data were too large for two passes within ``max_steps``, so that the
    #: batch and learning rate grew (``grow=True`` in :func:`training_budget`).
    grown: bool = False


def training_budget(
    n_rows: int,
    batch_size: int,
    lr: float,
    max_epochs: int,
    max_steps: int | None,
    validation_fraction: float = 0.0,
    grow: bool = False,
    steps_of: int | None = None,
) -> Budget:
    """The epochs, batch size and learning rate of a fit on ``n_rows`` rows.

    Small data keeps ``max_epochs`` passes at ``batch_size`` and ``lr``. Where they would take
    over ``max_steps`` steps, training stops after the last whole epoch within ``max_steps``,
    so the cost of a fit stops growing with the number of rows. With ``grow`` (a cost that
    grows with the data and never falls as it grows):

    - where the whole epochs within ``max_steps`` fall short of it, training takes as many
      epochs as ``max_steps`` batches of rows need, each drawing an equal share of them
      (``rows``, whole batches drawn without replacement from the seed): ``max_steps``
      steps in all, less the shares' rounding (at most one step an epoch, 2 % of 500 steps
      in ten epochs), where the last whole epoch would stop up to a third short of them (500
      steps of 167 an epoch: two epochs, 334 steps), so that a few more rows would train a
      third less;
    - data so large that fewer than two epochs would fit train all ``max_epochs`` passes at
      :data:`LARGE_DATA_BATCH_GROWTH` times ``batch_size`` and :data:`LARGE_DATA_LR_GROWTH`
      times ``lr`` instead (their cost grows with the data).

    Where even one pass at the batch size takes more than ``max_steps`` steps, each epoch
    draws ``max_steps`` batches of rows instead of every row: one epoch (``max_epochs``
    where the batch grew) of ``max_steps`` steps bounds the cost of a fit, however many rows
    it has.

    Parameters
    ----------
    n_rows : int
        Rows (windows) given to the fit, before the validation split.
    batch_size : int
        Rows per optimizer step.
    lr : float
        Learning rate.
    max_epochs : int
        Most epochs.
    max_steps : int or None
        Most optimizer steps in all at ``batch_size``; ``None``: no limit.
    validation_fraction : float, default=0.0
        Share of the rows held out (as skorch's ``ValidSplit`` holds it out).
    grow : bool, default=False
        Whether large data trains longer at a larger batch (see above).
    steps_of : int, optional
        Train as long as a fit on this many rows would: its budget, each epoch drawing as
        many rows as one of its epochs holds (more than ``n_rows`` holds: every row, then a
        share of them again, see :func:`epoch_loader`). Networks trained on different
        shares of a panel then step alike.

    Returns
    -------
    Budget

    Examples
    --------
    >>> from levy_sklearn.training import training_budget
    >>> training_budget(442, 64, 0.01, max_epochs=40, max_steps=1000).epochs  # all 40
    40
    >>> training_budget(5000, 64, 0.01, max_epochs=40, max_steps=1000).epochs  # 79 steps each
    12
    >>> training_budget(5344, 32, 0.01, max_epochs=10, max_steps=500)  # 2 epochs: 334 steps
    Budget(epochs=2, batch_size=32, lr=0.01, rows=None, grown=False)
    >>> training_budget(5344, 32, 0.01, max_epochs=10, max_steps=500, grow=True)  # 3 x 166
    Budget(epochs=3, batch_size=32, lr=0.01, rows=5312, grown=False)
    >>> training_budget(40000, 32, 0.01, max_epochs=10, max_steps=500, grow=True)
    Budget(epochs=10, batch_size=256, lr=0.02, rows=None, grown=True)
    >>> training_budget(10**6, 32, 0.01, max_epochs=10, max_steps=500, grow=True).rows
    128000
    >>> training_budget(50000, 32, 0.01, 10, 500, grow=True, steps_of=40000)  # as on 40,000
    Budget(epochs=10, batch_size=256, lr=0.02, rows=40000, grown=True)
    >>> training_budget(6000, 32, 0.01, 10, 500, grow=True, steps_of=9000).rows  # 9,000 an epoch
    9000
    """
    if steps_of is not None and steps_of != n_rows:
        like = training_budget(
            steps_of, batch_size, lr, max_epochs, max_steps, validation_fraction, grow
        )
        held = steps_of - math.ceil(validation_fraction * steps_of)
        return replace(like, rows=like.rows or held)
    if max_steps is None:
        return Budget(max_epochs, batch_size, lr)
    n_train = n_rows - math.ceil(validation_fraction * n_rows)
    steps_per_epoch = max(1, math.ceil(n_train / batch_size))
    epochs = max(1, min(max_epochs, max_steps // steps_per_epoch))
    grown = grow and epochs < min(2, max_epochs)
    if grown:
        epochs = max_epochs
        batch_size, lr = LARGE_DATA_BATCH_GROWTH * batch_size, LARGE_DATA_LR_GROWTH * lr
    elif grow and epochs < max_epochs and epochs * n_train < max_steps * batch_size:
        # max_steps batches of rows in all, in as few epochs as hold them (each epoch at most
        # every row once), an equal number of whole batches each: never over max_steps.
        epochs = min(max_epochs, math.ceil(max_steps * batch_size / n_train))
        rows = max_steps // epochs * batch_size
        return Budget(epochs, batch_size, lr, rows if rows < n_train else None)
    if math.ceil(n_train / batch_size) > max_steps:  # not one whole pass within max_steps
        return Budget(epochs, batch_size, lr, max_steps * batch_size, grown)
    return Budget(epochs, batch_size, lr, grown=grown)
