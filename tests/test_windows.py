"""series_windows and the time axis against windows computed by hand."""

import numpy as np
import pandas as pd
import pytest

from levy_sklearn._time_axis import index_to_time, median_spacing
from levy_sklearn.windows import WindowPlan, series_windows

NAN = np.nan


def test_irregular_window_without_normalisation():
    t = np.array([0.0, 0.5, 2.0, 3.5, 4.0])
    v = np.array([[1.0], [3.0], [2.0], [6.0], [8.0]])
    w = series_windows(
        [t], [v], [np.array([3.5])], context_length=3, horizon=1, normalization="none"
    )
    # context (0.5, 3.5]: t = 2 and 3.5; the last observation is at the cutoff (origin 3.5)
    assert w.tokens["times"].tolist() == [[-1.5, 0.0]]
    assert w.tokens["values"].tolist() == [[2.0, 6.0]]
    assert w.tokens["query_times"].tolist() == [[0.5]]  # target (3.5, 4.5]: t = 4
    assert w.targets.tolist() == [[8.0]]
    assert (w.query_loc.tolist(), w.query_scale.tolist()) == ([[0.0]], [[1.0]])
    assert (w.origins.tolist(), w.n_context.tolist()) == ([3.5], [2])


def test_irregular_window_mean_normalisation_uses_history_scale():
    t = np.array([0.0, 0.5, 2.0, 3.5, 4.0])
    v = np.array([[1.0], [3.0], [2.0], [6.0], [8.0]])
    w = series_windows(
        [t],
        [v],
        [np.array([3.5])],
        context_length=3,
        horizon=1,
        normalization="mean",
        min_scale=0.0,
    )
    # level: mean(2, 6) = 4; the window's own spread has 1 degree of freedom (too few), so the
    # scale is the history's step RMS up to the cutoff: steps 2, -1, 4 -> sqrt(21 / 3)
    scale = np.sqrt(7.0)
    np.testing.assert_allclose(w.tokens["values"], [[-2 / scale, 2 / scale]], rtol=1e-6)
    np.testing.assert_allclose(w.targets, [[4 / scale]])
    np.testing.assert_allclose(w.query_loc, [[4.0]])
    np.testing.assert_allclose(w.query_scale, [[scale]])


def test_last_normalisation_anchors_each_channel_on_its_last_value():
    t = np.arange(6.0)
    v = np.array([[1.0, 5.0], [3.0, 4.0], [2.0, NAN], [6.0, NAN], [7.0, 9.0], [8.0, 9.5]])
    w = series_windows(
        [t],
        [v],
        [np.array([3.0])],
        context_length=3,
        horizon=2,
        normalization="last",
        min_scale=0.0,
    )
    # context (0, 3]: channel 0 at t = 1, 2, 3 (3, 2, 6), channel 1 at t = 1 only (4): each
    # channel's anchor is its own last value, held flat over the queries (t = 4, 5).
    np.testing.assert_allclose(w.query_loc, [[6.0, 4.0, 6.0, 4.0]])
    # channel 0's scale: the larger of its spread around the context's least-squares line
    # (numpy's fit, n − 2 degrees of freedom) and the RMS of the history's steps
    tc, vc = np.array([1.0, 2.0, 3.0]), np.array([3.0, 2.0, 6.0])
    fit = np.polyval(np.polyfit(tc, vc, 1), tc)
    spread = np.sqrt(np.sum((vc - fit) ** 2) / 1)
    steps = np.sqrt(np.mean(np.diff([1.0, 3.0, 2.0, 6.0]) ** 2))  # history up to t = 3
    scale0 = max(spread, steps)
    # channel 1: one token (no spread) and one step (too few): its global unit, 1
    np.testing.assert_allclose(w.query_scale, [[scale0, 1.0, scale0, 1.0]])
    np.testing.assert_allclose(
        w.targets, [[(7 - 6) / scale0, 9 - 4, (8 - 6) / scale0, 9.5 - 4]], rtol=1e-12
    )
    # the normalised context: the last token of each channel is exactly 0
    keys = zip(w.tokens["times"][0], w.tokens["channels"][0], strict=True)
    values = dict(zip(keys, w.tokens["values"][0], strict=True))
    assert values[(0.0, 0)] == 0.0 and values[(-2.0, 1)] == 0.0
    np.testing.assert_allclose(values[(-1.0, 0)], (2 - 6) / scale0)


