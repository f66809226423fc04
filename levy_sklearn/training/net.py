"""The skorch net of a :class:`~levy_sklearn.network.LevyNet`: trained on a proper scoring
rule, predicting every output of the network in memory-bounded batches."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping

import numpy as np
import torch
from skorch import NeuralNet
from skorch.callbacks import EarlyStopping
from torch import nn

from ..network import LevyNetOutput
from .data import SAMPLE_WEIGHT
from .distributed import total
from .seeding import seeded

__all__ = ["PREDICT_BATCH_BYTES", "LevyNeuralNet", "predict_in_chunks"]

#: Memory budget of one inference batch, in bytes: :meth:`LevyNeuralNet.predict_moments`
#: feeds the network as many rows at a time as keep its activations (width ``d_model`` per
#: token and query, one attention row per head) within it, and never fewer than
#: ``batch_size``. 8 MiB (530 rows of 18 tokens at the regressor's default width, 221
#: forecast windows of 24 tokens and 13 queries) lies where a sweep of batch sizes on one
#: CPU thread was fastest for both (256–2,048 rows of the clinical benchmark's patients,
#: 64–256 windows): smaller batches pay a network call each, larger ones fall out of the
#: processor's caches (``benchmarks/results/speed_predict.md``, ``benchmarks/speed.py
#: --predict`` timing it against ``batch_size``). The network holds a dozen or so such
#: tensors at once: predicting 10⁶ rows × 10 features peaked 0.12 GiB higher than with
#: ``batch_size`` rows a batch (0.30 GiB added against 0.19, ``benchmarks/results/memory.md``).
PREDICT_BATCH_BYTES = 8 * 2**20
# Targets scored by the trivial forecast after training (LevyNeuralNet.check_learned).
_LEARNED_CHECK_ROWS = 100_000


class LevyNeuralNet(NeuralNet):
    """skorch ``NeuralNet`` around :class:`~levy_sklearn.network.LevyNet`.

    Inputs are dicts of padded token arrays (``times``, ``channels``, ``values``, ``mask``,
    ``query_times``, ``query_channels``), targets are ``(n, Q)`` arrays (``NaN`` = unobserved).
    An optional ``"sample_weight"`` entry of shape ``(n,)`` weights the rows in the loss (see
    :class:`GaussianScore`) and is not passed to the module.
    The module returns :class:`~levy_sklearn.network.LevyNetOutput`; :meth:`get_loss` scores
    mean and variance together, and :meth:`predict_moments` returns every output, where
    skorch's own ``predict`` would keep only the first. ``variance_scale_`` (1 unless
    :meth:`calibrate` set it) multiplies every predicted variance.

    Unlike skorch's ``NeuralNet``, whose ``fit`` and ``partial_fit`` swallow a
    ``KeyboardInterrupt`` and return a partly trained net, this net re-raises it once skorch
    has finished its ``on_train_end`` hooks: Ctrl-C stops the caller (a grid search, a
    script), and the front-ends leave no half-fitted estimator behind. (skorch's
    ``EarlyStopping`` stops training by raising ``KeyboardInterrupt`` too; that one is not
    re-raised.)

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.tokens import tokens_from_rows
    >>> from levy_sklearn.regressor import LevyAttentionRegressor
    >>> X = np.random.default_rng(0).normal(size=(50, 3))
    >>> net = LevyAttentionRegressor(max_epochs=2, random_state=0).fit(X, X[:, 0]).net_
    >>> tokens = tokens_from_rows(X[:4])
    >>> type(net).__name__, type(net.module_).__name__
    ('LevyNeuralNet', 'LevyNet')
    >>> net.predict_moments(tokens).variance.shape  # (n, Q): one query per row here
    (4, 1)
    """

    variance_scale_ = 1.0

    def fit_loop(self, X, y=None, epochs=None, **fit_params):
        self._interrupted = False
        try:
            return super().fit_loop(X, y, epochs=epochs, **fit_params)
        except KeyboardInterrupt:
            self._interrupted = not any(
                isinstance(cb, EarlyStopping) and cb.misses_ == cb.patience
                for _, cb in self.callbacks_
            )
            raise

    def partial_fit(self, X, y=None, classes=None, **fit_params):
        # The epochs this call will run, known before skorch's on_train_begin (which comes
        # before fit_loop): the progress bar's total and the learning-rate cycle's length.
        epochs = fit_params.get("epochs")
        self._planned_epochs = self.max_epochs if epochs is None else epochs
        super().partial_fit(X, y, classes=classes, **fit_params)
        if getattr(self, "_interrupted", False):
            raise KeyboardInterrupt("Training was interrupted.")
        return self

    def infer(self, x, **fit_params):
        # Row weights travel with the tokens (so that skorch batches and splits them alike)
        # but are the loss's business, not the module's.
        if isinstance(x, Mapping) and SAMPLE_WEIGHT in x:
            x = {k: v for k, v in x.items() if k != SAMPLE_WEIGHT}
        return super().infer(x, **fit_params)

    def get_loss(self, y_pred, y_true, X=None, training=False):
        mean, variance = y_pred[:2]
        weight = X.get(SAMPLE_WEIGHT) if isinstance(X, Mapping) else None
        if weight is not None:
            weight = torch.as_tensor(weight, device=mean.device)
        loss = self.criterion_(mean, variance, y_true, weight)
        if not torch.isfinite(loss):  # stop before a NaN gradient spreads to every weight
            raise self._diverged(f"the loss is no longer finite in epoch {len(self.history)}")
        return loss

    def _diverged(self, what: str) -> FloatingPointError:
        return FloatingPointError(
            f"Training diverged: {what} (lr={self.lr:g}, weight_decay="
            f"{self.optimizer__weight_decay:g}). Lower lr (e.g. ten times) or weight_decay, or "
            "check the data for extreme values."
        )

    def check_learned(self, y: np.ndarray) -> None:
        """Warn when training ended worse on its own data than the trivial forecast: the
        targets' centre with unit spread (their standardised mean and scale, ``N(0, 1)`` in
        the network's units), scored by the training loss. A diverged training need not
        reach a non-finite loss: at ``lr=0.5`` a regressor can end at twice that forecast's
        CRPS with σ a thousandth of y's spread, and at ``lr=1`` a forecaster's airline
        forecasts can turn negative.

        Parameters
        ----------
        y : ndarray
            The training targets in the network's units (``NaN``: unobserved).

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.regressor import LevyAttentionRegressor
        >>> X = np.random.default_rng(0).normal(size=(50, 3))
        >>> reg = LevyAttentionRegressor(max_epochs=5, random_state=0).fit(X, X[:, 0])
        >>> reg.net_.check_learned((X[:, :1] - reg.y_mean_) / reg.y_scale_)  # silent
        """
        target = torch.as_tensor(np.asarray(y, dtype=np.float32)[:_LEARNED_CHECK_ROWS])
        with torch.no_grad():
            trivial = float(
                self.criterion_(torch.zeros_like(target), torch.ones_like(target), target)
            )
        final = float(self.history[-1, "train_loss"])
        if final > trivial + 0.5 * abs(trivial):
            warnings.warn(
                f"Training ended with a loss of {final:.3g} on its own data, worse than the "
                f"{trivial:.3g} of forecasting the targets' standardised mean with unit "
                f"spread: it diverged or stopped far too early (lr={self.lr:g}, "
                f"max_epochs={self.max_epochs}). Lower lr (e.g. ten times), or raise "
                "max_epochs.",
                UserWarning,
                stacklevel=2,
            )

    def check_finite(self) -> None:
        """Refuse a net whose weights are NaN or infinite: its training diverged.

        Raises
        ------
        FloatingPointError
            Naming the learning rate and the fix.

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.regressor import LevyAttentionRegressor
        >>> X = np.random.default_rng(0).normal(size=(50, 3))
        >>> net = LevyAttentionRegressor(max_epochs=1, random_state=0).fit(X, X[:, 0]).net_
        >>> net.check_finite()  # a trained net passes
        """
        if not all(bool(torch.isfinite(p).all()) for p in self.module_.parameters()):
            raise self._diverged("the network's weights are no longer finite after training")

    def predict_moments(self, X: Mapping[str, np.ndarray]) -> LevyNetOutput:
        """Every output of the module for every query, as float64 numpy arrays.

        Parameters
        ----------
        X : dict of array
            Token arrays (see the class docstring).

        Returns
        -------
        LevyNetOutput
            ``mean``, ``variance`` and ``noise`` ``(n, Q)``; ``evidence`` and
            ``disagreement`` ``(n, Q, H)``. ``variance``, ``disagreement`` and ``noise``
            include ``variance_scale_``.

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.tokens import tokens_from_rows
        >>> from levy_sklearn.regressor import LevyAttentionRegressor
        >>> X = np.random.default_rng(0).normal(size=(50, 3))
        >>> net = LevyAttentionRegressor(max_epochs=2, random_state=0).fit(X, X[:, 0]).net_
        >>> tokens = tokens_from_rows(X[:4])
        >>> out = net.predict_moments(tokens)
        >>> out.mean.shape, out.evidence.shape, out.mean.dtype
        ((4, 1), (4, 1, 4), dtype('float64'))
        """
        n_rows = len(X["times"])
        rows = self.predict_batch_rows(X)

        # Whole slices of rows (views, no per-row work), each through skorch's evaluation
        # step (eval mode, no autograd, ``infer``). Isolated from torch's global RNG so that
        # predicting never changes the caller's random stream.
        def as_numpy(outputs):
            return [t.detach().cpu().to(torch.float64).numpy() for t in outputs]

        with seeded(None):
            parts = [
                as_numpy(
                    self.evaluation_step(
                        ({k: v[start : start + rows] for k, v in X.items()}, None)
                    )
                )
                for start in range(0, n_rows, rows)
            ]
            if not parts:  # no rows: let skorch's iterator say what it says about empty data
                parts = [as_numpy(out) for out in self.forward_iter(X, training=False)]
        mean, var, evidence, disagreement, noise = (
            np.concatenate(p) for p in zip(*parts, strict=True)
        )
        scale = self.variance_scale_
        return LevyNetOutput(mean, var * scale, evidence, disagreement * scale, noise * scale)

    def predict_batch_rows(self, X: Mapping[str, np.ndarray]) -> int:
        """Rows per inference batch of :meth:`predict_moments` for the token arrays ``X``.

        As many rows as keep one batch's activations within :data:`PREDICT_BATCH_BYTES`
        (``(tokens + queries) × (d_model + n_heads × tokens)`` values per row, in the
        module's float type), never fewer than the training ``batch_size`` and never more
        than the rows of ``X``. Independent of the training batch size otherwise.

        Parameters
        ----------
        X : dict of array
            Token arrays (see the class docstring).

        Returns
        -------
        int

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.tokens import tokens_from_rows
        >>> from levy_sklearn.regressor import LevyAttentionRegressor
        >>> X = np.random.default_rng(0).normal(size=(50, 3))
        >>> net = LevyAttentionRegressor(max_epochs=2, random_state=0).fit(X, X[:, 0]).net_
        >>> net.predict_batch_rows(tokens_from_rows(np.zeros((100_000, 18))))
        530
        >>> net.predict_batch_rows(tokens_from_rows(X))  # all 50 rows in one batch
        50
        """
        n_rows, n_tokens = np.shape(X["times"])[:2]
        n_queries = np.shape(X["query_times"])[1]
        module = getattr(self, "module_", None)
        itemsize = 8
        if isinstance(module, nn.Module):
            itemsize = next(module.parameters()).element_size()
        width = self.module__d_model + self.module__n_heads * n_tokens
        per_row = itemsize * (n_tokens + n_queries) * width
        rows = max(PREDICT_BATCH_BYTES // max(per_row, 1), self.batch_size)
        return int(max(1, min(rows, n_rows)))

    def predict_samples(
        self,
        X: Mapping[str, np.ndarray],
        n_samples: int,
        method: str = "poisson",
        random_state: int | None = None,
    ) -> np.ndarray:
        """Draw predictions by repeated stochastic passes (the baselines' way to get σ).

        Parameters
        ----------
        X : dict of array
            Token arrays.
        n_samples : int
            Number of draws per query.
        method : {"poisson", "mc_dropout"}, default="poisson"
            ``"poisson"`` draws the output layer from its Poisson construction (one encoder
            pass, see :meth:`LevyNet.sample`); ``"mc_dropout"`` runs the whole network
            ``n_samples`` times with dropout active (needs ``dropout > 0``).
        random_state : int, optional
            Seed of the draws.

        Returns
        -------
        ndarray of shape (n_samples, n, Q)
            Draws in the module's output units (``variance_scale_`` is not applied: draws
            carry their own spread).

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.tokens import tokens_from_rows
        >>> from levy_sklearn.regressor import LevyAttentionRegressor
        >>> X = np.random.default_rng(0).normal(size=(50, 3))
        >>> net = LevyAttentionRegressor(max_epochs=2, random_state=0).fit(X, X[:, 0]).net_
        >>> tokens = tokens_from_rows(X[:4])
        >>> draws = net.predict_samples(tokens, n_samples=50, random_state=0)
        >>> draws.shape
        (50, 4, 1)
        >>> bool(np.array_equal(draws, net.predict_samples(tokens, 50, random_state=0)))
        True
        """
        if method not in ("poisson", "mc_dropout"):
            raise ValueError(f"method={method!r} must be 'poisson' or 'mc_dropout'.")
        if method == "mc_dropout" and self.module__dropout <= 0:
            raise ValueError("method='mc_dropout' needs a network trained with dropout > 0.")
        module = self.module_
        draws = []
        with seeded(random_state), torch.no_grad():
            for batch in self.get_iterator(self.get_dataset(X), training=False):
                tokens = {k: v.to(self.device) for k, v in batch[0].items()}
                if method == "poisson":
                    draws.append(module.sample(**tokens, n_samples=n_samples))
                    continue
                module.train()
                try:
                    draws.append(torch.stack([module(**tokens)[0] for _ in range(n_samples)]))
                finally:
                    module.eval()
        return torch.cat(draws, dim=1).cpu().to(torch.float64).numpy()

    def calibrate(self, X: Mapping[str, np.ndarray], y: np.ndarray) -> float:
        """Fit the one scalar ``s²`` with ``mean((y − μ)² / (s² σ²)) = 1`` on held-out data.

        Used after training with ``loss="mse"``, whose σ is otherwise unscaled; writes and
        returns ``variance_scale_``.

        Parameters
        ----------
        X : dict of array
            Token arrays of the held-out rows.
        y : ndarray of shape (n, Q)
            Their targets (``NaN`` = unobserved, left out).

        Returns
        -------
        float
            ``s²``, the new ``variance_scale_``.

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.tokens import tokens_from_rows
        >>> from levy_sklearn.regressor import LevyAttentionRegressor
        >>> X = np.random.default_rng(0).normal(size=(50, 3))
        >>> net = LevyAttentionRegressor(max_epochs=2, random_state=0).fit(X, X[:, 0]).net_
        >>> tokens = tokens_from_rows(X[:4])
        >>> y = np.full((4, 1), 10.0)  # far from every prediction: σ must grow
        >>> net.calibrate(tokens, y) > 1, net.variance_scale_ > 1
        (True, True)
        """
        return self.calibrate_chunks([(X, y)])

    def calibrate_chunks(
        self, chunks: Iterable[tuple[Mapping[str, np.ndarray], np.ndarray]]
    ) -> float:
        """:meth:`calibrate` on held-out rows given a chunk ``(X, y)`` at a time (chunks
        may be padded to different widths): memory holds one chunk's tokens.

        Parameters
        ----------
        chunks : iterable of (dict of array, ndarray)
            Token arrays and targets of the held-out rows, a chunk at a time.

        Returns
        -------
        float
            ``s²``, the new ``variance_scale_``.

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.tokens import tokens_from_rows
        >>> from levy_sklearn.regressor import LevyAttentionRegressor
        >>> X = np.random.default_rng(0).normal(size=(50, 3))
        >>> net = LevyAttentionRegressor(max_epochs=2, random_state=0).fit(X, X[:, 0]).net_
        >>> y = np.full((4, 1), 10.0)
        >>> whole = net.calibrate(tokens_from_rows(X[:4]), y)
        >>> parts = [(tokens_from_rows(X[i : i + 2]), y[i : i + 2]) for i in (0, 2)]
        >>> bool(np.isclose(net.calibrate_chunks(parts), whole))
        True
        """
        self.variance_scale_ = 1.0
        ratios = []
        for X, y in chunks:
            out = self.predict_moments(X)
            y = np.asarray(y, dtype=np.float64).reshape(out.mean.shape)
            ok = np.isfinite(y)
            ratios.append((y - out.mean)[ok] ** 2 / out.variance[ok])
        ratio = np.concatenate(ratios) if ratios else np.zeros(0)
        # Pooled over the processes of a data-parallel training (each holds its own rows).
        ratio_sum, count = total([ratio.sum(), ratio.size])
        self.variance_scale_ = float(ratio_sum / count) if count else 1.0
        return self.variance_scale_


def predict_in_chunks(
    net: LevyNeuralNet, chunks: Iterable[Mapping[str, np.ndarray]]
) -> LevyNetOutput:
    """:meth:`LevyNeuralNet.predict_moments` of every chunk of token arrays, concatenated.

    Token arrays take several values per observed cell: building them a chunk of rows at a
    time keeps the memory of a prediction to its outputs.

    Parameters
    ----------
    net : LevyNeuralNet
        A trained net.
    chunks : iterable of dict of array
        Token arrays, one dict per chunk of rows (e.g. a generator).

    Returns
    -------
    LevyNetOutput
        The outputs of every row, in order.

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.regressor import LevyAttentionRegressor
    >>> from levy_sklearn.tokens import tokens_from_rows
    >>> from levy_sklearn.training import predict_in_chunks
    >>> X = np.random.default_rng(0).normal(size=(50, 3))
    >>> net = LevyAttentionRegressor(max_epochs=2, random_state=0).fit(X, X[:, 0]).net_
    >>> out = predict_in_chunks(net, (tokens_from_rows(X[i : i + 20]) for i in range(0, 50, 20)))
    >>> whole = net.predict_moments(tokens_from_rows(X))
    >>> out.mean.shape, bool(np.allclose(out.mean, whole.mean))
    ((50, 1), True)
    """
    parts = [net.predict_moments(chunk) for chunk in chunks]
    return LevyNetOutput(*(np.concatenate(part) for part in zip(*parts, strict=True)))
