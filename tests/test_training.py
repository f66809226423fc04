"""The skorch layer: seeding, NaN targets, σ calibration, float64 inference."""

import io
import itertools
import math
import pickle
import re
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import TINY_FC, TINY_REG

from levy_sklearn import training
from levy_sklearn.forecaster import LevyForecaster
from levy_sklearn.regressor import LevyAttentionRegressor
from levy_sklearn.tokens import take_tokens, tokens_from_events, tokens_from_rows
from levy_sklearn.training import (
    BatchDataset,
    GaussianScore,
    NetworkSpec,
    TokenDataset,
    TrainingSpec,
    continue_levy_net,
    epoch_loader,
    fit_levy_net,
    make_levy_net,
    seeded,
)

NETWORK = NetworkSpec(
    n_channels=3, n_targets=1, d_model=8, n_heads=2, n_windowed_heads=0, n_layers=1,
    attention="levy", dropout=0.0,
)  # fmt: skip
TRAINING = TrainingSpec(
    loss="crps", lr=1e-2, weight_decay=0.0, epochs=5, batch_size=32, validation_fraction=0.2,
    patience=None, device="cpu", seed=0, verbose=0,
)  # fmt: skip


def data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (X @ np.array([1.0, -0.5, 0.2]) + 0.1 * rng.normal(size=n))[:, None]
    return tokens_from_rows(X), y.astype(np.float32)


def build(loss="crps", validation_fraction=0.2, random_state=0, verbose=0):
    return make_levy_net(
        NETWORK,
        replace(
            TRAINING,
            loss=loss,
            validation_fraction=validation_fraction,
            seed=random_state,
            verbose=verbose,
        ),
    )


def test_same_seed_same_predictions_and_global_rng_untouched():
    X, y = data()
    torch.manual_seed(123)
    before = torch.rand(1)
    torch.manual_seed(123)
    a = fit_levy_net(build(), X, y, 0).predict_moments(X)
    assert torch.equal(torch.rand(1), before)  # training did not consume the caller's RNG
    b = fit_levy_net(build(), X, y, 0).predict_moments(X)
    c = fit_levy_net(build(random_state=1), X, y, 1).predict_moments(X)
    np.testing.assert_array_equal(a.mean, b.mean)
    np.testing.assert_array_equal(a.variance, b.variance)
    assert not np.array_equal(a.mean, c.mean)