def test_gappy_window_moves_the_origin_and_drops_missing_cells():
    t = np.arange(7.0)
    v = np.array([[1, 10], [2, NAN], [3, 30], [NAN, NAN], [NAN, NAN], [NAN, 60], [7, NAN]])
    w = series_windows(
        [t],
        [v.astype(float)],
        [np.array([4.0])],
        context_length=3.5,
        horizon=2,
        normalization="none",
    )
    # context (0.5, 4]: (t=1, ch 0, 2), (t=2, ch 0, 3), (t=2, ch 1, 30); NaN cells are no token
    # origin: the last observation t = 2, so times are relative to 2 and queries move out by 2
    assert w.origins.tolist() == [2.0]
    assert w.tokens["times"].tolist() == [[-1.0, 0.0, 0.0]]
    assert w.tokens["channels"].tolist() == [[0, 0, 1]]
    assert w.tokens["values"].tolist() == [[2.0, 3.0, 30.0]]
    # targets (4, 6]: t = 5 and 6, every channel asked for, NaN where unobserved
    assert w.tokens["query_times"].tolist() == [[3.0, 3.0, 4.0, 4.0]]
    assert w.tokens["query_channels"].tolist() == [[0, 1, 0, 1]]
    np.testing.assert_array_equal(w.targets, [[NAN, 60.0, 7.0, NAN]])


def test_unequal_length_series_are_padded():
    ta, va = np.arange(5.0), np.arange(5.0)[:, None]
    tb, vb = np.arange(3.0), np.array([[10.0], [20.0], [30.0]])
    w = series_windows(
        [ta, tb],
        [va, vb],
        [np.array([4.0]), np.array([2.0])],
        context_length=10,
        query_times=[np.array([1.0, 2.0]), np.array([1.0])],
        normalization="none",
    )
    assert w.tokens["times"].tolist() == [[-4, -3, -2, -1, 0], [-2, -1, 0, 0, 0]]
    assert w.tokens["mask"].tolist() == [[True] * 5, [True] * 3 + [False] * 2]
    assert w.tokens["values"][1].tolist() == [10, 20, 30, 0, 0]
    assert w.tokens["query_times"].tolist() == [[1, 2], [1, 0]]
    assert w.query_valid.tolist() == [[True, True], [True, False]]
    assert np.isnan(w.targets).all()
    assert (w.query_loc.tolist(), w.query_scale.tolist()) == ([[0, 0], [0, 0]], [[1, 1], [1, 1]])
    assert (w.series.tolist(), w.cutoffs.tolist()) == ([0, 1], [4.0, 2.0])


