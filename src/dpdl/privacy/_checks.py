"""Domain checks shared by the privacy modules.

Each check returns the validated value and raises ``ValueError`` naming the argument, the allowed
range and the value received, so a caller can act on the message without reading the code.
"""

from __future__ import annotations

import math
import operator

import numpy as np


def _first_bad(name: str, value: np.ndarray, ok: np.ndarray, allowed: str):
    """Raise for the first element of ``value`` where ``ok`` is False.

    This is how an array is checked element by element.
    """
    if not ok.all():
        raise ValueError(f"{name} must be in {allowed}; got {value[~ok].flat[0]!r}")


def positive(name: str, value: float, *, allow_inf: bool = False) -> float:
    """Return ``value`` as a float if it is > 0 (and finite unless ``allow_inf``).

    An array is checked and returned element by element.
    """
    upper = "inf]" if allow_inf else "inf)"
    if isinstance(value, np.ndarray):
        numbers = value.astype(np.float64)
        _first_bad(name, value, (numbers > 0) & (allow_inf | np.isfinite(numbers)), f"(0, {upper}")
        return numbers
    number = float(value)
    if not number > 0 or (math.isinf(number) and not allow_inf):
        raise ValueError(f"{name} must be in (0, {upper}; got {value!r}")
    return number


def nonnegative(name: str, value: float) -> float:
    """Return ``value`` as a float if it is finite and >= 0; an array element by element."""
    if isinstance(value, np.ndarray):
        numbers = value.astype(np.float64)
        _first_bad(name, value, (numbers >= 0) & np.isfinite(numbers), "[0, inf)")
        return numbers
    number = float(value)
    if not (number >= 0 and math.isfinite(number)):
        raise ValueError(f"{name} must be in [0, inf); got {value!r}")
    return number


def open_unit(name: str, value: float) -> float:
    """Return ``value`` as a float if it lies in the open interval (0, 1), as delta must."""
    number = float(value)
    if not 0 < number < 1:
        raise ValueError(f"{name} must be in (0, 1); got {value!r}")
    return number


def count(name: str, value: int, *, minimum: int = 1) -> int:
    """Return ``value`` as an int if it is an integer >= ``minimum`` (not a float or a bool).

    An array of integers is checked and returned element by element.
    """
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "iu":
            raise ValueError(f"{name} must hold integers >= {minimum}; got an array of {value.dtype}")
        _first_bad(name, value, value >= minimum, f"the integers >= {minimum}")
        return value.astype(np.int64)
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    try:
        number = operator.index(value)
    except TypeError:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}") from None
    if number < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    return number


def choice(name: str, value: str, allowed: tuple[str, ...]) -> str:
    """Return ``value`` if it is one of ``allowed`` (the values of a named switch)."""
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {value!r}")
    return value