def test_inference_is_float64_and_batch_independent():
    X, y = data()
    net = fit_levy_net(build(), X, y, 0)
    assert net.predict_moments(X).mean.dtype == np.float64
    assert next(net.module_.parameters()).dtype == torch.float64
    full = net.predict_moments(X).mean
    part = net.predict_moments(take_tokens(X, np.arange(7))).mean
    np.testing.assert_allclose(part, full[:7], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shuffle", [False, True])
def test_batchwise_fetching_gives_the_row_wise_loaders_batches(shuffle):
    # The reference: torch's default loader over skorch's own Dataset, which fetches row by
    # row and stacks; same seed, so the same shuffled order must come out, bit for bit.
    from skorch.dataset import Dataset
    from torch.utils.data import DataLoader, Subset, default_convert

    tokens, y = data(n=23)
    rows = np.arange(2, 21)  # a Subset, as skorch's validation split makes
    with seeded(0):
        rowwise = DataLoader(Subset(Dataset(tokens, y), rows), batch_size=5, shuffle=shuffle)
        expected = list(rowwise)
    with seeded(0):
        batchwise = DataLoader(
            Subset(TokenDataset(tokens, y), rows),
            batch_size=5,
            shuffle=shuffle,
            collate_fn=default_convert,
        )
        got = list(batchwise)
    assert len(got) == len(expected) == 4
    for (x_got, y_got), (x_exp, y_exp) in zip(got, expected, strict=True):
        assert torch.equal(y_got, y_exp)
        assert x_got.keys() == x_exp.keys()
        for key in x_exp:
            assert x_got[key].dtype == x_exp[key].dtype
            assert torch.equal(x_got[key], x_exp[key])


def test_fewer_rows_than_the_data_are_torchs_rows_without_a_list_of_every_row():
    # The reference is torch's own RandomSampler drawing as many rows: the same rows in the
    # same order from the same seed, while only the rows drawn become Python integers
    # (torch's lists all 10**6 first: about 40 MB).
    import tracemalloc

    from torch.utils.data import DataLoader, RandomSampler, default_convert

    n, rows = 10**6, 70
    dataset = BatchDataset(n, lambda r: ({"values": r[:, None] * 1.0}, r * 1.0))
    kwargs = {"batch_size": 32, "collate_fn": default_convert}
    with seeded(0):
        sampler = RandomSampler(dataset, num_samples=rows)
        expected = [y.tolist() for _, y in DataLoader(dataset, sampler=sampler, **kwargs)]
    with seeded(0):
        tracemalloc.start()
        try:
            got = [y.tolist() for _, y in epoch_loader(dataset, rows, shuffle=True, **kwargs)]
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert [len(y) for y in got] == [32, 32, 6]
    assert got == expected
    assert peak < 4e6


def test_mse_loss_calibrates_variance_on_validation_split():
    X, y = data(200)
    net = fit_levy_net(build("mse"), X, y, 0)
    _, valid = net.get_split_datasets(X, y)
    out = net.predict_moments(take_tokens(X, valid.indices))
    # After calibration the standardised squared errors average to exactly 1 there.
    z2 = (y[valid.indices] - out.mean) ** 2 / out.variance
    assert z2.mean() == pytest.approx(1.0, rel=1e-9)
    assert net.variance_scale_ != 1.0


def test_nan_targets_are_ignored_by_the_loss():
    score = GaussianScore("crps")
    mean = torch.zeros(2, 3)
    var = torch.ones(2, 3)
    y = torch.tensor([[1.0, np.nan, 0.0], [np.nan, np.nan, 2.0]])
    direct = GaussianScore("crps")(mean[~torch.isnan(y)], var[~torch.isnan(y)], y[~torch.isnan(y)])
    assert score(mean, var, y).item() == pytest.approx(direct.item())


def test_unknown_loss_is_rejected():
    with pytest.raises(ValueError, match="loss="):
        GaussianScore("mae")


def test_seeded_restores_global_state():
    torch.manual_seed(5)
    expected = torch.rand(3)
    torch.manual_seed(5)
    with seeded(0):
        torch.rand(10)
    assert torch.equal(torch.rand(3), expected)


def test_tokens_from_rows_marks_nan_absent_and_uses_feature_times():
    X = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan]])
    tok = tokens_from_rows(X, n_targets=2, feature_times=[-2.0, -1.0, 0.0])
    assert tok["mask"].tolist() == [[True, False, True], [False, False, False]]
    assert np.isfinite(tok["values"]).all()
    assert tok["times"][0].tolist() == [-2.0, -1.0, 0.0]
    assert tok["query_channels"].tolist() == [[0, 1], [0, 1]]


def test_tokens_from_events_pads_and_keeps_latest():
    events = [
        (
            np.array([0.0, 1.0, 2.0, 3.0]),
            np.array([0, 1, 0, 1]),
            np.array([1.0, 2.0, np.nan, 4.0]),
        ),
        (np.array([5.0]), np.array([1]), np.array([7.0])),
    ]
    tok = tokens_from_events(events, np.zeros((2, 1)), np.zeros((2, 1), int), max_tokens=2)
    # NaN dropped first, then the two latest of the remaining three are kept.
    assert sorted(tok["times"][0][tok["mask"][0]].tolist()) == [1.0, 3.0]
    assert tok["mask"].sum(1).tolist() == [2, 1]


def test_sampled_predictions_agree_with_closed_form():
    X, y = data()
    net = fit_levy_net(build(), X, y, 0)
    out = net.predict_moments(X)
    draws = net.predict_samples(X, n_samples=4000, random_state=0)
    assert draws.shape == (4000, 120, 1)
    # Same layer, same moments: MC mean and variance match within Monte Carlo error.
    se = draws.std(0) / np.sqrt(4000)
    assert (np.abs(draws.mean(0) - out.mean) <= 5 * se + 1e-9).all()
    floor = 1e-6
    np.testing.assert_allclose(draws.var(0), out.variance - floor, rtol=0.15, atol=1e-6)
    again = net.predict_samples(X, n_samples=4000, random_state=0)
    np.testing.assert_array_equal(draws, again)


