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
    tracker.update(1)  # t = 10: too soon
    tracker.update(2)  # t = 31: logged, 2 done in 31 s -> about 31 s left
    tracker.update(3)  # t = 40: too soon
    tracker.update(4)  # t = 50: the end is always logged
    assert [r.getMessage() for r in caplog.records] == [
        "run: iteration 2/4, elapsed 31 s, about 31 s left",
        "run: iteration 4/4, elapsed 50 s, about 0 s left",
    ]
