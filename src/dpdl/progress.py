"""Progress of long runs: iteration, elapsed time and estimated time left, logged periodically."""

from __future__ import annotations

import logging
import time

log = logging.getLogger("dpdl.progress")

LOG_EVERY_S = 30.0


class Progress:
    """Log ``label: iteration i/total, elapsed, ~left`` at most every ``every_s`` seconds (and at the end).

    Call :meth:`update` with the number of iterations done; it costs one clock read when
    nothing is logged, so it can sit in a hot loop.
    """

    def __init__(self, label: str, total: int, *, every_s: float = LOG_EVERY_S) -> None:
        self.label, self.total, self.every_s = label, total, every_s
        self.start = self.last = time.perf_counter()

    def update(self, done: int) -> None:
        """Record that ``done`` of ``total`` iterations are finished."""
        now = time.perf_counter()
        if now - self.last < self.every_s and done < self.total:
            return
        self.last = now
        elapsed = now - self.start
        left = elapsed / done * (self.total - done) if done else float("nan")
        log.info("%s: iteration %d/%d, elapsed %.0f s, about %.0f s left", self.label, done, self.total, elapsed, left)
