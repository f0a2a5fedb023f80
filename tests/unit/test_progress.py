"""Progress logging: periodic, with elapsed time and an estimate of the time left."""

from __future__ import annotations

import logging

import pytest

from dpdl import progress


def logged(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, times, total: int, updates
) -> list:
    """The lines a Progress of ``total`` iterations logs for ``updates``, its clock reading ``times`` in turn."""
    clock = iter(times)
    monkeypatch.setattr(progress.time, "perf_counter", lambda: next(clock))
    tracker = progress.Progress("run", total)
    caplog.set_level(logging.INFO, logger="dpdl.progress")
    for done in updates:
        tracker.update(done)
    return [r.getMessage() for r in caplog.records]


def test_logs_at_the_interval_and_at_the_end(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # t = 10: too soon (the pace is measured from here); t = 31: logged, 1 done in 21 s -> about 42 s left;
    # t = 40: too soon; t = 50: the end is always logged
    assert logged(monkeypatch, caplog, [0.0, 10.0, 31.0, 40.0, 50.0], 4, [1, 2, 3, 4]) == [
        "run: iteration 2/4, elapsed 31 s, about 42 s left",
        "run: iteration 4/4, elapsed 50 s, about 0 s left",
    ]


def test_a_resumed_run_is_timed_from_where_it_resumed(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # t = 1: the first iteration after the saved state at 4,697; t = 31: 100 iterations in 30 s -> 15,202 left
    # take about 4,561 s
    assert logged(monkeypatch, caplog, [0.0, 1.0, 31.0], 20_000, [4_698, 4_798]) == [
        "run: iteration 4798/20000, elapsed 31 s, about 4561 s left"
    ]


def test_a_first_update_past_the_interval_says_the_pace_is_not_yet_known(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The JAX run reports once per chunk of 1,000 iterations: its first line has no pace to go by (not 'nan')."""
    # 1,000 in 165 s -> 18,000 left take about 2,970 s
    assert logged(monkeypatch, caplog, [0.0, 165.0, 330.0], 20_000, [1_000, 2_000]) == [
        "run: iteration 1000/20000, elapsed 165 s, time left known at the next update",
        "run: iteration 2000/20000, elapsed 330 s, about 2970 s left",
    ]
