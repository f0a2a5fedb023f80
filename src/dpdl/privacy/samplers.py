"""Vectorized noise samplers that draw only from the ``numpy.random.Generator`` they are given.

Every sampler takes the generator as the required keyword ``rng`` and an output ``dtype``
(float32 or float64). The same generator state always gives the same array, and the amount of
randomness consumed depends only on ``size`` (never on the scale), so a run's stream stays aligned
when a scale changes.
"""

from __future__ import annotations

import math
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

from dpdl.privacy import _checks

Size: TypeAlias = int | tuple[int, ...]

_FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# Laplace magnitudes come from the 31 low bits of a uint32 word: u = (m + 1/2) / 2^31 in (0, 1).
_MAGNITUDE_BITS = 31
_LOG_UNIFORM_RANGE = np.float32(_MAGNITUDE_BITS * math.log(2.0))
_SIGN_BIT = np.uint32(0x8000_0000)
# Gaussian angles from whole uint32 words: theta = v 2 pi / 2^32 in [0, 2 pi).
_ANGLE_PER_WORD = np.float32(2.0 * math.pi / 2.0**32)


def laplace(
    *,
    rng: np.random.Generator,
    scale: npt.ArrayLike,
    size: Size,
    dtype: npt.DTypeLike = np.float64,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Draw i.i.d. Laplace(0, ``scale``) variates, about 3x faster than ``Generator.laplace``.

    Parameters
    ----------
    rng : numpy.random.Generator
        The only source of randomness.
    scale : float or array_like
        Laplace scale b >= 0 (the density is exp(-|x| / b) / (2 b)); an array must broadcast to
        ``size`` (for example one scale per agent). A zero scale gives zeros.
    size : int or tuple of int
        Output shape.
    dtype : {numpy.float64, numpy.float32}
        Output dtype.
    out : numpy.ndarray, optional
        A C-contiguous float32 array of shape ``size`` to draw into (``dtype`` float32), instead of
        a new array; the same values either way.

    Returns
    -------
    numpy.ndarray
        Array of shape ``size`` and dtype ``dtype`` (``out`` if given).

    Notes
    -----
    Inverse CDF from 32-bit words: the sign bit of each word is the sign of the draw, and the word
    read as a signed integer i gives u = |i + 1/2| / 2^31 in (0, 1], uniform on a grid symmetric
    about 0; the magnitude is -b ln(u), computed in float32 as b (31 ln 2 - ln|i + 1/2|). u is never
    0, so no infinity can occur. Values carry float32 rounding (absolute error below 4e-6 b, from
    the difference near u = 1) and reach at most
    32 ln(2) b = 22.2 b, where the exact tail mass is 2e-10 (float64 inverse CDF stops at 37 b).
    The words come from ``rng.bit_generator.random_raw``, two per 64-bit draw.
    """
    _require_generator(rng)
    out_dtype = _float_dtype(dtype)
    shape = _shape(size)
    scale = _scale("scale", scale, shape)
    n = math.prod(shape)
    words = rng.bit_generator.random_raw((n + 1) // 2).view(np.uint32)[:n]
    magnitude = _minus_log_uniform(words, _flat_out(out, shape, out_dtype))
    np.bitwise_and(words, _SIGN_BIT, out=words)
    np.bitwise_or(magnitude.view(np.uint32), words, out=magnitude.view(np.uint32))
    values = _scaled(magnitude.reshape(shape), scale, out_dtype)
    return values if out is None else out


def gaussian(
    *,
    rng: np.random.Generator,
    scale: npt.ArrayLike,
    size: Size,
    dtype: npt.DTypeLike = np.float64,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Draw i.i.d. Gaussian N(0, ``scale``^2) variates, about 3x faster than ``Generator.standard_normal``.

    Parameters
    ----------
    rng : numpy.random.Generator
        The only source of randomness.
    scale : float or array_like
        Standard deviation >= 0; an array must broadcast to ``size``. A zero scale gives zeros.
    size : int or tuple of int
        Output shape.
    dtype : {numpy.float64, numpy.float32}
        Output dtype.
    out : numpy.ndarray, optional
        A C-contiguous float32 array of shape ``size`` to draw into (``dtype`` float32), instead of
        a new array; the same values either way.

    Returns
    -------
    numpy.ndarray
        Array of shape ``size`` and dtype ``dtype`` (``out`` if given).

    Notes
    -----
    Box-Muller in float32 from 32-bit words, row by row: a size with two or more axes is drawn as
    rows along its first axis (one row for a 1-d size), so size (a + b, ...) gives the rows of
    size (a, ...) followed by those of size (b, ...), as a loop over the first axis would. Pair k
    of a row of length m takes a radius word and an angle word and gives r cos(theta) (element k)
    and r sin(theta) (element k + ceil(m/2)), two independent standard normals. As in
    :func:`laplace`, the radius word read as a signed integer i gives u = |i + 1/2| / 2^31 in
    (0, 1] and r = sqrt(-2 ln u); theta = 2 pi v / 2^32 for the angle word v. Values carry
    float32 rounding and reach at most sqrt(64 ln 2) = 6.66 standard deviations (exact tail
    mass 2.7e-11). The words come from ``rng.bit_generator.random_raw``, one 64-bit draw per pair.
    """
    _require_generator(rng)
    out_dtype = _float_dtype(dtype)
    shape = _shape(size)
    scale = _scale("scale", scale, shape)
    rows, length = (shape[0], math.prod(shape[1:])) if len(shape) > 1 else (1, math.prod(shape))
    pairs = (length + 1) // 2
    words = rng.bit_generator.random_raw(rows * pairs).view(np.uint32).reshape(rows, 2 * pairs)
    radius = _minus_log_uniform(words[:, :pairs])
    np.maximum(radius, np.float32(0.0), out=radius)  # float32 rounding at u = 1
    radius *= np.float32(2.0)
    np.sqrt(radius, out=radius)  # r = sqrt(-2 ln u)
    target = _flat_out(out, shape, out_dtype)
    into_target = target is not None and length % 2 == 0
    if into_target:
        noise = target.reshape(rows, 2 * pairs)
    else:
        noise = np.empty((rows, 2 * pairs), dtype=np.float32)
    cosine, sine = noise[:, :pairs], noise[:, pairs:]
    np.multiply(words[:, pairs:], _ANGLE_PER_WORD, out=cosine, dtype=np.float32)  # theta
    np.sin(cosine, out=sine)
    np.cos(cosine, out=cosine)
    cosine *= radius
    sine *= radius
    values = noise[:, :length].reshape(shape)
    if target is not None and not into_target:
        out[...] = values  # an odd row length needs the padded pair buffer
        values = out
    values = _scaled(values, scale, out_dtype)
    return values if out is None else out


def norm_exponential(
    *,
    rng: np.random.Generator,
    zeta: npt.ArrayLike,
    d: int,
    size: Size,
    dtype: npt.DTypeLike = np.float64,
) -> np.ndarray:
    """Draw vectors e in R^d with density proportional to exp(-zeta * ||e||_2) (Zhang & Zhu).

    Parameters
    ----------
    rng : numpy.random.Generator
        The only source of randomness.
    zeta : float or array_like
        Rate zeta > 0 (``inf`` gives zero vectors); an array must broadcast to ``size``, e.g. one
        rate per node.
    d : int
        Dimension of each vector.
    size : int or tuple of int
        Number (shape) of vectors.
    dtype : {numpy.float64, numpy.float32}
        Output dtype.

    Returns
    -------
    numpy.ndarray
        Array of shape ``size + (d,)``; each vector's norm is Gamma(d, 1/zeta), so its mean is
        d / zeta, and its direction is uniform on the sphere.

    Notes
    -----
    References: Zhang & Zhu, noise density of DVP and PVP and Lemma 8 (journal) / Lemma 11
    (conference): "||epsilon|| is drawn from Gamma(d, 1/zeta)". The direction is a standard normal
    vector divided by its norm (an exactly zero vector is redrawn).
    """
    _require_generator(rng)
    out_dtype = _float_dtype(dtype)
    d = _checks.count("d", d)
    shape = _shape(size)
    zeta = np.asarray(zeta, dtype=np.float64)
    if not np.all(zeta > 0):
        raise ValueError(f"zeta must be in (0, inf]; got {zeta!r}")
    _broadcasts("zeta", zeta, shape)
    direction = rng.standard_normal(shape + (d,), dtype=out_dtype)
    length = np.linalg.norm(direction, axis=-1, keepdims=True)
    while not np.all(length > 0):
        zero = (length == 0)[..., 0]
        direction[zero] = rng.standard_normal((int(zero.sum()), d), dtype=out_dtype)
        length[zero] = np.linalg.norm(direction[zero], axis=-1, keepdims=True)
    radius = rng.standard_gamma(float(d), size=shape, dtype=out_dtype)
    radius /= zeta.astype(out_dtype)
    direction *= radius[..., np.newaxis] / length
    return direction


def _minus_log_uniform(words: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """-ln(u) in float32 for u = |i + 1/2| / 2^31, each uint32 word read as a signed integer i.

    i + 1/2 is symmetric about 0, so u is uniform on (0, 1] and never 0. Written into ``out`` (a
    float32 array shaped like ``words``) if given.
    """
    values = np.add(words.view(np.int32), np.float32(0.5), out=out, dtype=np.float32)
    np.abs(values, out=values)
    np.log(values, out=values)
    np.subtract(_LOG_UNIFORM_RANGE, values, out=values)  # -ln(u) = 31 ln 2 - ln|i + 1/2|
    return values


def _scaled(values: np.ndarray, scale: float | np.ndarray, out_dtype: np.dtype) -> np.ndarray:
    """float32 ``values`` times ``scale``, in place for float32 output, else as float64."""
    if out_dtype == np.float32:
        if not (isinstance(scale, float) and scale == 1.0):  # a unit scale is exact: skip the pass
            values *= np.asarray(scale, dtype=np.float32)
        return values
    return np.multiply(values, scale, dtype=np.float64)


def _flat_out(out: np.ndarray | None, shape: tuple[int, ...], out_dtype: np.dtype) -> np.ndarray | None:
    """``out`` as a flat view after checking it can receive a float32 draw of ``shape``; None stays None."""
    if out is None:
        return None
    if not (
        isinstance(out, np.ndarray)
        and out.dtype == np.float32 == out_dtype
        and out.shape == shape
        and out.flags.c_contiguous
    ):
        raise ValueError(f"out must be a C-contiguous float32 array of shape {shape} with dtype float32")
    return out.reshape(-1)


def _require_generator(rng: object) -> None:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator; got {type(rng).__name__}")


def _float_dtype(dtype: npt.DTypeLike) -> np.dtype:
    resolved = np.dtype(dtype)
    if resolved not in _FLOAT_DTYPES:
        raise ValueError(f"dtype must be float32 or float64; got {resolved}")
    return resolved


def _shape(size: Size) -> tuple[int, ...]:
    dims = size if isinstance(size, tuple) else (size,) if np.ndim(size) == 0 else tuple(size)
    return tuple(_checks.count("size", dim, minimum=0) for dim in dims)


def _scale(name: str, scale: npt.ArrayLike, shape: tuple[int, ...]) -> float | np.ndarray:
    if isinstance(scale, float):  # a scalar, checked without numpy's per-call cost (dp_iadmm calls often)
        if not (math.isfinite(scale) and scale >= 0):
            raise ValueError(f"{name} must be finite and >= 0; got {scale!r}")
        return float(scale)
    values = np.asarray(scale, dtype=np.float64)
    if not (np.all(values >= 0) and np.all(np.isfinite(values))):
        raise ValueError(f"{name} must be finite and >= 0; got {scale!r}")
    _broadcasts(name, values, shape)
    return float(values) if values.ndim == 0 else values


def _broadcasts(name: str, values: np.ndarray, shape: tuple[int, ...]) -> None:
    try:
        broadcast = np.broadcast_shapes(values.shape, shape)
    except ValueError:
        broadcast = None
    if broadcast != shape:
        raise ValueError(f"{name} of shape {values.shape} must broadcast to size {shape}")
