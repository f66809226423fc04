"""The learning-rate schedule: a cosine cycle per training call."""

from __future__ import annotations

from skorch.callbacks import LRScheduler

__all__ = ["BaseLRScheduler"]


class BaseLRScheduler(LRScheduler):
    """skorch's ``LRScheduler`` with a cycle per training call, recording the base rate.

    skorch continues the first call's schedule from the epochs in the history, so a later
    call (a warm start, a pretraining update) would run at the rates the first cycle ended
    on: 0 for a cosine cycle, and a warm start would change nothing. Here every call starts
    its own cycle from each group's base rate over the epochs it plans (``T_max``); a first
    fit is scheduled as skorch schedules it. skorch records the rate of the *first*
    parameter group, which is the first custom group of ``optimizer__param_groups`` (the
    front-ends give the Lévy layers' log-scale scalars a larger rate there), so ``verbose``
    would print a multiple of ``lr``; skorch puts the group of every other parameter last,
    and that one is recorded.

    Examples
    --------
    >>> from levy_sklearn.training import BaseLRScheduler
    >>> BaseLRScheduler("CosineAnnealingLR", T_max=10).event_name
    'event_lr'
    """

    def _get_scheduler(self, net, policy, **scheduler_kwargs):
        for group in net.optimizer_.param_groups:
            group["lr"] = group.setdefault("initial_lr", group["lr"])
        if "T_max" in scheduler_kwargs:
            planned = getattr(net, "_planned_epochs", scheduler_kwargs["T_max"])
            scheduler_kwargs["T_max"] = max(int(planned), 1)
        return policy(net.optimizer_, **{**scheduler_kwargs, "last_epoch": -1})

    def _record_last_lr(self, net, kind):
        if self.event_name is None or not hasattr(self.lr_scheduler_, "get_last_lr"):
            return
        lr = self.lr_scheduler_.get_last_lr()[-1]
        if kind == "epoch":
            net.history.record(self.event_name, lr)
        else:
            net.history.record_batch(self.event_name, lr)
