"""The few named exceptions dpdl raises for bad input; the CLI prints their message without a traceback."""


class DpdlError(Exception):
    """Base class: an error whose message tells the user what was wrong and how to fix it."""


class ConfigError(DpdlError, ValueError):
    """A configuration value or command-line argument is invalid."""


class ChecksumMismatchError(DpdlError, OSError):
    """A file's bytes do not match its pinned digest."""


class DataUnavailableError(DpdlError, OSError):
    """A raw data file could not be obtained from any source."""


class DataFormatError(DpdlError, ValueError):
    """A data file does not have the format its parser expects."""


class ArtifactError(DpdlError, ValueError):
    """A pipeline artifact is missing or does not satisfy its schema."""
