"""LevyNet: finiteness, invariances, determinism, and its variance against its own sampler."""

import math

import numpy as np
import pytest
import torch
from scipy import integrate, stats

from levy_sklearn.network import LevelGain, LevyNet, LinearLags
from levy_sklearn.training import GaussianScore


def make_net(seed=0, **kwargs):
    torch.manual_seed(seed)
    params = {"n_channels": 3, "n_targets": 2, "d_model": 16, "n_heads": 4}
    params.update(kwargs)
    return LevyNet(**params).double().eval()


def _locations(batch, seed):
    """Each query's window location and scale, as series windows give them."""
    g = torch.Generator().manual_seed(seed)
    shape = batch["query_times"].shape
    return {
        "query_loc": torch.randn(shape, generator=g, dtype=torch.float64),
        "query_scale": 0.1 + torch.rand(shape, generator=g, dtype=torch.float64),
    }


def make_batch(seed=0, batch=4, n_tokens=9, n_query=5):
    g = torch.Generator().manual_seed(seed)
    mask = torch.rand(batch, n_tokens, generator=g) > 0.3
    mask[0] = False  # a sample with no observation at all
    return {
        "times": -5 * torch.rand(batch, n_tokens, generator=g, dtype=torch.float64),
        "channels": torch.randint(0, 3, (batch, n_tokens), generator=g),
        "values": torch.randn(batch, n_tokens, generator=g, dtype=torch.float64),
        "mask": mask,
        "query_times": torch.rand(batch, n_query, generator=g, dtype=torch.float64),
        "query_channels": torch.randint(0, 2, (batch, n_query), generator=g),
    }


@pytest.mark.parametrize("attention", ["levy", "softmax"])
@pytest.mark.parametrize("n_windowed_heads", [0, 2])
def test_outputs_finite_with_positive_sigma(attention, n_windowed_heads):
    net = make_net(attention=attention, n_windowed_heads=n_windowed_heads, n_layers=2)
    mean, var, evidence, disagreement, noise = net(**make_batch())
    assert mean.shape == var.shape == noise.shape == (4, 5)
    assert evidence.shape == disagreement.shape == (4, 5, 4)
    for t in (mean, var, evidence, disagreement, noise):
        assert torch.isfinite(t).all()
    assert (var > 0).all()
    # Without a noise head the Lévy variance is all of σ²; the twin's σ² is all head.
    assert (noise == 0).all() if attention == "levy" else (noise > 0).all()


def test_invariant_to_token_order():
    net = make_net(n_windowed_heads=2, n_layers=2)
    batch = make_batch(1)
    perm = torch.randperm(batch["times"].shape[1])
    shuffled = {
        k: (v[:, perm] if k in ("times", "channels", "values", "mask") else v)
        for k, v in batch.items()
    }
    for a, b in zip(net(**batch), net(**shuffled), strict=True):
        torch.testing.assert_close(a, b)


def test_invariant_to_padding():
    net = make_net(n_windowed_heads=2, n_layers=2)
    batch = make_batch(2)
    b, extra = batch["times"].shape[0], 4
    padded = dict(batch)
    padded["times"] = torch.cat([batch["times"], torch.randn(b, extra, dtype=torch.float64)], 1)
    padded["channels"] = torch.cat([batch["channels"], torch.randint(0, 3, (b, extra))], 1)
    padded["values"] = torch.cat(
        [batch["values"], torch.full((b, extra), float("nan"), dtype=torch.float64)], 1
    )
    padded["mask"] = torch.cat([batch["mask"], torch.zeros(b, extra, dtype=torch.bool)], 1)
    for a, c in zip(net(**batch), net(**padded), strict=True):
        torch.testing.assert_close(a, c)


