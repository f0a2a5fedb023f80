"""Progress of long runs: iteration, elapsed time and estimated time left, logged periodically."""

from __future__ import annotations

import logging
import time

log = logging.getLogger("dpdl.progress")

LOG_EVERY_S = 30.0


class Progress:
    """Log ``label: iteration i/total, elapsed, ~left`` at most every ``every_s`` seconds (and at the end).

    Call :meth:`update` with the number of iterations done; it costs one clock read when
    nothing is logged, so it can sit in a hot loop. The time left is estimated from the pace since
    the first update, so a run resumed from a checkpoint (whose first update is far from 0) or one
    that compiles first is not credited with iterations it did not do in this attempt.
    """

    def __init__(self, label: str, total: int, *, every_s: float = LOG_EVERY_S) -> None:
        self.label, self.total, self.every_s = label, total, every_s
        self.start = self.last = time.perf_counter()
        self.first: tuple[float, int] | None = None  # (time, done) at the first update

    def update(self, done: int) -> None:
        """Record that ``done`` of ``total`` iterations are finished."""
        now = time.perf_counter()
        if self.first is None:
            self.first = (now, done)
        if now - self.last < self.every_s and done < self.total:
            return
        self.last = now
        elapsed = now - self.start
        since, done_then = self.first
        if done > done_then:
            left = f"about {(now - since) / (done - done_then) * (self.total - done):.0f} s left"
        else:  # one update so far (the JAX run reports per chunk): no pace yet
            left = "time left known at the next update"
        log.info("%s: iteration %d/%d, elapsed %.0f s, %s", self.label, done, self.total, elapsed, left)
