"""LevyAttention and ψ against independent references: scipy, mpmath, Monte Carlo."""

import math

import mpmath
import numpy as np
import pytest
import torch
from scipy import special, stats

from levy_sklearn import attention, psi
from levy_sklearn.attention import KeySet, LevyAttention, SoftmaxAttention, readout_moments

GRID = np.logspace(-8, 6, 141)


def psi_mpmath_exact(x: float) -> mpmath.mpf:
    x = mpmath.mpf(x)
    return mpmath.e ** (-x) * (mpmath.ei(x) - mpmath.euler - mpmath.log(x))


def psi_mpmath(x: float) -> float:
    return float(psi_mpmath_exact(x))


def test_psi_matches_scipy_expi():
    # scipy's Ei overflows beyond ~700 and cancels catastrophically below ~1e-3.
    x = GRID[(GRID >= 1e-3) & (GRID <= 700)]
    ref = np.exp(-x) * (special.expi(x) - np.euler_gamma - np.log(x))
    got = psi(torch.tensor(x, dtype=torch.float64)).numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=0)


def test_psi_matches_mpmath_on_whole_grid():
    ref = np.array([psi_mpmath(v) for v in GRID])
    got = psi(torch.tensor(GRID, dtype=torch.float64)).numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=0)


def test_psi_float32_finite_and_close():
    ref = np.array([psi_mpmath(v) for v in GRID])
    got = psi(torch.tensor(GRID, dtype=torch.float32)).numpy()
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, ref, rtol=1e-4)


def test_psi_at_zero_and_limits():
    assert psi(torch.tensor(0.0, dtype=torch.float64)).item() == 0.0
    small = torch.tensor(1e-4, dtype=torch.float64)
    assert psi(small).item() == pytest.approx(1e-4 - 0.75e-8, rel=1e-9)  # Λ − ¾Λ²
    big = 1e4
    assert psi(torch.tensor(big, dtype=torch.float64)).item() == pytest.approx(
        1 / big + 1 / big**2 + 2 / big**3, rel=1e-12
    )


def test_psi_matches_poisson_definition():
    # E[1/N ; N ≥ 1] summed directly over the Poisson pmf.
    n = np.arange(1, 400)
    for lam in (0.3, 2.0, 25.0):
        direct = np.sum(stats.poisson.pmf(n, lam) / n)
        assert psi(torch.tensor(lam, dtype=torch.float64)).item() == pytest.approx(direct, 1e-10)


def test_psi_gradient_is_closed_form():
    x = torch.tensor(GRID, dtype=torch.float64, requires_grad=True)
    (grad,) = torch.autograd.grad(psi(x).sum(), x)
    mpmath.mp.dps = 40  # the closed form cancels to ~1/Λ² for large Λ: evaluate it exactly
    try:
        ref = np.array(
            [float((1 - mpmath.e ** -mpmath.mpf(v)) / v - psi_mpmath_exact(v)) for v in GRID]
        )
    finally:
        mpmath.mp.dps = 15
    np.testing.assert_allclose(grad.numpy(), ref, rtol=1e-6, atol=1e-300)
    zero = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    (g0,) = torch.autograd.grad(psi(zero).sum(), zero)
    assert g0.item() == pytest.approx(1.0)


def test_psi_gradcheck():
    x = torch.tensor([1e-3, 0.5, 3.0, 39.9, 40.1, 500.0], dtype=torch.float64)
    assert torch.autograd.gradcheck(psi, (x.requires_grad_(),))


def random_layer(
    seed, n_heads=2, n_windowed=1, dim=6, rate=1.0, query_prior=True, count_prior=False
):
    torch.manual_seed(seed)
    layer = LevyAttention(
        dim,
        n_heads,
        n_windowed,
        bandwidth=0.7,
        lookback=2.0,
        sharpness=2.0,
        query_prior=query_prior,
        count_prior=count_prior,
    )
    with torch.no_grad():
        layer.log_rate.copy_(torch.log(torch.full((n_heads,), rate)) + 0.3 * torch.randn(n_heads))
        layer.prior_mean.normal_()
        layer.prior_log_var.normal_(std=0.5)
        if query_prior:  # a prior that differs from query to query
            layer.prior_proj.weight.normal_(std=0.3)
            layer.prior_proj.bias.normal_(std=0.3)
        if count_prior:  # and from one number of observed keys to another
            layer.prior_count.normal_(std=0.5)
    return layer.double()