def test_limits_hidden_targets_extra_queries_and_context_gaps():
    t, v = np.arange(10.0), np.arange(10.0)[:, None]
    w = series_windows(
        [t],
        [v],
        [np.array([5.0])],
        context_length=5,
        horizon=4,
        normalization="none",
        max_tokens=2,
        max_queries=3,
        target_end=[8.0],
        origin_queries=[7.0],
    )
    assert w.tokens["times"].tolist() == [[-1.0, 0.0]]  # the latest two of t = 1..5
    # targets t = 6..9, three evenly spaced (6, 7 or 8, 9); t = 9 > target_end is hidden; the
    # extra query at 7 after the origin has no target
    assert w.tokens["query_times"].tolist() == [[1.0, 3.0, 4.0, 7.0]]
    np.testing.assert_array_equal(w.targets, [[6.0, 8.0, NAN, NAN]])
    g = series_windows(
        [t],
        [v],
        [np.array([5.0])],
        context_length=2,
        horizon=1,
        normalization="none",
        context_gaps=[np.array([2.0])],
    )
    # context ends 2 before the cutoff: (1, 3]; the target stays after the cutoff (t = 6)
    assert g.tokens["values"].tolist() == [[2.0, 3.0]]
    assert (g.origins.tolist(), g.tokens["query_times"].tolist()) == ([3.0], [[3.0]])
    # gaps as holes: the first window's context (1, 3] keeps the last observation at or before
    # its cutoff (t = 5); the second's (6.5, 8.5] has t = 7 only (t = 8 is unobserved) and
    # keeps t = 9, its cutoff
    v_holes = v.copy()
    v_holes[8] = NAN
    h = series_windows(
        [t],
        [v_holes],
        [np.array([5.0, 9.0])],
        context_length=2,
        horizon=1,
        normalization="none",
        context_gaps=[np.array([2.0, 0.5])],
        gap_keeps_last=[np.array([True, True])],
    )
    assert h.tokens["values"].tolist() == [[2.0, 3.0, 5.0], [7.0, 9.0, 0.0]]
    assert h.tokens["mask"].tolist() == [[True, True, True], [True, True, False]]
    # time origins at the kept observations
    assert h.origins.tolist() == [5.0, 9.0]
    assert h.tokens["times"][0].tolist() == [-3.0, -2.0, 0.0]


def test_tz_aware_index_counts_elapsed_time_across_dst():
    # Berlin skips 02:00 on 2021-03-28: three consecutive hours of elapsed time
    index = pd.date_range("2021-03-28", periods=3, freq="h", tz="Europe/Berlin")
    assert [ts.hour for ts in index] == [0, 1, 3]
    unit = median_spacing([index])
    assert unit == pd.Timedelta(hours=1)
    t = index_to_time(index, unit)
    assert (t - t[0]).tolist() == [0.0, 1.0, 2.0]
    np.testing.assert_array_equal(t, index_to_time(index.tz_convert("UTC"), unit))
    w = series_windows(
        [t],
        [np.array([[1.0], [2.0], [3.0]])],
        [t[1:2]],
        context_length=5,
        horizon=1,
        normalization="none",
    )
    assert (w.tokens["times"].tolist(), w.tokens["query_times"].tolist()) == ([[-1, 0]], [[1]])


@pytest.mark.parametrize("kwargs", [{}, {"horizon": 1, "query_times": [np.zeros(1)]}])
def test_needs_exactly_one_of_horizon_and_query_times(kwargs):
    with pytest.raises(ValueError, match="exactly one"):
        series_windows(
            [np.arange(3.0)], [np.ones((3, 1))], [np.array([1.0])], context_length=2, **kwargs
        )


def test_no_windows():
    w = series_windows(
        [np.arange(3.0)], [np.ones((3, 1))], [np.array([])], context_length=2, horizon=1
    )
    assert w.tokens["times"].shape == (0, 1) and w.targets.shape == (0, 1)
    assert w.query_valid.shape == (0, 1)


def test_a_channel_silent_beyond_the_look_back_keeps_its_last_cell():
    # ch 1 was last observed at t = 1 (value 10), long before the look-back (5, 9]: it keeps
    # that cell as a token (time relative to the origin t = 9); ch 0 is windowed as usual.
    t = np.arange(10.0)
    v = np.column_stack([np.arange(10.0), np.full(10, NAN)])
    v[1, 1] = 10.0
    cut = [np.array([9.0])]
    w = series_windows([t], [v], cut, context_length=4, horizon=1, normalization="none")
    tokens = w.tokens["times"][0], w.tokens["channels"][0], w.tokens["values"][0]
    assert sorted(zip(*tokens, strict=True)) == [
        (-8.0, 1, 10.0),
        (-3.0, 0, 6.0),
        (-2.0, 0, 7.0),
        (-1.0, 0, 8.0),
        (0.0, 0, 9.0),
    ]
    # a channel never observed before the cutoff gets no token
    v[1, 1] = NAN
    w = series_windows([t], [v], cut, context_length=4, horizon=1)
    assert set(w.tokens["channels"][0][w.tokens["mask"][0]]) == {0}


