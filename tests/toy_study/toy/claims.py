"""The toy's claims: a trend and a stated number, judged per seed by the project's verdict engine."""

from __future__ import annotations

import pandas as pd

from dpdl.claims import MECHANISM_PROPERTY, PAPER_NUMBER, Claim, trend_series
from dpdl.verdicts import StatedNumber, Trend
from toy.grid import STATED_EPSILON, STUDY

CLAIM_TABLE_COLUMNS = {"error_seeds": ["epsilon", "seed", "value"]}  # each table the claims read: its columns
RECORDS = 100  # the n the stated number is printed for (the schema's default)


def _by_epsilon(table: pd.DataFrame):
    return trend_series(table.assign(mechanism="laplace"), series=["mechanism"], x="epsilon")


def _at_stated_epsilon(table: pd.DataFrame):
    return table.loc[table["epsilon"] == STATED_EPSILON, "value"].to_numpy(float)


CLAIMS = [
    Claim(
        f"{STUDY}.error_falls_with_epsilon",
        STUDY,
        "Example 1",
        "the error of the Laplace-noised mean falls as epsilon grows",
        MECHANISM_PROPERTY,
        Trend("decreasing"),
        "the noise scale is 1 / (n epsilon): any working mechanism's error falls with epsilon, within seeds",
        "error_seeds",
        _by_epsilon,
        {"seeds": 10},
    ),
    Claim(
        f"{STUDY}.error_at_epsilon_1",
        STUDY,
        "Example 1",
        "at epsilon = 1 the mean absolute error is 1 / n = 0.01 for n = 100 records",
        PAPER_NUMBER,
        StatedNumber(1 / RECORDS, 0.5, relative=True),
        "E|Laplace(b)| = b = 1 / (n epsilon); half the value either way leaves room for 200 draws' spread",
        "error_seeds",
        _at_stated_epsilon,
        {"seeds": 10},
    ),
]
