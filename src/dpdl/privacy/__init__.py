"""dpdl's privacy layer: noise samplers, each paper's calibration, and composed privacy of runs.

- ``samplers``: Laplace, Gaussian and Zhang & Zhu's norm-exponential noise from an explicit
  ``numpy.random.Generator``.
- ``dp_iadmm``, ``wddp``, ``dvp_pvp``, ``dzoa``: one function per paper formula.
- ``accounting``: privacy events, the adapter to ``dp_accounting``, RDP / PLD composition,
  noise calibration, and the provenance record of a run.
- ``theorems``: closed forms: the classical Gaussian calibration, basic and advanced composition.
"""

from __future__ import annotations

from dpdl.privacy.accounting import (
    PrivacyEvent,
    composed_epsilon,
    gaussian_composed_epsilon,
    gaussian_exact_epsilon,
    laplace_composed_epsilon,
    noise_for_target_epsilon,
    privacy_record,
    to_dp_event,
)
from dpdl.privacy.dp_iadmm import (
    iadmm_penalty,
    objp_laplace_scale,
    objp_sensitivity,
    outp_inverse_proximity,
    outp_noise_std,
    outp_sensitivity,
)
from dpdl.privacy.dvp_pvp import (
    DvpCalibration,
    dvp_calibration,
    dvp_jacobian_budget,
    pvp_noise_rate,
)
from dpdl.privacy.dzoa import (
    dzoa_epsilon_for_total,
    dzoa_epsilon_per_iteration,
    dzoa_noise_std,
    dzoa_sensitivity,
    dzoa_step_scale,
    dzoa_total_epsilon,
    dzoa_variance_constant,
)
from dpdl.privacy.samplers import gaussian, laplace, norm_exponential
from dpdl.privacy.theorems import advanced_composition, basic_composition, classical_gaussian_noise_multiplier
from dpdl.privacy.wddp import wddp_effective_sample_size, wddp_noise_std, wddp_sensitivity

__all__ = [
    "DvpCalibration",
    "PrivacyEvent",
    "advanced_composition",
    "basic_composition",
    "classical_gaussian_noise_multiplier",
    "composed_epsilon",
    "dvp_calibration",
    "dvp_jacobian_budget",
    "dzoa_epsilon_for_total",
    "dzoa_epsilon_per_iteration",
    "dzoa_noise_std",
    "dzoa_sensitivity",
    "dzoa_step_scale",
    "dzoa_total_epsilon",
    "dzoa_variance_constant",
    "gaussian",
    "gaussian_composed_epsilon",
    "gaussian_exact_epsilon",
    "iadmm_penalty",
    "laplace",
    "laplace_composed_epsilon",
    "noise_for_target_epsilon",
    "norm_exponential",
    "objp_laplace_scale",
    "objp_sensitivity",
    "outp_inverse_proximity",
    "outp_noise_std",
    "outp_sensitivity",
    "privacy_record",
    "pvp_noise_rate",
    "to_dp_event",
    "wddp_effective_sample_size",
    "wddp_noise_std",
    "wddp_sensitivity",
]