def test_mc_dropout_samples_need_dropout():
    X, y = data()
    net = fit_levy_net(build(), X, y, 0)
    with pytest.raises(ValueError, match="dropout > 0"):
        net.predict_samples(X, 3, method="mc_dropout")
    twin = make_levy_net(
        replace(NETWORK, attention="softmax", dropout=0.2),
        replace(TRAINING, validation_fraction=0.0),
    )
    fit_levy_net(twin, X, y, 0)
    draws = twin.predict_samples(X, 5, method="mc_dropout", random_state=0)
    assert draws.shape == (5, 120, 1)
    assert (draws.std(0) > 0).all()
    assert not twin.module_.training


# ---------------------------------------------------------------- progress (verbose)


def test_verbose_zero_prints_nothing(capsys):
    X, y = data()
    fit_levy_net(build(), X, y, 0)
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""


def test_verbose_shows_one_bar_with_epochs_and_time_left(capsys):
    X, y = data()
    net = build(verbose=1)
    fit_levy_net(net, X, y, 0)
    out = capsys.readouterr()
    # 96 training rows (3 batches of 32) + 24 validation rows (1 batch), 5 epochs.
    assert "20/20" in out.err and "epoch=5/5" in out.err and "train_loss=" in out.err
    assert re.search(r"\[\d\d:\d\d<\d\d:\d\d", out.err)  # [elapsed<time left
    assert "train_loss" in out.out and "valid_loss" in out.out  # skorch's table on stdout
    # Continued training counts the epochs of that call, at the net's verbose or a new one.
    continue_levy_net(net, X, y, 0, epochs=2)
    assert "epoch=2/2" in capsys.readouterr().err
    continue_levy_net(net, X, y, 0, epochs=2, verbose=0)
    assert capsys.readouterr() == ("", "")
    continue_levy_net(fit_levy_net(build(), X, y, 0), X, y, 0, epochs=3, verbose=1)
    assert "epoch=3/3" in capsys.readouterr().err


def test_progress_bar_does_not_change_the_fit(capsys):
    X, y = data()
    quiet = fit_levy_net(build(), X, y, 0)
    loud = build(verbose=1)
    loud = fit_levy_net(loud, X, y, 0)
    a, b = quiet.predict_moments(X), loud.predict_moments(X)
    np.testing.assert_array_equal(a.mean, b.mean)
    np.testing.assert_array_equal(a.variance, b.variance)
    assert pickle.loads(pickle.dumps(loud)).predict_moments(X).mean.shape == a.mean.shape


def test_both_front_ends_show_progress_only_when_verbose(capsys):
    rng = np.random.default_rng(0)
    Xt = rng.normal(size=(80, 3))
    LevyAttentionRegressor(d_model=8, max_epochs=2, random_state=0).fit(Xt, Xt[:, 0])
    assert capsys.readouterr().err == ""
    LevyAttentionRegressor(d_model=8, max_epochs=2, random_state=0, verbose=1).fit(Xt, Xt[:, 0])
    assert "epoch=2/2" in capsys.readouterr().err
    series = pd.Series(np.sin(np.arange(60) / 3), index=pd.RangeIndex(60))
    panel = pd.concat({f"s{i}": series + i for i in range(5)}).to_frame("y")
    tiny = {"d_model": 8, "n_heads": 2, "max_epochs": 2, "context_length": 8, "max_horizon": 4}
    for verbose in (0, 1):
        forecaster = LevyForecaster(**tiny, random_state=0, verbose=verbose)
        forecaster.fit(series)
        fit_err = capsys.readouterr().err
        forecaster.pretrain(panel)
        pretrain_err = capsys.readouterr().err
        if verbose:
            assert "epoch=2/2" in fit_err and "epoch=2/2" in pretrain_err
        else:
            assert fit_err == pretrain_err == ""
    # A warm-start fit and a further pretrain use the current verbose, not the first fit's.
    reg = LevyAttentionRegressor(d_model=8, max_epochs=2, random_state=0, warm_start=True)
    reg.fit(Xt, Xt[:, 0])
    capsys.readouterr()
    reg.set_params(verbose=1).fit(Xt, Xt[:, 0])
    assert "epoch=" in capsys.readouterr().err
    quiet_then_loud = LevyForecaster(**tiny, random_state=0).pretrain(panel)
    capsys.readouterr()
    quiet_then_loud.set_params(verbose=1)  # keeps the pretraining: pretrain continues it
    quiet_then_loud.pretrain(panel)
    assert "epoch=" in capsys.readouterr().err


