"""Data-parallel pretraining: two processes on this machine (gloo), as ``torchrun
--nproc_per_node 2`` launches them, against one process."""

import os
import pickle
import socket
import warnings

import numpy as np
import pytest
import torch
import torch.multiprocessing as mp
from conftest import TINY_FC

from levy_sklearn.datasets import make_irregular_vitals
from levy_sklearn.forecaster import LevyForecaster

# Early stopping on the validation loss of every process's rows together.
PARAMS = {
    **TINY_FC,
    "n_layers": 1,  # an encoder block: parameters outside the loss
    "max_epochs": 6,
    "validation_fraction": 0.2,
    "patience": 2,
    "calibration_folds": 1,
}


def panel(n_patients=10):
    return make_irregular_vitals(n_patients, n_channels=2, duration=24.0, random_state=0)


def pretrained(y, random_state=0, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # too few held-out forecasts to calibrate σ
        return LevyForecaster(**{**PARAMS, "random_state": random_state, **params}).pretrain(y)


def outcome(forecaster):
    net = forecaster.pretrained_net_
    return {
        "weights": {k: v.numpy().copy() for k, v in net.module_.state_dict().items()},
        "valid_loss": min(net.history[:, "valid_loss"]),
        "epochs": len(net.history),
        "rows": sum(net.history[0, "batches", :, "train_batch_size"]),  # trained on, epoch 1
        "steps": len(net.history[0, "batches", :, "train_batch_size"]),
        "calibration": pickle.dumps(forecaster.pretrained_calibration_),
    }


def unequal(y):
    """``y`` with its fourth patient cut to its last twentieth: folds of unequal windows."""
    patient = y.index.get_level_values(0).unique()[3]
    cut = y.loc[patient].index[: int(0.95 * len(y.loc[patient]))]
    return y.drop(cut.map(lambda t: (patient, t)))


def fold_steps(y, **params):
    """The optimizer steps of the first epoch of each network a pretrain trains."""
    import levy_sklearn._series_training as module

    fit, steps = module.fit_levy_net, []

    def spy(net, windows, targets, seed):
        net = fit(net, windows, targets, seed)
        steps.append(len(net.history[0, "batches"]))
        return net

    module.fit_levy_net = spy
    try:
        pretrained(y, **params)
    finally:
        module.fit_levy_net = fit
    return steps


def refused(y):
    try:
        pretrained(y)
    except ValueError as err:
        return str(err)
    return None


def run_rank(rank, world_size, port, out):
    """One process of a two-process launch, set up as torchrun sets it up."""
    os.environ.update(
        RANK=str(rank),
        WORLD_SIZE=str(world_size),
        LOCAL_RANK=str(rank),
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
    )
    torch.set_num_threads(1)
    y = panel()
    forecaster = pretrained(y)
    first = outcome(forecaster)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        forecaster.pretrain(y)  # continues training the pretrained network
    result = {
        "first": first,
        "further": outcome(forecaster),
        "again": outcome(pretrained(y)),
        # Five series: a held-out fold of one, which one process scores alone.
        "one_held_out": outcome(pretrained(panel(5))),
        # Each process's share is 2 steps an epoch: max_steps=1 draws one batch instead.
        "bounded": outcome(pretrained(y, max_steps=1)),
        # Two passes do not fit within max_steps: the fold networks grow, as long as the largest.
        "grown": fold_steps(unequal(y), calibration_folds=3, max_steps=8, batch_size=2),
        "too_few": refused(panel(1)),
        "different": refused(panel(10 + rank)),
    }
    with open(os.path.join(out, f"rank{rank}.pkl"), "wb") as file:
        pickle.dump(result, file)
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()


@pytest.fixture(scope="module")
def one_process():
    """One process's outcomes, seeds 0, 1 and 2."""
    return [outcome(pretrained(panel(), seed)) for seed in range(3)]


@pytest.fixture(scope="module")
def two_processes(one_process, tmp_path_factory):
    out = str(tmp_path_factory.mktemp("ddp"))
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    # Forked where the platform can: the processes start with this one's imports, in a
    # fraction of a second (one thread each, so no thread pool is forked mid-work).
    method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
    mp.start_processes(run_rank, args=(2, port, out), nprocs=2, start_method=method)
    ranks = []
    for rank in range(2):
        with open(os.path.join(out, f"rank{rank}.pkl"), "rb") as file:
            ranks.append(pickle.load(file))
    return ranks


def test_every_process_ends_with_the_same_network_and_calibration(two_processes):
    first, second = (rank["first"] for rank in two_processes)
    assert first["weights"].keys() == second["weights"].keys()
    for name, weight in first["weights"].items():
        np.testing.assert_array_equal(weight, second["weights"][name], err_msg=name)
    assert first["calibration"] == second["calibration"]
    assert first["valid_loss"] == second["valid_loss"]  # every process's rows together
    assert first["epochs"] == second["epochs"]


def test_a_process_without_held_out_series_calibrates_alike(two_processes):
    first, second = (rank["one_held_out"] for rank in two_processes)
    for name, weight in first["weights"].items():
        np.testing.assert_array_equal(weight, second["weights"][name], err_msg=name)
    assert first["calibration"] == second["calibration"]


def test_a_further_pretrain_continues_alike_on_every_process(two_processes):
    first, second = (rank["further"] for rank in two_processes)
    for name, weight in first["weights"].items():
        np.testing.assert_array_equal(weight, second["weights"][name], err_msg=name)
    assert first["calibration"] == second["calibration"]
    assert not all(
        np.array_equal(weight, two_processes[0]["first"]["weights"][name])
        for name, weight in first["weights"].items()
    )


def test_each_process_trains_on_its_share_in_as_many_steps(one_process, two_processes):
    """Each process steps through about half of the rows one process trains on, in as many
    steps as the other (its own rows: the weights above are the same only by averaging
    gradients)."""
    alone = one_process[0]["rows"]
    first, second = (rank["first"] for rank in two_processes)
    assert first["rows"] == second["rows"]
    assert 0.4 * alone <= first["rows"] <= 0.6 * alone


def test_max_steps_bounds_every_process_below_one_epoch(two_processes):
    for rank in two_processes:
        assert rank["first"]["steps"] == 2
        assert rank["bounded"]["steps"] == 1


def test_grown_fold_networks_step_alike_on_every_process(two_processes):
    """Where the fold networks grew, each steps as long as the largest, the pretrained one
    (no network on every series), though their shares of the rows differ."""
    for rank in two_processes:
        assert len(rank["grown"]) == 3
        assert len(set(rank["grown"])) == 1


def test_the_same_seed_and_processes_give_the_same_network(two_processes):
    for rank in two_processes:
        for name, weight in rank["first"]["weights"].items():
            np.testing.assert_array_equal(weight, rank["again"]["weights"][name], err_msg=name)


def test_two_processes_reach_the_validation_loss_of_one_within_its_seed_spread(
    one_process, two_processes
):
    losses = [seed["valid_loss"] for seed in one_process]
    spread = max(losses) - min(losses)
    two = two_processes[0]["first"]["valid_loss"]
    assert min(losses) - spread <= two <= max(losses) + spread, (two, losses)


def test_more_processes_than_series_is_refused_with_both_counts_and_the_fix(two_processes):
    for rank in two_processes:
        message = rank["too_few"]
        assert message is not None
        assert "runs 2 processes" in message and "has 1 series" in message
        assert "--nproc_per_node 1" in message


def test_processes_given_different_panels_are_refused(two_processes):
    for rank in two_processes:
        assert "10 series" in rank["different"] and "11 series" in rank["different"]
        assert "whole panel" in rank["different"]