def random_inputs(seed, batch=2, n_query=3, n_key=6, dim=6, pad=True):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(batch, n_query, dim, generator=g, dtype=torch.float64)
    kv = torch.randn(batch, n_key, dim, generator=g, dtype=torch.float64)
    qt = 3 * torch.rand(batch, n_query, generator=g, dtype=torch.float64)
    kt = 3 * torch.rand(batch, n_key, generator=g, dtype=torch.float64)
    mask = torch.zeros(batch, n_key, dtype=torch.bool)
    if pad:
        mask[0, -2:] = True
    return q, kv, qt, kt, mask


def reference_weights(layer, q, kv, qt, kt, mask):
    """softmax_j(β cos + log w) computed independently in numpy/scipy."""
    h_all = layer.num_heads
    qq = layer.q_proj(q).detach().numpy().reshape(*q.shape[:2], h_all, -1)
    kk = layer.k_proj(kv).detach().numpy().reshape(*kv.shape[:2], h_all, -1)
    cos = np.einsum("bqhd,blhd->bhql", qq, kk)
    cos /= np.linalg.norm(qq, axis=-1).transpose(0, 2, 1)[..., None]
    cos /= np.linalg.norm(kk, axis=-1).transpose(0, 2, 1)[:, :, None, :]
    beta = np.exp(layer.log_sharpness.detach().numpy())
    h = np.exp(layer.log_bandwidth.detach().numpy())
    r = np.exp(layer.log_lookback.detach().numpy())
    lag = qt.numpy()[:, None, :, None] - kt.numpy()[:, None, None, :]
    w = np.ones_like(cos)
    windowed = np.arange(h_all) >= h_all - layer.num_windowed_heads
    hh, rr = h[None, :, None, None], r[None, :, None, None]
    w_win = stats.norm.cdf(lag / hh) - stats.norm.cdf((lag - rr) / hh)
    w = np.where(windowed[None, :, None, None], w_win, w)
    logits = beta[None, :, None, None] * cos + np.log(w)
    logits = np.where(mask.numpy()[:, None, None, :], -np.inf, logits)
    rate = np.exp(layer.log_rate.detach().numpy())
    kappa_w = np.exp(beta[None, :, None, None] * (cos - 1)) * w
    kappa_w = np.where(mask.numpy()[:, None, None, :], 0.0, kappa_w)
    evidence = rate[None, :, None] * kappa_w.sum(-1)
    return special.softmax(logits, axis=-1), evidence


