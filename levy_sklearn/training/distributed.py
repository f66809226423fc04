"""Data-parallel training: each process trains on its own share of the series, torch DDP
averages the gradients, and every process ends with the same network.

A script launched on several processes, ::

    torchrun --nproc_per_node 2 pretrain.py                    # 2 processes, this machine
    accelerate launch --num_processes 2 pretrain.py            # the same through Accelerate
    torchrun --nnodes 4 --nproc_per_node 8 --rdzv-endpoint host:29500 pretrain.py  # 4 machines

pretrains data-parallel (:func:`current_launch` reads the launch from the environment that
``torchrun`` and ``accelerate launch`` set, or takes a process group the script started
itself): the processes talk over gloo on CPUs and NCCL on GPUs, each on its own GPU
(``LOCAL_RANK``). Every process is given the whole panel and takes its own share of the
series of each training (:func:`own_share`), so that it cuts only their windows.

Why torch DDP and not skorch's ``AccelerateMixin``: Accelerate's prepared data loader deals
one dataset, the same on every process, out batch by batch, and its evaluation step gathers
the predictions of every process; here each process holds the windows of its own series only
(their memory is what data-parallel pretraining divides) and forecasts its own held-out
windows, which :func:`gather` collects. What Accelerate would add beyond that, the process
group and the DDP wrapper, takes a few lines here (:func:`current_launch`,
:class:`DataParallel`), and the fitted net holds no ``Accelerator``, which cannot be pickled.
"""

from __future__ import annotations

import inspect
import math
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.distributed as dist
from skorch.callbacks import Callback
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Dataset, Sampler

__all__ = [
    "DataParallel",
    "Launch",
    "current_launch",
    "data_parallel",
    "gather",
    "local_device",
    "own_share",
    "rows_per_process",
    "total",
]


@dataclass(frozen=True)
class Launch:
    """The processes a data-parallel training runs on, and which of them this one is.

    Parameters
    ----------
    rank : int
        This process, ``0 … world_size - 1``.
    world_size : int
        How many processes train together (at least 2).
    local_rank : int
        This process on its machine (its GPU's index).
    """

    rank: int
    world_size: int
    local_rank: int = 0


# The processes' validation steps differ in number: a forward pass must not wait for the
# others to share the network's buffers (constants, the same everywhere from the start).
_NO_FORWARD_SYNC = (
    {"forward_sync_buffers": False}
    if "forward_sync_buffers" in inspect.signature(DistributedDataParallel).parameters
    else {"broadcast_buffers": False}
)

_ACTIVE: ContextVar[Launch | None] = ContextVar("levy_sklearn_data_parallel", default=None)


def current_launch() -> Launch | None:
    """The data-parallel launch this process is part of; ``None`` for a single process.

    A process is part of one when torch's default process group is started (by the script,
    e.g. under Spark's ``TorchDistributor``) with more than one process, or when the
    environment says so (``WORLD_SIZE > 1``, set by ``torchrun`` and ``accelerate launch``
    with ``RANK``, ``MASTER_ADDR`` and ``MASTER_PORT``): the process group is then started
    here, gloo for tensors on the CPU and NCCL for tensors on a GPU.

    Returns
    -------
    Launch or None

    Examples
    --------
    >>> from levy_sklearn.training.distributed import current_launch
    >>> current_launch() is None  # one process: no launch
    True
    """
    if not dist.is_available():
        return None
    if not dist.is_initialized():
        if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
            return None
        dist.init_process_group("cpu:gloo,cuda:nccl" if torch.cuda.is_available() else "gloo")
    if dist.get_world_size() <= 1:
        return None
    return Launch(dist.get_rank(), dist.get_world_size(), int(os.environ.get("LOCAL_RANK", 0)))


@contextmanager
def data_parallel(launch: Launch | None) -> Iterator[None]:
    """Train data-parallel on ``launch``'s processes inside the block (``None``: one process).

    Only the trainings inside the block are data-parallel (pretraining's): a ``fit`` of one
    series after ``pretrain`` trains on each process alone.

    Parameters
    ----------
    launch : Launch or None

    Yields
    ------
    None
    """
    token = _ACTIVE.set(launch)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def active() -> Launch | None:
    """The launch of the enclosing :func:`data_parallel` block (``None``: one process)."""
    return _ACTIVE.get()