def test_verbose_to_a_file_writes_plain_labelled_lines(capsys):
    # capsys streams are not terminals, as a file or a pipe is not: no bar to redraw with
    # "\r", no ANSI colour codes, and each training of a cross-fitted pretrain named.
    X = np.random.default_rng(0).normal(size=(200, 3))
    LevyAttentionRegressor(**{**TINY_REG, "verbose": 1}).fit(X, X[:, 0])
    out = capsys.readouterr()
    text = out.out + out.err
    assert "\x1b[" not in text and text.count("\r") <= 5
    lines = out.err.splitlines()
    assert len(lines) == 3  # one a epoch, each whole
    assert lines[-1].startswith("fit: 100% 12/12 [") and "epoch=3/3, train_loss=" in lines[-1]
    assert "train_loss" in out.out  # skorch's table, plain
    series = pd.Series(np.sin(np.arange(60) / 3), index=pd.RangeIndex(60))
    panel = pd.concat({f"s{i}": series + i for i in range(10)}).to_frame("y")
    LevyForecaster(**{**TINY_FC, "calibration_folds": 5, "verbose": 1}).pretrain(panel)
    out = capsys.readouterr()
    text = out.out + out.err
    assert "\x1b[" not in text and text.count("\r") <= 5
    labels = [line.split(":")[0] for line in out.err.splitlines()]
    trainings = [f"pretrain, fold {k}/5 held out" for k in range(1, 6)]
    assert list(dict.fromkeys(labels)) == [*trainings, "pretrain, all series"]
    assert labels.count("pretrain, all series") == TINY_FC["max_epochs"]


def test_off_a_terminal_a_long_epoch_writes_lines_between_epochs(capsys, monkeypatch):
    # The interval between lines within an epoch set to 0 s: a line after every batch too.
    monkeypatch.setattr("levy_sklearn.training.progress._LOG_INTERVAL_S", 0.0)
    X, y = data()
    fit_levy_net(build(verbose=1), X, y, 0)
    lines = capsys.readouterr().err.splitlines()
    # 5 epochs of 4 batches: a line after each of the 20 batches and after each epoch.
    assert len(lines) == 25 and lines[0].startswith("fit:   5% 1/20 [")
    assert lines[-1].startswith("fit: 100% 20/20 [") and "epoch=5/5" in lines[-1]


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_verbose_on_a_terminal_draws_the_bar_and_colours(monkeypatch):
    X = np.random.default_rng(0).normal(size=(200, 3))
    stdout, stderr = _Terminal(), _Terminal()
    monkeypatch.setattr("sys.stdout", stdout)
    monkeypatch.setattr("sys.stderr", stderr)
    LevyAttentionRegressor(**{**TINY_REG, "verbose": 1}).fit(X, X[:, 0])
    assert "\rfit: 100%|" in stderr.getvalue()  # tqdm's bar, redrawn in place
    assert "\x1b[" in stdout.getvalue()  # skorch's colour of each column's best value


# ---------------------------------------------------------------- prediction batches


def test_prediction_batches_follow_the_memory_budget_not_the_training_batch(monkeypatch):
    X, y = data(n=300)
    net = fit_levy_net(build(validation_fraction=0.0), X, y, 0)
    calls = []
    net.module_.register_forward_hook(lambda module, args, out: calls.append(len(out[0])))
    # 300 rows of 3 tokens fit the default budget whole: one network call, not 10 of 32.
    assert net.predict_batch_rows(X) == 300
    big = net.predict_moments(X)
    assert calls == [300]
    # A budget of one byte falls back to the training batch size (32 rows a call).
    monkeypatch.setattr(training.net, "PREDICT_BATCH_BYTES", 1)
    calls.clear()
    small = net.predict_moments(X)
    assert calls == [32] * 9 + [12]
    for a, b in zip(big, small, strict=True):
        # float64 inference: batching changes the last bit at most (1.9e-16 measured on
        # benchmarks/speed.py --predict's 3,383 patients).
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-300)
    # Long contexts get fewer rows per batch: the budget counts the attention rows.
    monkeypatch.undo()
    many = 100_000
    assert net.predict_batch_rows(tokens_from_rows(np.zeros((many, 30)))) == 497  # 8 MiB //
    assert net.predict_batch_rows(tokens_from_rows(np.zeros((many, 60)))) == 134  # (L + 1)
    assert net.predict_batch_rows(tokens_from_rows(np.zeros((many, 600)))) == 32  # × (8 + 2L)


