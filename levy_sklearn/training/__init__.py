"""The skorch layer shared by both front-ends: losses, the NeuralNet subclass, seeding.

skorch owns the training loop, validation split, early stopping, LR schedule and device
handling; this package only teaches it that LevyNet returns ``(mean, variance, …)`` and how
to score that with a proper scoring rule. One module a concept:

- ``losses``: the proper scoring rules (:class:`GaussianScore`);
- ``data``: how the loader fetches a batch of token arrays (:class:`TokenDataset`, or
  :class:`BatchDataset` where they are made per batch) and how many rows an epoch draws
  (:func:`epoch_loader`);
- ``schedule``: the learning-rate cycle of each training call (:class:`BaseLRScheduler`);
- ``progress``: what ``verbose > 0`` shows (:class:`FitProgressBar`, :func:`progress_label`);
- ``net``: the skorch net and its inference (:class:`LevyNeuralNet`);
- ``device``: the torch device (:func:`check_device`);
- ``seeding``: torch's seed for one block (:func:`seeded`);
- ``distributed``: data-parallel pretraining on several processes (torch DDP, launched by
  ``torchrun`` or ``accelerate launch``; the :class:`~levy_sklearn.training.distributed.
  DataParallel` callback);
- ``budget``: epochs, batch size and learning rate of a fit (:func:`training_budget`);
- ``specs``: what a front-end resolves for the net (:class:`NetworkSpec`,
  :class:`TrainingSpec`);
- ``fitting``: building the net and training it (:func:`make_levy_net`,
  :func:`fit_levy_net`).

Every name is imported from here (``from levy_sklearn.training import LevyNeuralNet``).
"""

from __future__ import annotations

# Plumbing outside __all__ is re-exported (``name as name``) for its import path.
from .budget import LARGE_DATA_BATCH_GROWTH as LARGE_DATA_BATCH_GROWTH
from .budget import LARGE_DATA_LR_GROWTH as LARGE_DATA_LR_GROWTH
from .budget import Budget as Budget
from .budget import training_budget as training_budget
from .data import SAMPLE_WEIGHT as SAMPLE_WEIGHT
from .data import BatchDataset as BatchDataset
from .data import TokenDataset as TokenDataset
from .data import epoch_loader as epoch_loader
from .device import check_device as check_device
from .fitting import continue_levy_net as continue_levy_net
from .fitting import fit_levy_net, make_levy_net
from .losses import LOSSES as LOSSES
from .losses import GaussianScore
from .losses import gaussian_crps_torch as gaussian_crps_torch
from .net import LevyNeuralNet
from .net import predict_in_chunks as predict_in_chunks
from .progress import EpochTable as EpochTable
from .progress import FitProgressBar, progress_label
from .schedule import BaseLRScheduler as BaseLRScheduler
from .seeding import seeded as seeded
from .specs import RECIPES as RECIPES
from .specs import NetworkSpec, TrainingSpec

# What a user calls: the skorch net for a LevyNet of one's own (built from the two specs, as
# the FAQ's multi-GPU recipe does), its loss and the progress output of verbose=1. The rest
# is the front-ends' shared plumbing, importable but not promised.
__all__ = [
    "FitProgressBar",
    "GaussianScore",
    "LevyNeuralNet",
    "NetworkSpec",
    "TrainingSpec",
    "fit_levy_net",
    "make_levy_net",
    "progress_label",
]