def test_same_seed_same_outputs_different_seed_different():
    a = make_net(seed=3)(**make_batch())
    b = make_net(seed=3)(**make_batch())
    c = make_net(seed=4)(**make_batch())
    for x, y in zip(a, b, strict=True):
        assert torch.equal(x, y)
    assert not torch.equal(a[0], c[0])


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"count_prior": True},
        {"noise_head": True},
        {"n_lags": 4, "n_lag_horizons": 2},
        {"level_gain": True, "n_lags": 4, "n_lag_horizons": 2},
    ],
    ids=["plain", "count", "noise", "lags", "gain"],
)
def test_variance_is_exact_variance_of_sampled_output_layer(options):
    count_prior = options.get("count_prior", False)
    net = make_net(5, n_windowed_heads=2, **options)
    with torch.no_grad():
        if net.lags is not None:  # a shift of the mean that the sampler must add as well
            net.lags.weight.normal_()
        if net.level_gain is not None:  # a gain the sampler must apply to its draws too
            net.level_gain.weight.normal_(std=0.3)
        net.cross.log_rate.fill_(math.log(0.7))  # moderate evidence: both terms matter
        net.cross.prior_mean.normal_()
        net.cross.prior_log_var.normal_(std=0.5)
        net.cross.prior_proj.weight.normal_(std=0.3)
        if count_prior:  # a prior that also moves with the number of observed tokens
            net.cross.prior_count.normal_(std=0.5)
    batch = make_batch(5)
    if net.level_gain is not None:
        batch |= _locations(batch, 5)
    n = 100_000
    mean, var, *_ = net(**batch)
    draws = net.sample(**batch, n_samples=n, generator=torch.Generator().manual_seed(0))
    se = draws.std(0) / math.sqrt(n)
    assert ((draws.mean(0) - mean).abs() <= 4 * se).all()
    dev = (draws - mean).pow(2)
    floor = 1e-6  # LevyNet adds this to every variance
    assert ((dev.mean(0) - (var - floor)).abs() <= 4 * dev.std(0) / math.sqrt(n) + 1e-12).all()