#: 8 windows a batch and 4 steps: two passes over a small panel's windows would take more.
LARGE_FOR_ITS_BUDGET = {**TINY_FC, "max_epochs": 2, "batch_size": 8, "max_steps": 4}


def small_panel(seed=0, n_series=6, n=40):
    rng = np.random.default_rng(seed)
    index = pd.date_range("2022-01-01", periods=n, freq="D")
    return pd.concat(
        {f"s{i}": pd.DataFrame({"y": rng.normal(size=n).cumsum()}, index=index)
         for i in range(n_series)}
    )  # fmt: skip


def test_budget_grows_on_large_data_for_the_forecaster_only():
    # The forecaster trains every epoch at 8x the batch and 2x the rate; the same
    # parameters with room for two passes, or the regressor on as many rows, do not.
    panel = small_panel()
    grown = LevyForecaster(**LARGE_FOR_ITS_BUDGET, lr=0.01).fit(panel).net_
    assert (len(grown.history), grown.batch_size, grown.lr) == (2, 64, 0.02)
    roomy = {**LARGE_FOR_ITS_BUDGET, "max_steps": 1000}
    kept = LevyForecaster(**roomy, lr=0.01).fit(panel).net_
    assert (len(kept.history), kept.batch_size, kept.lr) == (2, 8, 0.01)
    X = np.random.default_rng(0).normal(size=(200, 3))
    rows = LevyAttentionRegressor(**TINY_REG, batch_size=8, max_steps=4).fit(X, X[:, 0]).net_
    assert (len(rows.history), rows.batch_size) == (1, 8)


def _optimizer_steps(fit) -> int:
    """Optimizer steps taken while ``fit()`` runs, counted by torch's global hook."""
    from torch.optim.optimizer import register_optimizer_step_post_hook

    steps = []
    handle = register_optimizer_step_post_hook(lambda *_: steps.append(1))
    try:
        fit()
    finally:
        handle.remove()
    return len(steps)


