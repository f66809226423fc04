"""What ``verbose > 0`` shows: one progress bar over a whole fit, skorch's epoch table, and
the labels that name each training (a fold of a cross-fitted pretraining)."""

from __future__ import annotations

import builtins
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from numbers import Number
from typing import Any

import tqdm
from skorch.callbacks import PrintLog, ProgressBar

__all__ = ["EpochTable", "FitProgressBar", "progress_label"]

_LABELS: ContextVar[tuple[str, ...]] = ContextVar("levy_sklearn_progress_labels", default=())
# Off a terminal, one line per epoch and, within a long epoch, one at most this often.
_LOG_INTERVAL_S = 60.0
# The bar's text without the bar (a log file cannot redraw it): tqdm's fields otherwise.
_PLAIN_FORMAT = (
    "{desc}: {percentage:3.0f}% {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}{postfix}]"
)


@contextmanager
def progress_label(label: str) -> Iterator[None]:
    """Name the trainings run inside the block in the progress output of ``verbose > 0``.

    Labels of nested blocks join (``"pretrain, fold 2/5 held out"``); a training outside
    every block is called ``"fit"``. The label only names the output: a fit is the same
    with and without it.

    Parameters
    ----------
    label : str
        What the trainings in the block are (a fold of a cross-fitted pretraining, …).

    Yields
    ------
    None

    Examples
    --------
    >>> import contextlib, io
    >>> import numpy as np
    >>> from levy_sklearn.regressor import LevyAttentionRegressor
    >>> from levy_sklearn.training import progress_label
    >>> X = np.random.default_rng(0).normal(size=(50, 3))
    >>> reg = LevyAttentionRegressor(max_epochs=2, random_state=0, verbose=1)
    >>> table, log = io.StringIO(), io.StringIO()  # not terminals: plain lines, no bar
    >>> with contextlib.redirect_stdout(table), contextlib.redirect_stderr(log):
    ...     with progress_label("pretrain"), progress_label("fold 2/5 held out"):
    ...         _ = reg.fit(X, X[:, 0])
    >>> log.getvalue().splitlines()[-1].split(":")[0]
    'pretrain, fold 2/5 held out'
    """
    token = _LABELS.set((*_LABELS.get(), label))
    try:
        yield
    finally:
        _LABELS.reset(token)


