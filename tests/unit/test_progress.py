"""Progress logging: periodic, with elapsed time and an estimate of the time left."""

from __future__ import annotations

import logging

import pytest

from dpdl import progress


def test_logs_at_the_interval_and_at_the_end(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    clock = iter([0.0, 10.0, 31.0, 40.0, 50.0])
    monkeypatch.setattr(progress.time, "perf_counter", lambda: next(clock))
    tracker = progress.Progress("run", 4)
    caplog.set_level(logging.INFO, logger="dpdl.progress")
    tracker.update(1)  # t = 10: too soon (the pace is measured from here)
    tracker.update(2)  # t = 31: logged, 1 done in 21 s -> about 42 s left
    tracker.update(3)  # t = 40: too soon
    tracker.update(4)  # t = 50: the end is always logged
    assert [r.getMessage() for r in caplog.records] == [
        "run: iteration 2/4, elapsed 31 s, about 42 s left",
        "run: iteration 4/4, elapsed 50 s, about 0 s left",
    ]


def test_a_resumed_run_is_timed_from_where_it_resumed(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    clock = iter([0.0, 1.0, 31.0])
    monkeypatch.setattr(progress.time, "perf_counter", lambda: next(clock))
    tracker = progress.Progress("run", 20_000)
    caplog.set_level(logging.INFO, logger="dpdl.progress")
    tracker.update(4_698)  # t = 1: the first iteration after the saved state at 4,697
    tracker.update(4_798)  # t = 31: 100 iterations in 30 s -> 15,202 left take about 4,561 s
    assert [r.getMessage() for r in caplog.records] == ["run: iteration 4798/20000, elapsed 31 s, about 4561 s left"]


def test_a_first_update_past_the_interval_says_the_pace_is_not_yet_known(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The JAX run reports once per chunk of 1,000 iterations: its first line has no pace to go by (not 'nan')."""
    clock = iter([0.0, 165.0, 330.0])
    monkeypatch.setattr(progress.time, "perf_counter", lambda: next(clock))
    tracker = progress.Progress("run", 20_000)
    caplog.set_level(logging.INFO, logger="dpdl.progress")
    tracker.update(1_000)
    tracker.update(2_000)  # 1,000 in 165 s -> 18,000 left take about 2,970 s
    assert [r.getMessage() for r in caplog.records] == [
        "run: iteration 1000/20000, elapsed 165 s, time left known at the next update",
        "run: iteration 2000/20000, elapsed 330 s, about 2970 s left",
    ]
