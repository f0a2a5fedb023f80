"""The toy's readings: only the default (the mechanism leaves nothing open)."""

from __future__ import annotations

from dpdl.studies.common import DEFAULT, DataDeviation, Reading

READINGS = (Reading(DEFAULT, "The config as given: Laplace noise of scale 1 / (n epsilon) on the mean."),)

DATA_DEVIATIONS: tuple[DataDeviation, ...] = ()  # the paper's data is here, or none of it