def _in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel (skorch's test, ``ProgressBar.in_ipynb``)."""
    shell = getattr(builtins, "get_ipython", None)  # IPython puts it there
    return shell is not None and type(shell()).__name__ == "ZMQInteractiveShell"


def _redraws(stream: Any) -> bool:
    """Whether ``stream`` shows a bar redrawn in place and colours (a terminal, or a Jupyter
    notebook's output), rather than keeping every character (a file, a pipe, a capture)."""
    isatty = getattr(stream, "isatty", None)
    try:
        terminal = bool(isatty()) if callable(isatty) else False
    except ValueError:  # a closed stream
        terminal = False
    return terminal or _in_notebook()


def _write_above_bars(text: str) -> None:
    """``print`` that keeps a running tqdm bar intact, and reaches a file in order with the
    progress lines on ``stderr``."""
    tqdm.tqdm.write(text)
    sys.stdout.flush()


class EpochTable(PrintLog):
    """skorch's per-epoch table (``PrintLog``), printed above the progress bar, and only
    with ``verbose > 0`` (skorch's ``PrintLog`` ignores ``verbose`` for any sink but
    ``print``). skorch colours each column's best value with ANSI codes; on ``stdout`` that
    is not a terminal (a file, a pipe) the values are written plain."""

    def __init__(self, *args: Any, sink: Any = _write_above_bars, **kwargs: Any) -> None:
        super().__init__(*args, sink=sink, **kwargs)

    def format_row(self, row, key, color):
        if not _redraws(sys.stdout):
            # PrintLog's only colour is the best value's, marked by the ``<key>_best`` entry.
            row, color = {**row, f"{key}_best": False}, ""
        return super().format_row(row, key, color)

    def on_epoch_end(self, net, **kwargs):
        if net.verbose > 0:
            super().on_epoch_end(net, **kwargs)


class FitProgressBar(ProgressBar):
    """skorch's ``ProgressBar`` spanning a whole fit, with the time left, when ``verbose > 0``.

    skorch's bar counts the batches of one epoch and is erased when the epoch ends, so on
    the small epochs of a table or a pretraining panel it only flickers, and its time left
    is the epoch's. This one counts every batch the fit will run (epochs planned × batches
    per epoch, validation batches included) on one tqdm bar, written to ``stderr``, with
    the elapsed time, the time left, the epochs done and their last losses; it stays on
    screen when the fit ends (short of 100 % when early stopping ended it). The bar is
    named by :func:`progress_label` (``"fit"`` by default; a cross-fitted ``pretrain``
    names each fold's training and the last one on all series).

    Where ``stderr`` is not a terminal (a file, a pipe, a captured stream), which cannot
    redraw a bar, the same text is written as plain lines instead: one when each epoch
    ends, and within a long epoch one a minute.

    It reads ``net.verbose`` when each fit starts: with ``verbose=0`` it does nothing. It
    draws no random numbers, so a fit is the same with and without it.

    Parameters
    ----------
    batches_per_epoch : int or "auto", default="auto"
        Batches in one epoch; ``"auto"`` counts them from the data and the batch sizes.
    detect_notebook : bool, default=True
        In a Jupyter notebook, draw tqdm's notebook widget (``tqdm.auto``; the text bar
        where ipywidgets is missing).
    postfix_keys : list of str, optional
        Epoch-level history keys shown after the bar when they are recorded (default:
        ``train_loss``, ``valid_loss``).

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.regressor import LevyAttentionRegressor
    >>> X = np.random.default_rng(0).normal(size=(50, 3))
    >>> reg = LevyAttentionRegressor(max_epochs=2, random_state=0).fit(X, X[:, 0])
    >>> dict(reg.net_.callbacks_)["progress"].total_  # verbose=0: no bar was drawn
    0
    """

    def __init__(
        self,
        batches_per_epoch: int | str = "auto",
        detect_notebook: bool = True,
        postfix_keys: list[str] | None = None,
    ) -> None:
        super().__init__(batches_per_epoch, detect_notebook, postfix_keys)

    def on_train_begin(self, net, X=None, y=None, **kwargs):
        self.pbar_ = None
        self.total_ = 0
        self.first_epoch_ = len(net.history)
        self.started_ = None

    def on_epoch_begin(self, net, dataset_train=None, dataset_valid=None, **kwargs):
        if getattr(self, "started_", None) is not None or net.verbose <= 0:
            return
        # skorch notifies on_train_begin before fit_loop knows a partial_fit's epochs.
        self.epochs_ = int(getattr(net, "_planned_epochs", net.max_epochs))
        per_epoch = self.batches_per_epoch
        if per_epoch == "auto":
            per_epoch = self._get_batches_per_epoch(net, dataset_train, dataset_valid)
        self.total_ = int(per_epoch) * self.epochs_
        self.label_ = ", ".join(_LABELS.get()) or "fit"
        self.done_, self.postfix_ = 0, ""
        self.started_ = self.written_ = time.monotonic()
        if not _redraws(sys.stderr):
            return  # plain lines (see _write_line)
        bar = tqdm.tqdm
        if self.detect_notebook:
            # tqdm's own choice: the notebook widget in Jupyter when ipywidgets is there
            # (skorch's tqdm_notebook is deprecated and fails without ipywidgets).
            from tqdm.auto import tqdm as bar
        self.pbar_ = bar(total=self.total_, unit="batch", desc=self.label_, dynamic_ncols=True)

    def on_batch_end(self, net, **kwargs):
        if getattr(self, "started_", None) is None:
            return
        self.done_ += 1
        if self.pbar_ is not None:
            self.pbar_.update()
        elif time.monotonic() - self.written_ >= _LOG_INTERVAL_S:
            self._write_line()

    def on_epoch_end(self, net, **kwargs):
        # One bar for the whole fit (closed when training ends); the epoch's losses after it.
        if getattr(self, "started_", None) is None:
            return
        epoch = len(net.history) - self.first_epoch_
        postfix = {"epoch": f"{epoch}/{self.epochs_}"}
        postfix.update((k, net.history[-1][k]) for k in self.postfix_keys if k in net.history[-1])
        if self.pbar_ is not None:
            self.pbar_.set_postfix(postfix)
            return
        self.postfix_ = ", ".join(
            f"{key}={tqdm.tqdm.format_num(value) if isinstance(value, Number) else value}"
            for key, value in postfix.items()
        )
        self._write_line()

    def on_train_end(self, net, X=None, y=None, **kwargs):
        if getattr(self, "pbar_", None) is not None:
            self.pbar_.close()
        self.pbar_ = None
        self.started_ = None

    def _write_line(self) -> None:
        """The bar's text as one line on ``stderr``, after the table rows already printed."""
        self.written_ = time.monotonic()
        line = tqdm.tqdm.format_meter(
            self.done_,
            self.total_,
            self.written_ - self.started_,
            prefix=self.label_,
            unit="batch",
            postfix=self.postfix_,
            bar_format=_PLAIN_FORMAT,
        )
        sys.stdout.flush()
        print(line, file=sys.stderr, flush=True)
