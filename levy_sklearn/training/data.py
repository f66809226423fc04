"""How skorch's data loader fetches the token arrays of a batch: indexed in arrays held
whole (:class:`TokenDataset`) or made when the batch is drawn (:class:`BatchDataset`), and
how many rows an epoch draws (:func:`epoch_loader`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from skorch.dataset import Dataset
from torch.utils.data import DataLoader, RandomSampler

__all__ = ["SAMPLE_WEIGHT", "BatchDataset", "TokenDataset", "epoch_loader"]

#: Key of the optional per-row weights in a token dict (see :class:`LevyNeuralNet`).
SAMPLE_WEIGHT = "sample_weight"


class TokenDataset(Dataset):
    """skorch's ``Dataset``, fetched a whole batch at a time.

    torch's ``DataLoader`` asks a dataset with ``__getitems__`` for all the rows of a batch
    at once; indexing the token arrays with the batch's row indices takes a handful of
    numpy slices, where fetching every row and stacking them again takes a fifth of a small
    step. Paired with ``collate_fn=default_convert`` (which only turns the arrays into
    tensors), the loader yields the batches skorch's row-by-row ``Dataset`` would: the same
    rows, in the same order (the sampler and its random draws are torch's own), with the
    same values.

    Examples
    --------
    >>> import numpy as np
    >>> from torch.utils.data import DataLoader, default_convert
    >>> from levy_sklearn.training import TokenDataset
    >>> data = TokenDataset({"values": np.arange(10.0).reshape(5, 2)}, np.arange(5.0))
    >>> loader = DataLoader(data, batch_size=2, collate_fn=default_convert)
    >>> [y.tolist() for _, y in loader]
    [[0.0, 1.0], [2.0, 3.0], [4.0]]
    """

    def __getitems__(self, indices: list[int]) -> tuple[Any, Any]:
        return self[np.asarray(indices, dtype=np.int64)]


class BatchDataset(torch.utils.data.Dataset):
    """Rows made when a batch asks for them: ``make(rows)`` returns the token arrays and
    targets of those rows, in their order (e.g. windows cut from series,
    :meth:`~levy_sklearn.windows.WindowSource.batch`), so memory holds a batch at a time.

    Fetched a whole batch at a time, as :class:`TokenDataset` is; skorch's ``ValidSplit``
    splits it by row as it splits arrays.

    Parameters
    ----------
    n_rows : int
        How many rows there are.
    make : callable
        ``make(rows) -> (tokens, targets)`` for an integer array of rows.

    Examples
    --------
    >>> import numpy as np
    >>> from torch.utils.data import DataLoader, default_convert
    >>> from levy_sklearn.training import BatchDataset
    >>> def make(rows):
    ...     return {"values": rows[:, None] * np.ones((1, 2))}, rows.astype(float)
    >>> loader = DataLoader(BatchDataset(5, make), batch_size=2, collate_fn=default_convert)
    >>> [y.tolist() for _, y in loader]
    [[0.0, 1.0], [2.0, 3.0], [4.0]]
    """

    def __init__(self, n_rows: int, make: Callable[[np.ndarray], tuple[Any, Any]]) -> None:
        self.n_rows = int(n_rows)
        self.make = make

    def __len__(self) -> int:
        return self.n_rows

    def __getitems__(self, indices: list[int]) -> tuple[Any, Any]:
        return self.make(np.asarray(indices, dtype=np.int64))

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        tokens, targets = self.make(np.array([index], dtype=np.int64))
        return {key: value[0] for key, value in tokens.items()}, targets[0]


class _FewerRows(RandomSampler):
    """torch's ``RandomSampler`` drawing ``num_samples`` rows, fewer than the data's,
    without replacement: the same rows in the same order from the same random state, but
    only those rows become Python integers. torch's own turns a permutation of every row
    into a list first (36 bytes a row: 100 MiB before the first step of three million
    windows)."""

    def __iter__(self):
        if self.generator is None:  # seeded from torch's global random state, as torch's
            generator = torch.Generator()
            generator.manual_seed(int(torch.empty((), dtype=torch.int64).random_().item()))
        else:
            generator = self.generator
        n = len(self.data_source)
        yield from torch.randperm(n, generator=generator)[: self.num_samples].tolist()


def epoch_loader(dataset: Any, rows: int | None = None, shuffle: bool = False, **kwargs: Any):
    """skorch's training loader: every row once an epoch (shuffled as torch shuffles), or
    ``rows`` rows an epoch, from torch's global random state as shuffling draws: below the
    data's, that many drawn without replacement (training bounded below one epoch); above
    it, every row once and then a share of them again (a network trained as long as one on
    more rows, see :func:`training_budget`).

    Parameters
    ----------
    dataset : torch Dataset
    rows : int, optional
        Rows an epoch draws; ``None``: every row.
    shuffle : bool, default=False
        As torch's ``DataLoader``'s.
    **kwargs
        Passed to torch's ``DataLoader``.

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.training import TokenDataset, epoch_loader
    >>> data = TokenDataset({"values": np.zeros((100, 2))}, np.arange(100.0))
    >>> len(epoch_loader(data, rows=30, shuffle=True, batch_size=8))  # 30 rows: 4 steps
    4
    >>> len(epoch_loader(data, rows=150, shuffle=True, batch_size=50))  # 150 rows: 3 steps
    3
    """
    n = len(dataset)
    if rows is None or rows == n:
        return DataLoader(dataset, shuffle=shuffle, **kwargs)
    rows = int(rows)
    if rows > n:  # torch's sampler draws whole permutations, then part of one
        sampler = RandomSampler(dataset, num_samples=rows) if shuffle else np.arange(rows) % n
    else:
        sampler = _FewerRows(dataset, num_samples=rows) if shuffle else range(rows)
    return DataLoader(dataset, sampler=sampler, **kwargs)
