"""Seeding torch for one block without touching the caller's random stream."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import torch

__all__ = ["seeded"]

# Re-entrant: predict_moments (seeded) may run inside a seeded training block.
_RNG_LOCK = threading.RLock()


@contextmanager
def seeded(random_state: int | None) -> Iterator[None]:
    """Run a block under a fixed torch seed without disturbing the caller's global RNG.

    torch's generator is global to the process, so the block holds a process-wide lock:
    fits running in threads of one process (joblib's threading backend, a Dask cluster with
    ``processes=False``) take turns instead of drawing from each other's streams, and stay
    reproducible.

    Parameters
    ----------
    random_state : int or None
        Seed of torch's CPU generator inside the block; ``None`` leaves it as it is (the
        block's draws are still undone on exit).

    Yields
    ------
    None

    Examples
    --------
    >>> import torch
    >>> from levy_sklearn.training import seeded
    >>> before = torch.random.get_rng_state()
    >>> with seeded(0):
    ...     a = torch.rand(2)
    >>> with seeded(0):
    ...     b = torch.rand(2)
    >>> bool(torch.equal(a, b)), bool(torch.equal(torch.random.get_rng_state(), before))
    (True, True)
    """
    with _RNG_LOCK, torch.random.fork_rng(devices=[]):
        if random_state is not None:
            torch.manual_seed(random_state)
        yield
