"""Client partitions of Kang, Liu & Wang's experiments (wddp.md 4.3): sizes, floors, unevenness."""

from __future__ import annotations

import numpy as np
import pytest

from dpdl.data.partition import shards_of_sizes, threshold_random_sizes, two_group_sizes
from dpdl.errors import ConfigError


@pytest.mark.parametrize("n_rows", [50_000, 30_162, 997], ids=["kdd", "adult", "odd"])
@pytest.mark.parametrize("agents", [2, 4, 8, 16, 32], ids=lambda m: f"m{m}")
def test_threshold_sizes_sum_to_n_and_respect_the_floor(n_rows: int, agents: int) -> None:
    rng = np.random.default_rng(agents)
    sizes = threshold_random_sizes(n_rows, agents, threshold_fraction=0.2, rng=rng)
    floor = max(2, int(np.ceil(0.2 * n_rows / agents)))
    assert sizes.sum() == n_rows and len(sizes) == agents
    assert sizes.min() >= floor
    assert n_rows / (agents * sizes.min()) <= 5 + 1e-12  # the noise ratio is at most 1 / 0.2 (wddp.md 4.3)


def test_threshold_sizes_are_uneven_and_seeded() -> None:
    a = threshold_random_sizes(10_000, 8, threshold_fraction=0.2, rng=np.random.default_rng(3))
    b = threshold_random_sizes(10_000, 8, threshold_fraction=0.2, rng=np.random.default_rng(3))
    assert (a == b).all() and a.max() > a.min()


def test_full_threshold_gives_equal_sizes() -> None:
    sizes = threshold_random_sizes(800, 8, threshold_fraction=1.0, rng=np.random.default_rng(0))
    assert (sizes == 100).all()


@pytest.mark.parametrize("u", range(1, 10), ids=lambda u: f"u{u}")
@pytest.mark.parametrize(
    ("n_rows", "agents"), [(50_000, 16), (50_000, 32), (30_162, 8)], ids=["kdd16", "kdd32", "adult8"]
)
def test_two_groups_realize_u_within_rounding(n_rows: int, agents: int, u: int) -> None:
    sizes = two_group_sizes(n_rows, agents, u)
    small, large = sizes[: agents // 2], sizes[agents // 2 :]
    assert sizes.sum() == n_rows and len(sizes) == agents
    assert (small == small[0]).all() and large.max() - large.min() <= 1
    # rounding: n_small is a floor and the large clients absorb the leftovers
    assert u <= sizes.max() / sizes.min() <= u + (agents / 2 * (1 + u) + 1) / sizes.min()
    assert sizes.max() / sizes.min() == pytest.approx(u, rel=0.02)


def test_two_groups_at_u1_with_divisible_n_are_equal() -> None:
    assert (two_group_sizes(50_000, 16, 1) == 3125).all()


def test_shards_cover_every_row_once() -> None:
    sizes = np.array([3, 5, 2])
    shards = shards_of_sizes(sizes, rng=np.random.default_rng(0))
    assert [len(s) for s in shards] == [3, 5, 2]
    assert sorted(np.concatenate(shards).tolist()) == list(range(10))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: threshold_random_sizes(10, 8, threshold_fraction=0.2, rng=np.random.default_rng(0)),
            "8 clients of at least 2 rows need 16 rows",
        ),
        (
            lambda: threshold_random_sizes(100, 2, threshold_fraction=1.5, rng=np.random.default_rng(0)),
            r"threshold_fraction must be in \[0, 1\]",
        ),
        (lambda: two_group_sizes(100, 3, 2), "even number of clients"),
        (lambda: two_group_sizes(100, 4, 0.5), "must be >= 1"),
        (lambda: two_group_sizes(10, 8, 9), "cannot give 4 small clients"),
        (lambda: shards_of_sizes(np.array([2, 0]), rng=np.random.default_rng(0)), "positive counts"),
    ],
    ids=["too_many_clients", "bad_fraction", "odd_clients", "u_below_one", "too_uneven", "empty_shard"],
)
def test_bad_partitions_name_the_problem(call, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        call()