def total(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """``values`` summed over the processes of the active launch (float64; themselves when
    there is none).

    Examples
    --------
    >>> from levy_sklearn.training.distributed import total
    >>> total([2, 3.5]).tolist()
    [2.0, 3.5]
    """
    summed = torch.as_tensor(np.asarray(values, dtype=np.float64))
    if active() is not None:
        # A process group the script started with NCCL alone reduces GPU tensors only.
        device = "cuda" if dist.get_backend() == "nccl" else "cpu"
        summed = summed.to(device)
        dist.all_reduce(summed)
    return summed.cpu().numpy()


def rows_per_process(n_rows: int) -> int:
    """The rows of every process of the active launch together, divided among them: the
    rows one process steps through in an epoch (``n_rows`` when there is no launch).

    Examples
    --------
    >>> from levy_sklearn.training.distributed import rows_per_process
    >>> rows_per_process(1000)
    1000
    """
    launch = active()
    if launch is None:
        return n_rows
    return math.ceil(total([n_rows])[0] / launch.world_size)


def gather(obj: Any) -> list[Any]:
    """``obj`` of every process of the active launch, by rank (``[obj]`` when there is none).

    Examples
    --------
    >>> from levy_sklearn.training.distributed import gather
    >>> gather({"n": 3})
    [{'n': 3}]
    """
    launch = active()
    if launch is None:
        return [obj]
    gathered: list[Any] = [None] * launch.world_size
    dist.all_gather_object(gathered, obj)
    return gathered


def own_share(series: np.ndarray, n_panel: int, training: bool = True) -> np.ndarray:
    """This process's share of ``series`` (indices into a panel of ``n_panel`` series): the
    ``rank``-th of every ``world_size`` of them, all of them without an active launch.

    Parameters
    ----------
    series : ndarray of int
        The series of one training (or one held-out fold), in the panel's order.
    n_panel : int
        The panel's size, for the error message.
    training : bool, default=True
        Whether every process must get a series (training) or may get none (held-out
        forecasts, gathered across the processes).

    Returns
    -------
    ndarray of int

    Raises
    ------
    ValueError
        When a training has fewer series than processes, naming both counts and the fix.

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.training.distributed import own_share
    >>> own_share(np.arange(5), 5).tolist()
    [0, 1, 2, 3, 4]
    """
    launch = active()
    if launch is None:
        return series
    if training and len(series) < launch.world_size:
        raise ValueError(
            f"Data-parallel pretraining runs {launch.world_size} processes, each training on "
            f"series of its own, but a training here has {len(series)} series (the panel has "
            f"{n_panel}, of which pretrain may hold some out to calibrate σ). Launch at most "
            f"{max(len(series), 1)} processes (torchrun --nproc_per_node "
            f"{max(len(series), 1)}), or pretrain on more series."
        )
    return series[launch.rank :: launch.world_size]


def local_device(device: str) -> str:
    """``device`` for this process of the active launch: each process on a machine gets its
    own GPU (``"cuda"`` becomes ``"cuda:<LOCAL_RANK>"``); anything else is kept.

    Examples
    --------
    >>> from levy_sklearn.training.distributed import local_device
    >>> local_device("cpu")
    'cpu'
    """
    launch = active()
    if launch is None or device != "cuda":
        return device
    torch.cuda.set_device(launch.local_rank)
    return f"cuda:{launch.local_rank}"


class _EqualSteps(Sampler[list[int]]):
    """Batches of ``batch_size`` row indices of ``n_rows``, ``n_batches`` of them an epoch:
    each pass a fresh permutation (torch's generator), repeated where the rows run out."""

    def __init__(self, n_rows: int, batch_size: int, n_batches: int) -> None:
        self.n_rows, self.batch_size, self.n_batches = n_rows, batch_size, n_batches

    def __len__(self) -> int:
        return self.n_batches

    def __iter__(self) -> Iterator[list[int]]:
        need = self.n_batches * self.batch_size
        passes = [torch.randperm(self.n_rows) for _ in range(math.ceil(need / self.n_rows))]
        yield from torch.cat(passes)[:need].view(self.n_batches, self.batch_size).tolist()


def equal_steps_loader(
    dataset: Dataset,
    batch_size: int,
    rows: int | None = None,
    shuffle: bool = True,
    **kwargs: Any,
) -> DataLoader:
    """The training loader of one process of the active launch (skorch's ``iterator_train``
    while :class:`DataParallel` trains): ``batch_size`` rows a step on every process, drawn
    in random order from its own rows (``shuffle`` is therefore always on), and the same
    number of steps on every process, however many rows each holds (a process short of
    steps would wait forever for the others' gradients): an epoch steps through as many
    rows as all the processes hold, or ``rows`` on each process where given (fewer: the
    training budget's bound below one epoch; more: as long as a fit on more rows, see
    :func:`~levy_sklearn.training.epoch_loader`).

    ``batch_size`` is each process's: a step of ``W`` processes learns from ``W`` times as
    many rows, in about the time one process takes for one batch (a step has a cost of its
    own, whatever its rows: splitting one batch among the processes would save less)."""
    launch = active()
    counts = gather(len(dataset))  # type: ignore[arg-type]
    if not min(counts):
        raise ValueError(
            f"Data-parallel training on {launch.world_size} processes: process(es) "
            f"{[rank for rank, n in enumerate(counts) if not n]} have no training window of "
            f"their own ({counts} windows by process). Launch fewer processes, or pretrain "
            "on longer series."
        )
    per_process = math.ceil(sum(counts) / launch.world_size)
    if rows is not None:
        per_process = rows
    batch = min(batch_size, per_process)
    sampler = _EqualSteps(counts[launch.rank], batch, math.ceil(per_process / batch))
    return DataLoader(dataset, batch_sampler=sampler, **kwargs)


class DataParallel(Callback):
    """skorch callback: train data-parallel inside a :func:`data_parallel` block, do nothing
    outside one.

    While the net trains, each epoch's training steps run through torch's
    ``DistributedDataParallel`` (gradients averaged over the processes after every
    backward pass), the training loader takes the same number of steps on every process
    (:func:`equal_steps_loader`), and the epoch's training and validation losses are those
    of every process's rows together, so that early stopping, the best epoch and the
    learning-rate schedule decide alike everywhere. Dropout draws differ between the
    processes (the seed of each is the fit's seed and its rank); the initial weights are
    the same.

    Placed before every callback that reads the epoch's losses (``EarlyStopping``).
    """

    def on_train_begin(self, net, X=None, y=None, **kwargs):
        launch = active()
        if launch is None:
            return
        self.iterator_train_ = net.iterator_train
        net.iterator_train = equal_steps_loader
        # From the fit's seeded stream: reproducible, and different on every process.
        torch.manual_seed(int(torch.randint(2**62, ())) + launch.rank)

    def on_epoch_begin(self, net, **kwargs):
        if active() is None:
            return
        # Wrapped for one epoch's steps only: the callbacks that copy the weights at the
        # epoch's end (EarlyStopping's best ones) see the network's own parameter names.
        device = next(net.module_.parameters()).device
        net.module_ = DistributedDataParallel(
            net.module_,
            device_ids=[device.index] if device.type == "cuda" else None,
            # Some parameters take no part in the loss (the encoder's variance path: only
            # its means feed the next layer): their gradients stay unset, as in one process.
            find_unused_parameters=True,
            **_NO_FORWARD_SYNC,
        )

    def on_epoch_end(self, net, **kwargs):
        if active() is None:
            return
        _unwrap(net)
        history = net.history
        sums = []
        for part in ("train", "valid"):
            batches = [b for b in history[-1, "batches"] if f"{part}_loss" in b]
            sizes = np.array([b[f"{part}_batch_size"] for b in batches], dtype=np.float64)
            losses = np.array([b[f"{part}_loss"] for b in batches], dtype=np.float64)
            sums += [float(sizes @ losses), float(sizes.sum())]
        train_sum, n_train, valid_sum, n_valid = total(sums)
        history.record("train_loss", train_sum / n_train)
        if n_valid > 0:
            earlier = [row["valid_loss"] for row in history[:-1] if "valid_loss" in row]
            history.record("valid_loss", valid_sum / n_valid)
            history.record(
                "valid_loss_best", bool(valid_sum / n_valid < min(earlier, default=np.inf))
            )

    def on_train_end(self, net, X=None, y=None, **kwargs):
        _unwrap(net)
        loader = getattr(self, "iterator_train_", None)
        if loader is not None:
            net.iterator_train = loader
            del self.iterator_train_


def _unwrap(net) -> None:
    if isinstance(net.module_, DistributedDataParallel):
        net.module_ = net.module_.module