def test_training_windows_include_gaps_and_holes():
    # observation_dropout=0.3 adds ⌈0.3 n⌉ gap windows to the n windows as cut; about half are
    # holes (the last observation before the cutoff kept, so the origin is the cutoff itself
    # on this fully observed series), the others end their context before the cutoff.
    # The forecaster's default plan on a monthly series of 200 steps.
    t = np.arange(200.0)
    v = np.sin(t / 5)[:, None]
    plan = WindowPlan(36.0, 12.0, 12.0, "last", 256, None, 512, 0.3, 0.0)
    n_cut = plan.cutoffs(t, v, -np.inf, np.inf).size
    windows = plan.windows([t], [v], "train", seed=0)
    assert windows.cutoffs.size == n_cut + int(np.ceil(0.3 * n_cut))
    # windows as cut see no gap: their origin is their cutoff
    np.testing.assert_array_equal(windows.origins[:n_cut], windows.cutoffs[:n_cut])
    # gap windows late enough to have a context before any gap (36 + a gap of at most 12)
    late = np.arange(n_cut, windows.cutoffs.size)[windows.cutoffs[n_cut:] >= 48]
    holes = windows.origins[late] == windows.cutoffs[late]
    assert 0.3 < holes.mean() < 0.7
    jumps = []
    for row, hole in zip(late, holes, strict=True):
        observed = np.sort(windows.tokens["times"][row][windows.tokens["mask"][row]])
        assert observed[-1] == 0.0  # times are relative to the last observation
        if hole:
            jumps.append(observed[-1] - observed[-2])
        else:  # every step inside the context: it ends before the cutoff
            assert np.all(np.diff(observed) == 1)
    # a hole of up to max_horizon (12 steps) before the kept observation: a jump of more than
    # one step, unless the drawn gap was shorter than a step (about 1 in 12)
    assert np.min(jumps) >= 1 and np.mean(np.array(jumps) > 1) > 0.75


def test_held_out_windows_hold_every_cutoff_of_a_series_first_context():
    """A new subject is forecast from its first observations on: held-out subjects are
    scored at every cutoff of their first context span, beside the evenly spaced cutoffs
    of the rest of a long series (capped at windows_per_series)."""
    plan = WindowPlan(8.0, 2.0, None, "last", 64, None, 10, 0.0, 0.0)
    t, v = np.arange(100.0), np.arange(100.0)[:, None]
    held = plan.windows([t], [v], "held_out", seed=0).origins
    spaced = np.linspace(0, 98, 10).round()  # cutoffs 0..98 have a target: 10 of them
    assert held.tolist() == np.union1d(spaced, np.arange(8.0)).tolist()
    # Training windows keep the cap: only the forecasts scored are added.
    assert plan.windows([t], [v], "train", seed=0).origins.tolist() == spaced.tolist()


