"""How skorch's data loader fetches the token arrays of a batch."""

from __future__ import annotations

from typing import Any

import numpy as np
from skorch.dataset import Dataset

__all__ = ["SAMPLE_WEIGHT", "TokenDataset"]

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
