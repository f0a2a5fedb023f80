"""Variant names: the grammar of a run's ``{variant}`` folder and what each name means.

A variant names the algorithm and its setting: ``objp``, ``objt``, ``outp``; OutP with another
ADMM penalty (``outp_plus``, ``outp_rho0.1``); an algorithm with another proximity scale a
(``objt_a100``); and the runs without noise (``nonprivate``, the reference whose algorithm the
config's ``nonprivate_algorithm`` picks, and ``nonprivate_objp`` / ``nonprivate_outp``, ObjP and
OutP without noise for the paper's "equivalent in a nonprivate setting").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dpdl.studies.common import format_number

BASE_ALGORITHMS = ("objp", "objt", "outp")
NONPRIVATE = "nonprivate"
NOISELESS = ("nonprivate_objp", "nonprivate_outp")  # ObjP and OutP without noise (Section 4: "equivalent")
LABELS = {
    "objp": "ObjP",
    "objt": "ObjT",
    "outp": "OutP",
    "outp_plus": "OutP+",
    NONPRIVATE: "non-private",
}
# A private variant: its algorithm (group 1), then at most one of "_plus", "_rho<rho>" or "_a<a>".
VARIANT_PATTERN = re.compile(r"^(objp|objt|outp)(?:_(plus)|_rho([0-9.e+-]+)|_a([0-9.e+-]+))?$")
PRIVATE_VARIANT_REGEX = r"(objp|objt|outp)(_plus|_rho[0-9.e+-]+|_a[0-9.e+-]+)?"  # the run rules' {variant}


@dataclass(frozen=True)
class Variant:
    """What a variant name means: base algorithm, ADMM penalty setting and proximity scale a."""

    name: str
    algorithm: str
    a: float = 1.0
    rho_factor: float = 1.0
    rho_static: float | None = None

    @property
    def label(self) -> str:
        """Legend label (ObjP, ObjT, OutP, OutP+, non-private, "OutP without noise")."""
        if is_nonprivate(self.name) and self.name != NONPRIVATE:
            return f"{LABELS[self.algorithm]} without noise"
        return LABELS.get(self.name, LABELS[self.algorithm])

    @property
    def rho_setting(self) -> str:
        """Fig. 4's series name: rho-hat, rho-hat/100 or the constant."""
        if self.rho_static is not None:
            return format_number(self.rho_static)
        if self.rho_factor == 1.0:
            return "rho-hat"
        divisor = 1.0 / self.rho_factor
        if divisor == round(divisor):
            return f"rho-hat/{divisor:g}"
        return f"rho-hat*{self.rho_factor:g}"


def is_nonprivate(name: str) -> bool:
    """Whether a variant runs without noise (epsilon-bar = inf).

    Those are ``nonprivate`` and ``nonprivate_<algorithm>``.
    """
    return name == NONPRIVATE or name.startswith(f"{NONPRIVATE}_")


def variant(name: str, section: dict) -> Variant:
    """Parse a variant name.

    Names are ``objt``, ``outp_plus``, ``outp_rho0.1``, ``objp_a100``, ``nonprivate_outp``, ...

    ``nonprivate`` is the switch's ``nonprivate_algorithm``; ``nonprivate_<algorithm>`` names its algorithm.
    """
    if name == NONPRIVATE:
        # note 2.5 [R]: ObjP (default) or ObjT with xi = 0 and rho without c2
        return Variant(NONPRIVATE, section["nonprivate_algorithm"])
    if is_nonprivate(name):
        # one algorithm without noise, whatever the switch says
        algorithm = name.removeprefix(f"{NONPRIVATE}_")
        if algorithm not in BASE_ALGORITHMS:
            raise ValueError(f"unknown dp_iadmm variant {name!r}; expected nonprivate_objp, _objt or _outp")
        return Variant(name, algorithm)
    match = VARIANT_PATTERN.match(name)
    if match is None:
        raise ValueError(
            f"unknown dp_iadmm variant {name!r}; expected e.g. objt, outp_plus, outp_rho0.1, objp_a100"
        )
    algorithm, plus, rho, _ = match.groups()
    if (plus or rho) and algorithm != "outp":
        raise ValueError(f"variant {name!r}: only OutP has penalty variants")
    if plus:
        return Variant(name, algorithm, rho_factor=section["outp_plus_factor"])
    if rho:
        return Variant(name, algorithm, rho_static=float(rho))
    return Variant(name, algorithm, a=variant_a(name))


def a_variant(algorithm: str, a: float) -> str:
    """The variant of ``algorithm`` with proximity scale a (the plain name for a = 1)."""
    if a == 1:
        return algorithm
    return f"{algorithm}_a{format_number(a)}"


def variant_a(name: str) -> float:
    """The proximity scale a of an ObjP, ObjT or OutP variant name (``objp_a100``: 100; ``objp``: 1)."""
    match = VARIANT_PATTERN.match(name)
    if match is None:
        raise ValueError(f"unknown dp_iadmm variant {name!r}; expected e.g. objp, objt_a100")
    return float(match.group(4) or 1.0)
