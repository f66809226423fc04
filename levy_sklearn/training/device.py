"""The torch device a fit runs on, and what torch offers there."""

from __future__ import annotations

import torch

__all__ = ["check_device", "has_fused_adamw"]

_TORCH_VERSION = tuple(int(part) for part in torch.__version__.split(".")[:2])


def check_device(device: str | torch.device) -> str:
    """Resolve the ``device`` hyperparameter to a torch device string, or say how to fix it.

    ``"auto"`` picks ``"cuda"`` when a GPU is visible and ``"cpu"`` otherwise; ``"cpu"``,
    ``"cuda"``, ``"cuda:<index>"`` and ``"mps"`` (Apple GPUs) pass through when available.

    Parameters
    ----------
    device : str or torch.device
        The requested device.

    Returns
    -------
    str
        A device string skorch and torch accept.

    Raises
    ------
    ValueError
        For a string torch cannot read, another kind of device, or a GPU that is not there.

    Examples
    --------
    >>> from levy_sklearn.training import check_device
    >>> check_device("cpu")
    'cpu'
    >>> check_device("auto") in ("cpu", "cuda")
    True
    """
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    fix = "use 'cpu', 'cuda', 'cuda:<index>', 'mps' or 'auto' (CUDA when available, else CPU)"
    try:
        kind = torch.device(device).type
    except (RuntimeError, TypeError) as err:
        raise ValueError(f"device={device!r} is not a device torch knows; {fix}.") from err
    available = {
        "cpu": True,
        "cuda": torch.cuda.is_available(),
        "mps": torch.backends.mps.is_available(),
    }
    if kind not in available:
        raise ValueError(f"device={device!r} is not supported; {fix}.")
    if not available[kind]:
        raise ValueError(
            f"device={device!r} was requested but torch sees no {kind.upper()} device (torch "
            f"{torch.__version__}); use device='cpu', or 'auto' to take a GPU only when "
            "there is one."
        )
    return str(device)


def has_fused_adamw(device: str) -> bool:
    """Whether torch has a fused AdamW for ``device`` (CUDA, and the CPU from torch 2.4)."""
    kind = torch.device(device).type
    return kind == "cuda" or (kind == "cpu" and _TORCH_VERSION >= (2, 4))