def test_noise_head_adds_its_variance_and_leaves_the_levy_layer_alone():
    plain, noisy = (
        make_net(7, n_windowed_heads=2),
        make_net(7, n_windowed_heads=2, noise_head=True),
    )
    # The head is built last: every other parameter starts where it does without it.
    for name, value in plain.state_dict().items():
        assert torch.equal(value, noisy.state_dict()[name])
    batch = make_batch(7)
    mean, var, evidence, disagreement, _ = plain(**batch)
    n_mean, n_var, n_evidence, n_disagreement, n_noise = noisy(**batch)
    for a, b in ((mean, n_mean), (evidence, n_evidence), (disagreement, n_disagreement)):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)
    # Reference: softplus of the head on E[Y] from the layer's materialised moments.
    keys = noisy._memory(batch["times"], batch["channels"], batch["values"], batch["mask"])
    q = noisy._queries(batch["query_times"], batch["query_channels"])
    expected_y = noisy.cross.moments(q, keys, batch["query_times"]).mean  # (B, H, Q, d)
    expected_y = expected_y.transpose(1, 2).flatten(2)
    logits = expected_y @ noisy.variance_head.weight.T + noisy.variance_head.bias
    noise = torch.log1p(torch.exp(logits)).gather(-1, batch["query_channels"][..., None])[..., 0]
    torch.testing.assert_close(n_var - var, noise, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(n_noise, noise, rtol=1e-10, atol=1e-12)  # broken out as is
    assert (noise > 0).all()
    with torch.no_grad():  # the fused readout, which never forms E[Y]
        torch.testing.assert_close(noisy(**batch)[1], n_var.detach(), rtol=1e-10, atol=1e-12)


def test_lags_shift_the_mean_by_the_value_they_read_and_leave_the_rest_alone():
    plain, lagged = make_net(8), make_net(8, n_lags=3, n_lag_horizons=2)
    # Built last: every other parameter starts where it does without it (and it starts at 0).
    for name, value in plain.state_dict().items():
        assert torch.equal(value, lagged.state_dict()[name])
    # A regular context: channel c observed at times 0, -1, -2 (values[b, c, k] at lag k).
    g = torch.Generator().manual_seed(8)
    values = torch.randn(2, 3, 3, generator=g, dtype=torch.float64)
    batch = {
        "times": -torch.arange(3.0, dtype=torch.float64).repeat(2, 3),
        "channels": torch.arange(3).repeat_interleave(3).expand(2, -1),
        "values": values.flatten(1),
        "mask": torch.ones(2, 9, dtype=torch.bool),
        "query_times": torch.tensor([[1.0, 2.0, 1.5, 7.0]] * 2, dtype=torch.float64),
        "query_channels": torch.tensor([[0, 1, 0, 1]] * 2),
    }
    with torch.no_grad():
        # Target 0 reads channel 2 two steps back at horizon 1 and channel 1 at lag 0 at
        # horizon 2; target 1 reads channel 0 one step back at both horizons.
        lagged.lags.weight[0, 0, 2, 2] = 1.0
        lagged.lags.weight[0, 1, 1, 0] = 3.0
        lagged.lags.weight[1, :, 0, 1] = -2.0
    out, ref = lagged(**batch), plain(**batch)
    expected = torch.stack(
        [
            values[:, 2, 2],  # horizon 1
            -2.0 * values[:, 0, 1],  # horizon 2 (target 1)
            0.5 * values[:, 2, 2] + 0.5 * 3.0 * values[:, 1, 0],  # halfway: interpolated
            -2.0 * values[:, 0, 1],  # beyond the last horizon: the last horizon's weights
        ],
        dim=1,
    )
    torch.testing.assert_close(out[0] - ref[0], expected, rtol=1e-12, atol=1e-12)
    for a, b in zip(out[1:], ref[1:], strict=True):  # variance, evidence, ... untouched
        assert torch.equal(a, b)


def test_lags_read_an_irregular_context_as_hat_weighted_averages():
    from levy_sklearn.network import LinearLags

    lags = LinearLags(n_channels=1, n_targets=1, n_lags=4, n_horizons=1).double()
    times = np.array([-0.25, -0.5, -1.6, -7.0])  # nothing near lag 3; lag 7 is off the grid
    values = np.array([1.0, 3.0, -2.0, 100.0])
    # Reference, by hand: grid point k averages the values weighted by max(0, 1 − |lag − k|).
    hat = np.clip(1 - np.abs(-times[:, None] - np.arange(4)), 0, None)
    with np.errstate(invalid="ignore"):
        grid = np.nan_to_num((hat * values[:, None]).sum(0) / hat.sum(0))
    assert grid[3] == 0.0  # nothing observed near lag 3: the window's anchor
    tokens = (
        torch.tensor(times[None]),
        torch.zeros(1, 4, dtype=torch.long),
        torch.tensor(values[None]),
        torch.ones(1, 4, dtype=torch.bool),
        torch.tensor([[1.0]], dtype=torch.float64),
        torch.zeros(1, 1, dtype=torch.long),
    )
    # A padded slot (masked out) near lag 1 with a NaN value and an out-of-range channel.
    padded = (
        torch.tensor([[*times, -1.0]]),
        torch.tensor([[0, 0, 0, 0, 7]]),
        torch.tensor([[*values, np.nan]]),
        torch.tensor([[True] * 4 + [False]]),
        *tokens[4:],
    )
    for k in range(4):
        with torch.no_grad():
            lags.weight.zero_()
            lags.weight[0, 0, 0, k] = 1.0
        assert lags(*tokens).item() == pytest.approx(grid[k], rel=1e-12, abs=1e-12)
        assert lags(*padded).item() == pytest.approx(grid[k], rel=1e-12, abs=1e-12)


def test_noise_head_changes_nothing_in_the_softmax_twin():
    # The twin's whole variance already is this head.
    batch = make_batch(8)
    plain, noisy = (
        make_net(8, attention="softmax"),
        make_net(8, attention="softmax", noise_head=True),
    )
    for a, b in zip(plain(**batch), noisy(**batch), strict=True):
        assert torch.equal(a, b)


def test_mc_dropout_twin_varies_only_in_train_mode():
    net = make_net(attention="softmax", dropout=0.3)
    batch = make_batch(6)
    with torch.no_grad():
        assert torch.equal(net(**batch)[0], net(**batch)[0])
        net.train()
        assert not torch.equal(net(**batch)[0], net(**batch)[0])


def test_invalid_attention_kind():
    with pytest.raises(ValueError, match="attention"):
        LevyNet(2, 1, attention="linear")


def test_gaussian_scores_match_scipy():
    mean = torch.tensor([0.3, -1.0, 2.0], dtype=torch.float64)
    var = torch.tensor([0.5, 2.0, 0.1], dtype=torch.float64)
    y = torch.tensor([1.0, -1.5, float("nan")], dtype=torch.float64)
    nll = GaussianScore("nll")(mean, var, y).item()
    ref_nll = -stats.norm.logpdf([1.0, -1.5], mean[:2].numpy(), np.sqrt(var[:2].numpy())).mean()
    assert nll == pytest.approx(ref_nll, rel=1e-12)

    def crps_numeric(m, s, obs):
        f = stats.norm(m, s).cdf
        lo, _ = integrate.quad(lambda x: f(x) ** 2, -np.inf, obs)
        hi, _ = integrate.quad(lambda x: (1 - f(x)) ** 2, obs, np.inf)
        return lo + hi

    ref_crps = np.mean([crps_numeric(0.3, np.sqrt(0.5), 1.0), crps_numeric(-1, np.sqrt(2), -1.5)])
    assert GaussianScore("crps")(mean, var, y).item() == pytest.approx(ref_crps, rel=1e-7)
    assert GaussianScore("mse")(mean, var, y).item() == pytest.approx((0.49 + 0.25) / 2)


@pytest.mark.parametrize("n_horizons", [1, 3, 12])
def test_lags_read_the_hat_functions_of_the_horizons_around_each_query(n_horizons):
    # Reference: every horizon's hat function at every query, summed (what the layer
    # computed before, in a (batch, query, horizon) tensor that took gigabytes at a long
    # max_horizon); queries at whole horizons, between them and beyond the last.
    torch.manual_seed(0)
    lags = LinearLags(n_channels=3, n_targets=2, n_lags=4, n_horizons=n_horizons)
    with torch.no_grad():
        lags.weight.normal_()
    times, values = -6 * torch.rand(5, 7), torch.randn(5, 7)
    channels, mask = torch.randint(0, 3, (5, 7)), torch.rand(5, 7) > 0.2
    query_times = (n_horizons + 2) * torch.rand(5, 9)
    query_times[0, :3] = torch.tensor([1.0, float(n_horizons), 0.5])
    query_channels = torch.randint(0, 2, (5, 9))
    shift = lags(times, channels, values, mask, query_times, query_channels)
    grid = torch.arange(lags.weight.shape[-1], dtype=torch.float32)
    hat = (1 - (times.unsqueeze(-1) + grid).abs()).clamp(min=0) * mask.unsqueeze(-1)
    one_hot = torch.nn.functional.one_hot(channels, 3).float()
    lagged = torch.einsum("blk,blc,bl->bck", hat, one_hot, values) / torch.einsum(
        "blk,blc->bck", hat, one_hot
    ).clamp(min=1e-6)
    by_horizon = torch.einsum("thck,bck->bth", lags.weight, lagged)
    by_query = torch.gather(by_horizon, 1, query_channels[..., None].expand(-1, -1, n_horizons))
    at = query_times.clamp(1, n_horizons)[..., None]
    horizons = torch.arange(1, n_horizons + 1, dtype=torch.float32)
    expected = ((1 - (at - horizons).abs()).clamp(min=0) * by_query).sum(-1)
    torch.testing.assert_close(shift, expected, rtol=1e-6, atol=1e-6)


def test_seasonal_lags_read_the_value_a_cycle_before_each_query():
    from levy_sklearn.network import LinearLags

    lags = LinearLags(n_channels=1, n_targets=1, n_lags=2, n_horizons=3, seasonal_lags=[5.0])
    with torch.no_grad():
        lags.seasonal_weight[0, :, 0, 0] = 1.0  # the value 5 before the query
        lags.seasonal_weight[0, :, 0, 1] = -0.5  # half the value 5 before the origin
    times = torch.arange(-9.0, 1.0).unsqueeze(0)  # -9 ... 0
    values = (10 * times).clone()
    mask = torch.ones_like(times, dtype=torch.bool)
    channels = torch.zeros_like(times, dtype=torch.long)
    query = torch.tensor([[1.0, 2.0, 2.5]])
    shift = lags(times, channels, values, mask, query, torch.zeros(1, 3, dtype=torch.long))
    # 10·(τ − 5) − 0.5·10·(−5), the hat function interpolating at τ = 2.5.
    expected = [10 * (q - 5) + 25 for q in (1.0, 2.0, 2.5)]
    np.testing.assert_allclose(shift[0].detach().numpy(), expected, rtol=1e-6)


def test_seasonal_lags_alone_build_an_autoregression_and_must_be_positive():
    net = LevyNet(n_channels=1, n_targets=1, d_model=8, n_heads=2, seasonal_lags=[24.0])
    assert net.lags is not None and net.lags.weight.shape[-1] == 0
    with pytest.raises(ValueError, match="positive"):
        LevyNet(n_channels=1, n_targets=1, d_model=8, n_heads=2, seasonal_lags=[0.0])
    with pytest.raises(ValueError, match="positive"):
        LevyNet(n_channels=1, n_targets=1, d_model=8, n_heads=2, calendar_periods=[-1.0])


def test_calendar_encoding_holds_harmonics_of_each_phase():
    # Independent reference: the features are sin and cos of 2πk·φ for k = 1..K of each
    # period's phase φ, mapped by the calendar layer's weights.
    net = LevyNet(
        n_channels=1,
        n_targets=1,
        d_model=8,
        n_heads=2,
        calendar_periods=[24.0, 168.0],
        calendar_harmonics=3,
    )
    layer = net.calendar_encoding
    assert layer.in_features == 2 * 3 * 2
    calendar = torch.tensor([[0.25, 0.5]])
    times = torch.tensor([[0.0, 6.0, 30.0]])
    encoded = net.encode_time(times, calendar) - net.time_encoding(times)
    phase = np.array([[0.25, 0.5], [0.5, 0.5 + 6 / 168], [0.5, 0.5 + 30 / 168]])  # (L, P)
    angle = 2 * np.pi * phase[:, :, None] * np.arange(1, 4)  # (L, P, K)
    features = np.concatenate([np.sin(angle), np.cos(angle)], axis=1).reshape(3, -1)
    expected = features @ layer.weight.detach().numpy().T + layer.bias.detach().numpy()
    np.testing.assert_allclose(encoded[0].detach().numpy(), expected, rtol=1e-4, atol=1e-5)
    # A period of 5 time units holds two harmonics: the third aliases onto the second.
    short = LevyNet(n_channels=1, n_targets=1, calendar_periods=[24.0, 5.0], calendar_harmonics=3)
    assert short.calendar_encoding.in_features == 2 * (3 + 2)
    with pytest.raises(ValueError, match="calendar_harmonics"):
        LevyNet(n_channels=1, n_targets=1, calendar_periods=[24.0], calendar_harmonics=0)


def test_calendar_encoding_is_the_same_a_whole_period_apart():
    net = LevyNet(n_channels=1, n_targets=1, d_model=8, n_heads=2, calendar_periods=[24.0])
    calendar = torch.tensor([[0.3]])
    times = torch.tensor([[0.0, 24.0, 12.0]])
    encoded = net.encode_time(times, calendar) - net.time_encoding(times)
    torch.testing.assert_close(encoded[0, 0], encoded[0, 1], rtol=1e-5, atol=1e-5)
    assert not torch.allclose(encoded[0, 0], encoded[0, 2])


def test_the_autoregression_reads_no_input_channel():
    # Channels 1 and 2 are inputs (n_inputs=2): their tokens, at any lag and any value,
    # leave the autoregression's shift as it is without them; y's own lags still move it.
    net = LevyNet(n_channels=3, n_targets=1, d_model=8, n_heads=2, n_lags=3, n_inputs=2)
    assert net.lags.weight.shape == (1, 1, 1, 3)  # one weight per lag of y alone
    with torch.no_grad():
        net.lags.weight.fill_(1.0)
    y_times = torch.tensor([[-2.0, -1.0, 0.0]])
    y_values = torch.tensor([[1.0, 2.0, 4.0]])
    query = (torch.tensor([[1.0, 2.0]]), torch.zeros(1, 2, dtype=torch.long))

    def shift(times, channels, values):
        return net.lags(times, channels, values, torch.ones_like(times, dtype=torch.bool), *query)

    alone = shift(y_times, torch.zeros(1, 3, dtype=torch.long), y_values)
    torch.testing.assert_close(alone, torch.tensor([[7.0, 7.0]]))  # 4 + 2 + 1, by hand
    inputs = (torch.tensor([[-2.0, -1.0, 0.0, 0.0, 1.0]]), torch.tensor([[1, 2, 1, 2, 1]]))
    with_inputs = shift(
        torch.cat([y_times, inputs[0]], 1),
        torch.cat([torch.zeros(1, 3, dtype=torch.long), inputs[1]], 1),
        torch.cat([y_values, torch.tensor([[50.0, -30.0, 9.0, 8.0, 7.0]])], 1),
    )
    assert torch.equal(with_inputs, alone)
    with pytest.raises(ValueError, match="n_inputs"):
        LevyNet(n_channels=2, n_targets=1, n_inputs=2)


def test_level_gain_multiplies_the_levy_readout_by_softplus_of_the_level_features():
    plain = make_net(9, n_windowed_heads=2)
    gained = make_net(9, n_windowed_heads=2, level_gain=True, n_lag_horizons=2)
    # The gain is built last: every other parameter starts where it does without it.
    for name, value in plain.state_dict().items():
        assert torch.equal(value, gained.state_dict()[name])
    batch = make_batch(9, n_query=6)
    batch["query_times"] = torch.tensor([0.5, 1.0, 1.5, 2.0, 2.5, 3.0]).expand(4, -1).double()
    locations = _locations(batch, 9)
    mean, var, evidence, disagreement, _ = plain(**batch)
    # At the start the gain is 1: the outputs are those without it.
    for a, b in zip(plain(**batch), gained(**batch, **locations), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)
    with torch.no_grad():
        gained.level_gain.weight.copy_(
            torch.tensor(
                [[[0.2, -0.3, 0.1], [-0.4, 0.5, 0.2]], [[0.1, 0.2, -0.2], [0.3, 0.1, 0.0]]]
            )
        )
    g_mean, g_var, g_evidence, g_disagreement, _ = gained(**batch, **locations)
    # Reference: each query's weights by hand, horizon 1 up to time 1, horizon 2 from time
    # 2, linear between; features (1, loc / scale, 1 / scale).
    w = gained.level_gain.weight[batch["query_channels"]]  # (B, Q, 2, 3)
    t = batch["query_times"].clamp(1, 2)[..., None]
    weight = (2 - t) * w[..., 0, :] + (t - 1) * w[..., 1, :]
    loc, scale = locations["query_loc"], locations["query_scale"]
    features = torch.stack([torch.ones_like(loc), loc / scale, 1 / scale], dim=-1)
    gain = torch.log1p(torch.exp((weight * features).sum(-1) + math.log(math.e - 1)))
    torch.testing.assert_close(g_mean, gain * mean, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(g_var, gain**2 * var, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(g_disagreement, gain[..., None] ** 2 * disagreement)
    torch.testing.assert_close(g_evidence, evidence)  # the evidence never sees the gain
    with pytest.raises(ValueError, match="query_loc and query_scale"):
        gained(**batch)


def test_level_gain_needs_a_target_and_a_horizon():
    with pytest.raises(ValueError, match="n_horizons >= 1"):
        LevelGain(n_targets=1, n_horizons=0)
