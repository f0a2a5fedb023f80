"""A long run's state saved every few minutes, so that a killed run resumes where it was (issue 38).

A dp_iadmm run at the paper's T = 20,000 takes about 80 minutes of one core, longer than what is
left of a session once tests run beside it, and Snakemake's cache only keeps finished jobs. The
run saves its whole state (iterates, generators, trace so far) to one ``.npz`` beside its outputs;
a rerun of the same job finds it and continues from the saved iteration, giving the numbers the
uninterrupted run gives, bit for bit. A checkpoint is used only when its ``key`` (the run's
identity: settings, data, seeds and the code of the algorithm) is the rerun's; any other is ignored
and overwritten. The file is removed once the run's artifacts are written.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dpdl.errors import ArtifactError
from dpdl.io import load_npz, save_npz

log = logging.getLogger(__name__)


class RunStopped(Exception):
    """A run saved its state at its checkpoint's ``stop_at`` and stopped: a later call resumes it (issue 63)."""

    def __init__(self, iteration: int, path: Path) -> None:
        super().__init__(f"stopped after iteration {iteration}; its state is in {path}")
        self.iteration = iteration
        self.path = path


@dataclass
class Checkpoint:
    """Where a run keeps its state, under which identity, and how often it saves.

    ``stop_at`` (a ``time.time()``; None: never): the first save point after it saves the state and stops the run
    with :class:`RunStopped`, so a run longer than a lent device's call (10 minutes) goes on in the next call.

    ``resumed_at`` (the iteration the saved state ends, 0 when the run started afresh) and
    ``earlier_wall_s`` / ``earlier_cpu_s`` (the time the earlier attempts spent up to the save the
    run resumed from) are filled in by :meth:`load`, for the run's provenance.
    """

    path: Path
    key: str
    every_s: float  # wall seconds between saves
    stop_at: float | None = None
    resumed_at: int = 0
    earlier_wall_s: float = 0.0
    earlier_cpu_s: float = 0.0
    _clock: tuple[float, float, float] = field(default=(0.0, 0.0, 0.0), repr=False)

    def __post_init__(self) -> None:
        self.path = Path(self.path)
        now = (time.perf_counter(), time.process_time())
        self._clock = (*now, now[0])  # wall and CPU at the start, wall at the last save

    def load(self) -> dict[str, np.ndarray] | None:
        """The saved arrays if the file holds this run's state (same key); None to start afresh."""
        if not self.path.exists():
            return None
        try:
            arrays = load_npz(self.path)
        except ArtifactError as error:
            log.warning("%s: unreadable checkpoint, starting from iteration 1 (%s)", self.path, error)
            return None
        if str(arrays.get("key", "")) != self.key:
            log.warning(
                "%s: a checkpoint of another run (settings, data or code changed); starting afresh", self.path
            )
            return None
        self.resumed_at = int(arrays["iteration"])
        self.earlier_wall_s, self.earlier_cpu_s = (float(v) for v in arrays["elapsed_s"])
        log.info("%s: resuming after iteration %d", self.path, self.resumed_at)
        return arrays

    def due(self) -> bool:
        """Whether ``every_s`` seconds have passed since the start or the last save."""
        return time.perf_counter() - self._clock[2] >= self.every_s

    def stopping(self) -> bool:
        """Whether ``stop_at`` has passed: the run saves and stops at its next save point."""
        return self.stop_at is not None and time.time() >= self.stop_at

    def save(self, iteration: int, arrays: dict[str, np.ndarray]) -> None:
        """Write the state after ``iteration`` atomically (a kill mid-write leaves the previous save)."""
        wall, cpu = time.perf_counter() - self._clock[0], time.process_time() - self._clock[1]
        elapsed = np.array([self.earlier_wall_s + wall, self.earlier_cpu_s + cpu])
        self.path.parent.mkdir(parents=True, exist_ok=True)
        save_npz(
            self.path,
            {"key": np.array(self.key), "iteration": np.array(iteration), "elapsed_s": elapsed, **arrays},
        )
        self._clock = (*self._clock[:2], time.perf_counter())

    def remove(self) -> None:
        """Delete the file (the run's artifacts are written)."""
        self.path.unlink(missing_ok=True)


def generator_states(rngs) -> np.ndarray:
    """The bit generators' states of ``rngs`` as one JSON string (restored by :func:`restore_generators`)."""
    return np.array(json.dumps([rng.bit_generator.state for rng in rngs]))


def restore_generators(rngs, states: np.ndarray) -> None:
    """Set each generator of ``rngs`` to its state saved by :func:`generator_states`."""
    saved = json.loads(str(states))
    if len(saved) != len(rngs):
        raise ValueError(f"the checkpoint holds {len(saved)} generators; the run has {len(rngs)}")
    for rng, state in zip(rngs, saved, strict=True):
        rng.bit_generator.state = state