def test_forecaster_fills_max_steps_where_whole_epochs_fall_short_the_regressor_stops():
    # k steps an epoch and max_steps = 2.5 k: two whole epochs take 2 k steps, a third would
    # pass max_steps. The forecaster trains three epochs of max_steps // 3 steps instead.
    panel = small_panel()
    params = {**TINY_FC, "batch_size": 8, "max_epochs": 1, "max_steps": None}
    k = _optimizer_steps(lambda: LevyForecaster(**params).fit(panel))
    budget = {"max_epochs": 10, "max_steps": 2 * k + k // 2}
    f = LevyForecaster(**{**params, **budget})
    assert _optimizer_steps(lambda: f.fit(panel)) == 3 * (budget["max_steps"] // 3) > 2 * k
    assert len(f.net_.history) == 3
    X = np.random.default_rng(0).normal(size=(200, 3))
    reg = {**TINY_REG, "batch_size": 8, "validation_fraction": 0.0, "max_steps": None}
    one = LevyAttentionRegressor(**{**reg, "max_epochs": 1})
    k = _optimizer_steps(lambda: one.fit(X, X[:, 0]))
    r = LevyAttentionRegressor(**{**reg, "max_epochs": 10, "max_steps": 2 * k + k // 2})
    assert _optimizer_steps(lambda: r.fit(X, X[:, 0])) == 2 * k


def test_the_forecasters_training_grows_with_the_data_and_keeps_within_max_steps():
    # Rows stepped through (the cost) against every size from 1 to 100,000 rows: never over
    # max_steps batches, never falling by more than a batch an epoch as the rows grow (the
    # equal shares' rounding), where whole epochs fell by up to a third.
    for max_epochs, max_steps, batch in [(10, 500, 32), (10, 500, 16), (30, 1500, 32)]:
        costs, whole = [], []
        for n in range(1, 100_000):
            b = training.training_budget(n, batch, 0.01, max_epochs, max_steps, grow=True)
            rows = n if b.rows is None else b.rows
            if b.batch_size == batch:  # not grown: steps of the given batch
                assert b.epochs * -(-rows // batch) <= max_steps
            costs.append((b.epochs * rows, b.epochs * batch))
            old = training.training_budget(n, batch, 0.01, max_epochs, max_steps)
            whole.append(old.epochs * (n if old.rows is None else old.rows))
        falls = [(a - b) / eb for (a, _), (b, eb) in itertools.pairwise(costs) if b < a]
        assert max(falls, default=0) <= 1  # at most one batch an epoch
        assert min(b / a for a, b in itertools.pairwise(whole)) < 0.7  # whole epochs: a third


@pytest.mark.parametrize("grow", [False, True])
def test_a_training_as_long_as_on_other_rows_takes_their_steps(grow):
    # Optimizer steps (epochs of ceil(rows drawn / batch)) of a fit on n rows told to train
    # as long as on m: those of a fit on m, at every size around the budget's turns, with a
    # validation split; each epoch draws at most the rows its split leaves where n > m, and
    # as many as m's split leaves where n < m (every row, then some again).
    def budget(n_rows, steps_of=None):
        return training.training_budget(n_rows, 32, 0.01, 10, 500, 0.1, grow, steps_of)

    def steps(n_rows, b):
        drawn = n_rows - math.ceil(0.1 * n_rows) if b.rows is None else b.rows
        return b.epochs * -(-drawn // b.batch_size), drawn

    for m in [40, 1_000, 4_000, 5_344, 8_000, 9_000, 40_000, 150_000, 10**6]:
        for n in [m // 3, m - 1, m, m + 1, round(1.25 * m), 3 * m]:
            (taken, drawn), (alone, held) = steps(n, budget(n, m)), steps(m, budget(m))
            assert taken == alone
            assert drawn <= n - math.ceil(0.1 * n) if n >= m else drawn == held


@pytest.mark.parametrize(
    "max_epochs, max_steps, batch, speedup",
    [
        (10, 500, 32, 1.0),
        (10, 500, 32, 2.3),
        (10, 500, 32, 4.0),
        (10, 500, 16, 2.3),
        (30, 1500, 32, 4.0),
        (5, 500, 32, 2.0),
    ],
)
def test_a_pretrainings_cost_never_falls_as_its_windows_grow(
    max_epochs, max_steps, batch, speedup
):
    # The CPU of a pretraining (calibration_folds="auto": five fold networks and one on
    # every series, each as long as the largest fold network where the last one grew; where
    # that fold network grew too, the five alone), as windows stepped through, each at
    # 1 / speedup the cost where the batch grew (2.3: this machine's CPU,
    # benchmarks/results/scale_notes.md; below max_epochs · 5/12, beyond which five grown
    # fits would cost less than the six capped ones before them), against every third size
    # up to 100,000 windows: never falling by more than each network's rounding (a batch an
    # epoch, as one fit's), where one scored fold after the fold networks grow (two
    # networks, not six) would fall by over a third at the default ten epochs.
    from levy_sklearn._series_training import N_FOLDS

    def budget(n_rows, steps_of=None):
        return training.training_budget(
            n_rows, batch, 0.01, max_epochs, max_steps, grow=True, steps_of=steps_of
        )

    def cpu(n_rows, steps_of=None):
        b = budget(n_rows, steps_of)
        return b.epochs * (n_rows if b.rows is None else b.rows) / (speedup if b.grown else 1)

    costs, one_fold = [], []
    for n in range(1, 100_000, 3):
        rows = [n - (n + fold) // N_FOLDS for fold in range(N_FOLDS)]  # each fold's training
        steps_of = max(rows) if budget(n).grown else None
        grown = budget(max(rows)).grown
        costs.append(sum(cpu(r, steps_of) for r in rows) + (0 if grown else cpu(n, steps_of)))
        one_fold.append(cpu(max(rows)) + cpu(n) if grown else sum(map(cpu, rows)) + cpu(n))
    falls = [(a - b) / batch for a, b in itertools.pairwise(costs) if b < a]
    assert max(falls, default=0) <= (N_FOLDS + 1) * max_epochs
    if speedup > 2 and max_epochs == 10:
        assert min(b / a for a, b in itertools.pairwise(one_fold)) < 2 / 3


def test_pretraining_update_continues_every_epoch_at_the_grown_batch():
    f = LevyForecaster(**LARGE_FOR_ITS_BUDGET).pretrain(small_panel())
    before = len(f.pretrained_net_.history)
    f.pretrain(small_panel(seed=1))
    assert f.pretrained_net_.batch_size == 64
    assert len(f.pretrained_net_.history) == before + 2
