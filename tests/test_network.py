"""LevyNet: finiteness, invariances, determinism, and its variance against its own sampler."""

import math

import numpy as np
import pytest
import torch
from scipy import integrate, stats

from levy_sklearn.network import LevyNet
from levy_sklearn.training import GaussianScore


def make_net(seed=0, **kwargs):
    torch.manual_seed(seed)
    params = {"n_channels": 3, "n_targets": 2, "d_model": 16, "n_heads": 4}
    params.update(kwargs)
    return LevyNet(**params).double().eval()


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
    mean, var, evidence, disagreement = net(**make_batch())
    assert mean.shape == var.shape == (4, 5)
    assert evidence.shape == disagreement.shape == (4, 5, 4)
    for t in (mean, var, evidence, disagreement):
        assert torch.isfinite(t).all()
    assert (var > 0).all()


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


@pytest.mark.parametrize("count_prior", [False, True])
def test_variance_is_exact_variance_of_sampled_output_layer(count_prior):
    net = make_net(5, n_windowed_heads=2, count_prior=count_prior)
    with torch.no_grad():
        net.cross.log_rate.fill_(math.log(0.7))  # moderate evidence: both terms matter
        net.cross.prior_mean.normal_()
        net.cross.prior_log_var.normal_(std=0.5)
        net.cross.prior_proj.weight.normal_(std=0.3)
        if count_prior:  # a prior that also moves with the number of observed tokens
            net.cross.prior_count.normal_(std=0.5)
    batch = make_batch(5)
    n = 100_000
    mean, var, _, _ = net(**batch)
    draws = net.sample(**batch, n_samples=n, generator=torch.Generator().manual_seed(0))
    se = draws.std(0) / math.sqrt(n)
    assert ((draws.mean(0) - mean).abs() <= 4 * se).all()
    dev = (draws - mean).pow(2)
    floor = 1e-6  # LevyNet adds this to every variance
    assert ((dev.mean(0) - (var - floor)).abs() <= 4 * dev.std(0) / math.sqrt(n) + 1e-12).all()


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