@pytest.mark.parametrize("seed", range(3))
def test_weights_and_evidence_match_definition(seed):
    layer = random_layer(seed)
    inputs = random_inputs(seed)
    q, kv, qt, kt, mask = inputs
    m = layer.moments(q, KeySet(kv, kv, kt, mask), qt)
    ref_a, ref_lam = reference_weights(layer, *inputs)
    np.testing.assert_allclose(m.weights.detach().numpy(), ref_a, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(m.evidence.detach().numpy(), ref_lam, rtol=1e-9)


# (seed, heads, windowed heads, rate, count_prior): tiny rates put p₀ near 1 (the prior
# N(m₀, S₀) carries the output), large ones near 0 (the attended values do); the others mix
# both. With count_prior the prior also moves with the number of observed keys.
MC_LAYERS = [
    (0, 2, 1, 0.05, False),
    (1, 2, 0, 0.5, False),
    (2, 3, 2, 1.0, False),
    (3, 2, 1, 4.0, False),
    (4, 1, 1, 20.0, False),
    (5, 3, 1, 1e-3, False),
    (6, 2, 0, 1e-4, False),
    (7, 2, 1, 0.3, True),
    (8, 3, 0, 1e-3, True),
]
N_DRAWS = 100_000


@pytest.mark.parametrize(("seed", "heads", "windowed", "rate", "count_prior"), MC_LAYERS)
def test_closed_forms_match_monte_carlo(seed, heads, windowed, rate, count_prior):
    layer = random_layer(seed, heads, windowed, rate=rate, count_prior=count_prior)
    q, kv, qt, kt, mask = random_inputs(seed)
    with torch.no_grad():
        m = layer.moments(q, KeySet(kv, kv, kt, mask), qt)
        gen = torch.Generator().manual_seed(seed)
        draws = layer.sample(q, KeySet(kv, kv, kt, mask), qt, n_samples=N_DRAWS, generator=gen)
    # Mean of every component.
    mc_mean = draws.mean(0)
    se_mean = draws.std(0) / math.sqrt(N_DRAWS)
    assert ((mc_mean - m.mean).abs() <= 4 * se_mean + 1e-12).all()
    # Trace variance: E‖Y − E[Y]‖² using the closed-form mean (unbiased).
    sq = (draws - m.mean).pow(2).sum(-1)
    se_tr = sq.std(0) / math.sqrt(N_DRAWS)
    assert ((sq.mean(0) - m.trace_variance).abs() <= 4 * se_tr + 1e-12).all()
    # A random affine readout u = Σ_h w_hᵀ Y_h + b.
    w = torch.randn(q.shape[0], q.shape[1], heads, layer.head_dim, dtype=torch.float64)
    b = torch.randn(q.shape[0], q.shape[1], dtype=torch.float64)
    mean_u, var_u, _ = readout_moments(m, w, b)
    u = torch.einsum("sbhqd,bqhd->sbq", draws, w) + b
    assert ((u.mean(0) - mean_u).abs() <= 4 * u.std(0) / math.sqrt(N_DRAWS)).all()
    dev = (u - mean_u).pow(2)
    assert ((dev.mean(0) - var_u).abs() <= 4 * dev.std(0) / math.sqrt(N_DRAWS)).all()


def test_sampler_returns_the_closed_form_mean_without_a_second_pass():
    layer = random_layer(4, n_heads=3, n_windowed=1, count_prior=True)
    q, kv, qt, kt, mask = random_inputs(4)
    keys = KeySet(kv, kv, kt, mask)
    gen = torch.Generator().manual_seed(0)
    draws, mean = layer.sample(q, keys, qt, n_samples=5, generator=gen, return_mean=True)
    # The same draws as without the mean, and the mean of moments and forward.
    again = layer.sample(q, keys, qt, n_samples=5, generator=torch.Generator().manual_seed(0))
    assert torch.equal(draws, again)
    torch.testing.assert_close(mean, layer.moments(q, keys, qt).mean, rtol=0, atol=0)
    with torch.no_grad():
        torch.testing.assert_close(mean.transpose(1, 2).reshape(q.shape), layer(q, keys, qt))


def _moments(layer, q, kv, qt, kt, mask):
    return layer.moments(q, KeySet(kv, kv, kt, mask), qt)


@pytest.mark.parametrize("n_key", [6, 80])
@pytest.mark.parametrize("seed", range(3))
def test_fused_forward_equals_closed_form_mean(seed, n_key, monkeypatch):
    layer = random_layer(
        seed, n_heads=3, n_windowed=seed % 3, rate=10.0 ** (seed - 1), count_prior=seed == 1
    )
    q, kv, qt, kt, mask = random_inputs(seed, n_key=n_key)
    m = layer.moments(q, KeySet(kv, kv, kt, mask), qt)
    expected = m.mean.transpose(1, 2).reshape(q.shape)
    torch.testing.assert_close(layer(q, KeySet(kv, kv, kt, mask), qt), expected)
    # Without autograd, over many keys, forward takes the CPU kernel's logsumexp instead of
    # the sentinel key (over few keys _Attend does: the kernel is slower there).
    kernel_calls = []
    kernel = attention._FLASH_CPU
    monkeypatch.setattr(
        attention, "_FLASH_CPU", lambda *a, **k: kernel_calls.append(1) or kernel(*a, **k)
    )
    with torch.no_grad():
        torch.testing.assert_close(layer(q, KeySet(kv, kv, kt, mask), qt), expected)
    assert bool(kernel_calls) == (n_key >= attention._FUSE_MIN_KEYS)
    all_padded = torch.ones_like(mask)
    m0 = layer.moments(q, KeySet(kv, kv, kt, all_padded), qt)
    for grad in (True, False):
        with torch.set_grad_enabled(grad):
            torch.testing.assert_close(
                layer(q, KeySet(kv, kv, kt, all_padded), qt),
                m0.mean.transpose(1, 2).reshape(q.shape),
            )


@pytest.mark.parametrize("seed", range(4))
def test_fused_readout_equals_materialised_readout(seed):
    # Without autograd, readout's one pass over the stacked (s, s²) value columns must equal
    # moments + readout_moments, which the sampler tests verify.
    layer = random_layer(
        seed, n_heads=2, n_windowed=seed % 3, rate=10.0 ** (seed - 2), count_prior=seed % 2 == 1
    )
    q, kv, qt, kt, mask = random_inputs(seed)
    mask[1] = seed == 3  # one case with a fully padded row
    g = torch.Generator().manual_seed(seed)
    weight = torch.randn(5, 2, 3, generator=g, dtype=torch.float64)
    bias = torch.randn(5, generator=g, dtype=torch.float64)
    channels = torch.randint(0, 5, q.shape[:2], generator=g)
    # A second readout of which only the expectation is asked for (4 more columns).
    expect = (
        torch.randn(4, 2, 3, generator=g, dtype=torch.float64),
        torch.randn(4, generator=g, dtype=torch.float64),
    )
    m = layer.moments(q, KeySet(kv, kv, kt, mask), qt)
    mean, var, dis = readout_moments(m, weight[channels], bias[channels])
    expected = readout_moments(m, expect[0][channels % 4], expect[1][channels % 4])[0]
    reference = (mean, var, m.evidence.transpose(1, 2), dis)
    keys = KeySet(kv, kv, kt, mask)
    with torch.no_grad():
        fused = layer.readout(q, keys, weight, bias, channels, qt)
        fused_expect = layer.readout(q, keys, weight, bias, channels % 4, qt, expect=expect)
    for got, want in zip(fused, reference, strict=True):
        torch.testing.assert_close(got, want.detach(), rtol=1e-9, atol=1e-12)
    plain_expect = layer.readout(q, keys, weight, bias, channels % 4, qt, expect=expect)
    for got in (fused_expect[-1], plain_expect[-1]):
        torch.testing.assert_close(got, expected.detach(), rtol=1e-9, atol=1e-12)


def test_padded_keys_change_nothing():
    layer = random_layer(5)
    q, kv, qt, kt, _ = random_inputs(5, pad=False)
    base = _moments(layer, q, kv, qt, kt, None)
    garbage = 1e3 * torch.randn(q.shape[0], 3, q.shape[-1], dtype=torch.float64)
    kv2 = torch.cat([kv, garbage], 1)
    kt2 = torch.cat([kt, -50 * torch.ones(q.shape[0], 3, dtype=torch.float64)], 1)
    mask = torch.zeros(kv2.shape[:2], dtype=torch.bool)
    mask[:, -3:] = True
    padded = _moments(layer, q, kv2, qt, kt2, mask)
    for name in ("mean", "evidence", "trace_variance", "disagreement"):
        torch.testing.assert_close(getattr(padded, name), getattr(base, name))


def test_key_permutation_changes_nothing():
    layer = random_layer(6)
    q, kv, qt, kt, _ = random_inputs(6, pad=False)
    perm = torch.randperm(kv.shape[1])
    a = _moments(layer, q, kv, qt, kt, None)
    b = _moments(layer, q, kv[:, perm], qt, kt[:, perm], None)
    for name in ("mean", "evidence", "trace_variance"):
        torch.testing.assert_close(getattr(a, name), getattr(b, name))


def test_removing_a_key_lowers_evidence():
    layer = random_layer(7)
    q, kv, qt, kt, _ = random_inputs(7, pad=False)
    full = _moments(layer, q, kv, qt, kt, None).evidence
    fewer = _moments(layer, q, kv[:, 1:], qt, kt[:, 1:], None).evidence
    assert (fewer < full).all()


def test_huge_rate_collapses_variance_to_zero_and_mean_to_mu():
    layer = random_layer(8, rate=1e9)
    m = _moments(layer, *random_inputs(8))
    assert (m.trace_variance < 1e-6 * m.disagreement.clamp(min=1e-3)).all()
    torch.testing.assert_close(m.mean, m.mu)


@pytest.mark.parametrize("count_prior", [False, True])
def test_no_observed_key_gives_the_prior_exactly(count_prior):
    layer = random_layer(9, count_prior=count_prior)
    q, kv, qt, kt, _ = random_inputs(9)
    mask = torch.ones(kv.shape[:2], dtype=torch.bool)
    m = _moments(layer, q, kv, qt, kt, mask)
    assert (m.evidence == 0).all() and (m.p0 == 1).all()
    prior_mean, prior_var = layer.prior(q, KeySet(kv, kv, kt, mask))
    torch.testing.assert_close(m.mean, prior_mean.expand_as(m.mean), rtol=0, atol=0)
    # Through a readout the variance is wᵀS₀w exactly (not 0: nothing seen is not certainty).
    w = torch.randn(q.shape[0], q.shape[1], layer.num_heads, layer.head_dim, dtype=q.dtype)
    mean_u, var_u, _ = readout_moments(m, w)
    expected = torch.einsum("bqhd,bhqd->bq", w.pow(2), prior_var.expand_as(m.mean))
    torch.testing.assert_close(var_u, expected, rtol=1e-12, atol=0)
    torch.testing.assert_close(
        mean_u, torch.einsum("bqhd,bhqd->bq", w, prior_mean.expand_as(m.mean))
    )
    # One observed key raises Λ above 0 in every head; evidence never counts anything else.
    one = mask.clone()
    one[:, 0] = False
    assert (_moments(layer, q, kv, qt, kt, one).evidence > 0).all()


def test_prior_depends_on_the_query_never_on_the_keys():
    layer = random_layer(11)
    q, kv, qt, kt, mask = random_inputs(11)
    m = _moments(layer, q, kv, qt, kt, mask)
    m2 = _moments(layer, q, 5 * kv + 1, qt, kt + 1, ~mask)
    torch.testing.assert_close(m.prior_mean, m2.prior_mean, rtol=0, atol=0)
    torch.testing.assert_close(m.prior_var, m2.prior_var, rtol=0, atol=0)
    assert not torch.allclose(m.prior_mean[:, :, 0], m.prior_mean[:, :, 1])


def test_count_prior_sees_how_many_keys_never_which():
    layer = random_layer(12, count_prior=True)
    q, kv, qt, kt, _ = random_inputs(12, pad=False)
    mask = torch.zeros(kv.shape[:2], dtype=torch.bool)
    mask[:, :2] = True
    m = _moments(layer, q, kv, qt, kt, mask)
    # Other values and times, and other keys hidden: the same count, the same prior.
    shifted = torch.roll(mask, 3, dims=1)
    m2 = _moments(layer, q, 5 * kv + 1, qt, kt + 1, shifted)
    torch.testing.assert_close(m.prior_mean, m2.prior_mean, rtol=0, atol=0)
    torch.testing.assert_close(m.prior_var, m2.prior_var, rtol=0, atol=0)
    # log(1 + n) through the learned slopes, n the number of unpadded keys.
    n = torch.tensor(kv.shape[1] - 2.0, dtype=torch.float64)
    base_mean, base_var = random_layer(12).prior(q)
    torch.testing.assert_close(
        m.prior_mean, base_mean + torch.log1p(n) * layer.prior_count[0][None, :, None]
    )
    torch.testing.assert_close(
        m.prior_var, base_var * torch.exp(torch.log1p(n) * layer.prior_count[1][None, :, None])
    )
    # Evidence and weights do not see the prior's inputs.
    plain = random_layer(12)
    torch.testing.assert_close(m.evidence, _moments(plain, q, kv, qt, kt, mask).evidence)
    with pytest.raises(ValueError, match="count_prior"):
        layer.prior(q)


def test_gradcheck_layer_float64():
    layer = random_layer(10)
    q, kv, qt, kt, mask = random_inputs(10, batch=1, n_query=2, n_key=4)

    def fn(q, kv, qt, kt):
        m = layer.moments(q, KeySet(kv, kv, kt, mask), qt)
        return m.mean, m.trace_variance, m.evidence, layer(q, KeySet(kv, kv, kt, mask), qt)

    args = tuple(x.requires_grad_() for x in (q, kv, qt, kt))
    assert torch.autograd.gradcheck(fn, args)


@pytest.mark.parametrize("n_targets", [1, 3])
def test_gradcheck_readout_float64(n_targets):
    # Under autograd the readout runs the custom Function _Attend with its closed-form
    # backward (softmax, logsumexp and the q/k normalisation), one target through views.
    layer = random_layer(11, count_prior=True)
    q, kv, qt, kt, mask = random_inputs(11, batch=2, n_query=2, n_key=4)
    g = torch.Generator().manual_seed(n_targets)
    weight, expect_weight = (
        torch.randn(n_targets, 2, 3, generator=g, dtype=torch.float64) for _ in range(2)
    )
    bias, expect_bias = (
        torch.randn(n_targets, generator=g, dtype=torch.float64) for _ in range(2)
    )
    channels = torch.randint(0, n_targets, q.shape[:2], generator=g)

    def fn(q, kv, qt, kt, weight, bias, expect_weight, expect_bias):
        keys = KeySet(kv, kv, kt, mask)
        expect = (expect_weight, expect_bias)
        return layer.readout(q, keys, weight, bias, channels, qt, expect=expect)

    args = (q, kv, qt, kt, weight, bias, expect_weight, expect_bias)
    assert torch.autograd.gradcheck(fn, tuple(x.requires_grad_() for x in args))


def test_bad_configuration_errors():
    with pytest.raises(ValueError, match="divisible"):
        LevyAttention(10, num_heads=3)
    with pytest.raises(ValueError, match="num_windowed_heads"):
        LevyAttention(8, num_heads=2, num_windowed_heads=3)
    layer = LevyAttention(8, num_heads=2, num_windowed_heads=1)
    x = torch.randn(1, 3, 8)
    with pytest.raises(ValueError, match="query_times and the keys' times"):
        layer(x, KeySet(x, x))


def test_softmax_twin_is_scaled_dot_product_attention():
    torch.manual_seed(0)
    layer = SoftmaxAttention(8, num_heads=2).double()
    q, kv = torch.randn(2, 3, 8, dtype=torch.float64), torch.randn(2, 5, 8, dtype=torch.float64)
    mha = torch.nn.MultiheadAttention(8, 2, bias=True, batch_first=True).double()
    with torch.no_grad():
        mha.in_proj_weight.copy_(
            torch.cat([layer.q_proj.weight, layer.k_proj.weight, layer.v_proj.weight])
        )
        mha.in_proj_bias.copy_(
            torch.cat([layer.q_proj.bias, layer.k_proj.bias, layer.v_proj.bias])
        )
        mha.out_proj.weight.copy_(torch.eye(8))
        mha.out_proj.bias.zero_()
    torch.testing.assert_close(layer(q, KeySet(kv, kv)), mha(q, kv, kv, need_weights=False)[0])
