"""dpdl.privacy samplers: goodness of fit, reproducibility, dtypes, scales and argument checks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpdl.privacy.samplers import gaussian, laplace, norm_exponential

SEED = 20240611
KS_SAMPLE = 400_000
# A correct sampler fails a KS test at this level once in 1e4 runs; the seed is fixed anyway.
KS_P_MIN = 1e-4
DTYPES = [np.float32, np.float64]
DTYPE_IDS = ["float32", "float64"]


def _rng(offset: int = 0) -> np.random.Generator:
    return np.random.default_rng(SEED + offset)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_laplace_passes_ks_against_scipy_laplace(dtype):
    draws = laplace(rng=_rng(), scale=1.7, size=KS_SAMPLE, dtype=dtype)
    assert stats.kstest(draws.astype(np.float64), stats.laplace(scale=1.7).cdf).pvalue > KS_P_MIN


def test_laplace_tail_is_not_truncated():
    scale, n, threshold = 0.5, 4_000_000, 10.0
    draws = laplace(rng=_rng(1), scale=scale, size=n)
    expected = n * math.exp(-threshold)  # P(|X| > 10 b) = e^-10, about 182 draws
    observed = int(np.count_nonzero(np.abs(draws) > threshold * scale))
    assert abs(observed - expected) < 5 * math.sqrt(expected)
    assert np.all(np.isfinite(draws)) and np.abs(draws).max() <= 32 * math.log(2) * scale


def test_laplace_is_symmetric_with_mean_zero_and_variance_2b2():
    draws = laplace(rng=_rng(2), scale=3.0, size=1_000_000)
    assert abs(draws.mean()) < 5 * math.sqrt(18.0 / draws.size)
    assert draws.var() == pytest.approx(18.0, rel=0.01)
    assert abs(np.mean(draws > 0) - 0.5) < 5 * math.sqrt(0.25 / draws.size)


def test_laplace_accepts_a_per_agent_scale_array():
    scales = np.array([0.0, 1.0, 100.0])[:, None]
    draws = laplace(rng=_rng(3), scale=scales, size=(3, 50_000))
    assert np.all(draws[0] == 0)
    assert np.mean(np.abs(draws[2])) / np.mean(np.abs(draws[1])) == pytest.approx(100.0, rel=0.03)


def _words(seed_offset: int, raw_draws: int) -> np.ndarray:
    """The uint32 words a sampler reads from ``_rng(seed_offset)``: the 64-bit draws, low half first."""
    return _rng(seed_offset).bit_generator.random_raw(raw_draws).view(np.uint32)


def _minus_log_uniform(words: np.ndarray) -> np.ndarray:
    """-ln(u) in float64 for u = |i + 1/2| / 2^31, each word read as a signed integer i."""
    return -np.log(np.abs(words.view(np.int32).astype(np.float64) + 0.5) / 2.0**31)


def test_laplace_is_the_inverse_cdf_of_its_words():
    # Each value is sign(word) (-b ln u) from its own word, in order (size 9: the last 64-bit
    # draw's high half is unused).
    b, size = 2.5, (3, 3)
    draws = laplace(rng=_rng(9), scale=b, size=size, dtype=np.float32).ravel()
    words = _words(9, 5)[:9]
    expected = np.where(words.view(np.int32) < 0, -1.0, 1.0) * b * _minus_log_uniform(words)
    # float32: -ln u = 31 ln 2 - ln|i + 1/2| loses up to a few ulps of 21.5 (2e-6) near u = 1
    np.testing.assert_allclose(draws, expected, rtol=1e-6, atol=4e-6 * b)
    assert np.array_equal(np.signbit(draws), words.view(np.int32) < 0)


def test_gaussian_is_box_muller_of_its_words():
    # Row of length 7: 4 pairs from 4 64-bit draws, radius words first, then angle words;
    # pair k gives r cos(theta) at k and r sin(theta) at k + 4 (the last sine is dropped).
    sigma, rows, length = 0.5, 2, 7
    draws = gaussian(rng=_rng(10), scale=sigma, size=(rows, length), dtype=np.float32)
    words = _words(10, rows * 4).reshape(rows, 8)
    radius = np.sqrt(2.0 * _minus_log_uniform(words[:, :4].copy()))
    theta = words[:, 4:].astype(np.float64) * 2.0 * math.pi / 2.0**32
    expected = sigma * np.concatenate([radius * np.cos(theta), radius * np.sin(theta)], axis=1)[:, :length]
    np.testing.assert_allclose(draws, expected, rtol=1e-6, atol=4e-6 * sigma)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_gaussian_passes_ks_against_normal(dtype):
    draws = gaussian(rng=_rng(4), scale=0.3, size=KS_SAMPLE, dtype=dtype)
    assert stats.kstest(draws.astype(np.float64), stats.norm(scale=0.3).cdf).pvalue > KS_P_MIN


def test_gaussian_pairs_are_independent_normals():
    # Box-Muller: outputs k and k + n/2 share one (r, theta); independence means their squared
    # sum is chi-square with 2 degrees of freedom and their angle is uniform.
    n = KS_SAMPLE
    draws = gaussian(rng=_rng(5), scale=1.0, size=n).reshape(2, n // 2)
    assert stats.kstest(draws[0] ** 2 + draws[1] ** 2, stats.chi2(df=2).cdf).pvalue > KS_P_MIN
    angle = np.arctan2(draws[1], draws[0])
    assert stats.kstest(angle, stats.uniform(loc=-math.pi, scale=2 * math.pi).cdf).pvalue > KS_P_MIN
    assert abs(np.corrcoef(draws[0], draws[1])[0, 1]) < 5 / math.sqrt(n // 2)


def test_gaussian_tail_and_variance():
    scale, n, threshold = 2.0, 4_000_000, 4.0
    draws = gaussian(rng=_rng(6), scale=scale, size=n)
    expected = n * 2 * stats.norm.sf(threshold)  # P(|X| > 4 sigma) = 6.3e-5, about 253 draws
    observed = int(np.count_nonzero(np.abs(draws) > threshold * scale))
    assert abs(observed - expected) < 5 * math.sqrt(expected)
    assert draws.var() == pytest.approx(scale**2, rel=0.01)
    assert np.all(np.isfinite(draws)) and np.abs(draws).max() <= math.sqrt(64 * math.log(2)) * scale


def test_gaussian_draws_rows_along_the_first_axis_in_sequence():
    # What lets dp_iadmm draw its agents' noise chunk by chunk from one stream (odd row length 21).
    whole = gaussian(rng=_rng(8), scale=1.0, size=(5, 7, 3))
    rng = _rng(8)
    parts = [gaussian(rng=rng, scale=1.0, size=(rows, 7, 3)) for rows in (2, 3)]
    np.testing.assert_array_equal(whole, np.concatenate(parts))


@pytest.mark.parametrize("size", [0, 1, 7, (3, 5)], ids=["empty", "one", "odd", "matrix"])
def test_gaussian_odd_and_empty_sizes(size):
    draws = gaussian(rng=_rng(7), scale=1.0, size=size, dtype=np.float32)
    assert draws.shape == ((size,) if np.ndim(size) == 0 else size)
    assert draws.dtype == np.float32 and np.all(np.isfinite(draws))


@pytest.mark.parametrize("d", [1, 3, 62], ids=["d1", "d3", "d62"])
def test_norm_exponential_norm_is_gamma_d_over_zeta(d):
    zeta = 0.4
    vectors = norm_exponential(rng=_rng(5), zeta=zeta, d=d, size=100_000)
    norms = np.linalg.norm(vectors, axis=-1)
    assert vectors.shape == (100_000, d)
    assert norms.mean() == pytest.approx(d / zeta, rel=0.01)  # E||e|| = d / zeta
    assert stats.kstest(norms, stats.gamma(a=d, scale=1 / zeta).cdf).pvalue > KS_P_MIN


def test_norm_exponential_direction_is_uniform_on_the_sphere():
    # For d = 3 each coordinate of a uniform unit vector is uniform on [-1, 1] (Archimedes).
    vectors = norm_exponential(rng=_rng(6), zeta=2.0, d=3, size=200_000)
    cosines = vectors[:, 0] / np.linalg.norm(vectors, axis=-1)
    assert stats.kstest(cosines, stats.uniform(loc=-1, scale=2).cdf).pvalue > KS_P_MIN


def test_norm_exponential_per_node_rates_and_infinite_rate():
    zetas = np.array([1.0, 4.0, math.inf])[:, None]
    vectors = norm_exponential(rng=_rng(7), zeta=zetas, d=5, size=(3, 40_000))
    norms = np.linalg.norm(vectors, axis=-1)
    assert norms[0].mean() == pytest.approx(5.0, rel=0.02)
    assert norms[1].mean() == pytest.approx(1.25, rel=0.02)
    assert np.all(norms[2] == 0)


@pytest.mark.parametrize(
    "draw",
    [
        lambda rng, dtype: laplace(rng=rng, scale=2.0, size=(4, 7), dtype=dtype),
        lambda rng, dtype: gaussian(rng=rng, scale=2.0, size=(4, 7), dtype=dtype),
        lambda rng, dtype: norm_exponential(rng=rng, zeta=2.0, d=7, size=4, dtype=dtype),
    ],
    ids=["laplace", "gaussian", "norm_exponential"],
)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_same_seed_same_array_and_dtype_respected(draw, dtype):
    first, second = draw(_rng(8), dtype), draw(_rng(8), dtype)
    assert first.dtype == np.dtype(dtype) and first.shape == (4, 7)
    np.testing.assert_array_equal(first, second)
    assert not np.array_equal(first, draw(_rng(9), dtype))


def test_stream_consumption_does_not_depend_on_scale():
    rng_a, rng_b = _rng(10), _rng(10)
    laplace(rng=rng_a, scale=0.0, size=1001)
    laplace(rng=rng_b, scale=5.0, size=1001)
    assert rng_a.random() == rng_b.random()


def test_samplers_never_touch_global_numpy_state():
    np.random.seed(0)
    before = np.random.get_state()[1].copy()
    laplace(rng=_rng(11), scale=1.0, size=100)
    gaussian(rng=_rng(11), scale=1.0, size=100)
    norm_exponential(rng=_rng(11), zeta=1.0, d=3, size=100)
    np.testing.assert_array_equal(np.random.get_state()[1], before)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: laplace(rng=_rng(), scale=-1.0, size=3), "scale must be finite and >= 0"),
        (lambda: laplace(rng=_rng(), scale=math.inf, size=3), "scale must be finite and >= 0"),
        (lambda: laplace(rng=_rng(), scale=1.0, size=3, dtype=np.int64), "dtype must be float32"),
        (lambda: laplace(rng=_rng(), scale=np.ones(4), size=3), "scale of shape"),
        (lambda: gaussian(rng=_rng(), scale=np.nan, size=3), "scale must be finite and >= 0"),
        (
            lambda: norm_exponential(rng=_rng(), zeta=0.0, d=3, size=2),
            r"zeta must be in \(0, inf\]",
        ),
        (lambda: norm_exponential(rng=_rng(), zeta=1.0, d=0, size=2), "d must be an integer >= 1"),
        (lambda: gaussian(rng=_rng(), scale=1.0, size=-2), "size must be an integer >= 0"),
    ],
    ids=["negative", "infinite", "int_dtype", "bad_shape", "nan", "zeta_zero", "d_zero", "size"],
)
def test_invalid_arguments_raise_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_rng_must_be_a_generator():
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        laplace(rng=np.random.RandomState(0), scale=1.0, size=3)


@pytest.mark.parametrize("sampler", [laplace, gaussian])
@pytest.mark.parametrize("size", [(3, 8), (3, 7)], ids=["even", "odd"])
def test_drawing_into_out_gives_the_same_values(sampler, size):
    out = np.full(size, np.nan, dtype=np.float32)
    returned = sampler(rng=_rng(12), scale=[[0.5], [1.0], [2.0]], size=size, dtype=np.float32, out=out)
    assert returned is out
    np.testing.assert_array_equal(
        out, sampler(rng=_rng(12), scale=[[0.5], [1.0], [2.0]], size=size, dtype=np.float32)
    )


@pytest.mark.parametrize(
    "out", [np.empty((3, 4), np.float64), np.empty((4, 3), np.float32), np.empty((3, 8), np.float32)[:, ::2]]
)
def test_out_must_be_a_contiguous_float32_array_of_the_size(out):
    with pytest.raises(ValueError, match="out must be"):
        laplace(rng=_rng(1), scale=1.0, size=(3, 4), dtype=np.float32, out=out)