@pytest.mark.parametrize("epochs", [1, 2])
def test_training_batches_cut_lazily_equal_the_windows_cut_whole(epochs, monkeypatch):
    """The batches a fit trains on, each cut when drawn (in a shuffled order), are the rows
    of the windows cut whole, padded to the batch's longest window instead of the longest
    of all: gap and hole windows, echoes, calendar phases, population levels and covariate
    tokens (known ahead, past only, static) alike; over several epochs, the windows kept
    from the first (as many as the cache holds: here about half) and those cut again."""
    from torch.utils.data import DataLoader, default_convert

    from levy_sklearn import _series_training
    from levy_sklearn._series_training import window_dataset
    from levy_sklearn.windows import InputSeries

    rng = np.random.default_rng(1)
    times, values, inputs = [], [], []
    for n in (40, 25, 60):
        t = np.sort(rng.uniform(0, 30, n))
        v = rng.normal(size=(n, 2))
        v[rng.random((n, 2)) < 0.4] = np.nan
        v[np.isnan(v).all(axis=1), 0] = 1.0
        times.append(t)
        values.append(v)
        x = rng.normal(size=(n, 3))
        inputs.append(
            InputSeries(t, x, np.array([True, False, False]), np.array([np.nan, np.nan, 2.0]))
        )
    levels = rng.normal(size=(3, 2))
    plan = WindowPlan(6.0, 2.0, None, "trend", 12, 3, 50, 0.5, 0.2, (5.0,), ((7.0, 0.25),))
    whole = plan.windows(times, values, "train", 3, levels, inputs)
    source = plan.source(times, values, "train", 3, levels, inputs)
    assert source.n_windows == whole.cutoffs.size > 100
    monkeypatch.setattr(_series_training, "WINDOW_CACHE_BYTES", 100_000)
    dataset = window_dataset(source, epochs)
    orders = [np.random.default_rng(e).permutation(source.n_windows) for e in range(epochs)]
    passes = [
        (batch, rows)
        for order in orders
        for batch, rows in zip(
            DataLoader(dataset, batch_size=16, sampler=order, collate_fn=default_convert),
            np.array_split(order, -(-order.size // 16)),
            strict=True,
        )
    ]
    seen, narrower = 0, 0
    for (tokens, targets), rows in passes:
        assert set(tokens) == set(whole.tokens) and "calendar" in tokens
        width = int(whole.tokens["mask"][rows].sum(axis=1).max())
        queries = int(np.isfinite(whole.targets[rows]).any(axis=0).nonzero()[0].max()) + 1
        for key, value in tokens.items():
            reference = whole.tokens[key][rows]
            if key in ("times", "channels", "values", "mask"):
                assert value.shape[1] == width  # padded to this batch's longest window
                narrower += width < whole.tokens["mask"].shape[1]
                assert not whole.tokens["mask"][rows][:, width:].any()
                reference = reference[:, :width]
            elif key.startswith("query"):
                reference = reference[:, : value.shape[1]]
            np.testing.assert_array_equal(value.numpy(), reference)
        assert targets.shape[1] >= queries
        np.testing.assert_array_equal(
            targets.numpy(), whole.targets[rows][:, : targets.shape[1]].astype(np.float32)
        )
        assert np.isnan(whole.targets[rows][:, targets.shape[1] :]).all()
        seen += len(rows)
    assert seen == epochs * source.n_windows and narrower > 0
    if epochs > 1:  # the cache held some windows, not all
        assert 0 < dataset.make.__self__.kept < source.n_windows


def test_window_index_is_built_in_little_more_memory_than_it_holds():
    # An index of three million windows (10,000 subjects) is held while a fit trains:
    # 33 bytes a window (series and plan spans as 32 bits), built without per-series arrays
    # of every window's gap, keep and end beside it (which took twice the index's size at
    # its peak).
    import tracemalloc

    plan = WindowPlan(8.0, 2.0, None, "last", 64, None, 100, 0.5, 0.1)
    rng = np.random.default_rng(0)
    times = [np.sort(rng.uniform(0, 200, 300)) for _ in range(200)]
    values = [rng.normal(size=(300, 2)) for _ in range(200)]
    tracemalloc.start()
    try:
        index = plan.index(times, values, "train", seed=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    size = sum(field.nbytes for field in index)
    assert index.series.size > 20_000
    assert size == 33 * index.series.size
    assert peak < 1.75 * size


def test_a_source_without_windows_cuts_to_empty_windows():
    # A short series holds no calibration window; cutting none must give empty arrays (as
    # cutting them whole does), not fail, so a tiny pretraining panel still calibrates.
    plan = WindowPlan(8.0, 2.0, None, "last", 64, None, 100, 0.1, 0.0)
    t, v = np.arange(3.0), np.arange(3.0)[:, None]
    source = plan.source([t], [v], "calibrate", seed=0)
    windows = source.cut()
    assert source.n_windows == 0
    assert windows.targets.shape[0] == 0
    assert all(array.shape[0] == 0 for array in windows.tokens.values())
