"""The numeric kernels are pinned when dpdl is imported, so that numbers re-derived from the snapshot do not
depend on the machine's SIMD level (docs/operations.md, "Numbers across machines")."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

PINS = ("NPY_DISABLE_CPU_FEATURES", "OPENBLAS_CORETYPE")


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="the pin is x86's")
def test_importing_dpdl_pins_numpy_and_openblas_to_avx2_kernels_before_numpy_loads() -> None:
    """On an AVX-512 machine, unpinned, 24 published verdict rows re-derived 1e-8 from the snapshot's."""
    env = {key: value for key, value in os.environ.items() if key not in PINS}
    code = (
        "import dpdl, os, numpy\n"
        "from numpy._core._multiarray_umath import __cpu_features__ as features\n"
        "print(features['X86_V4'], os.environ['OPENBLAS_CORETYPE'])"
    )
    shown = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert shown.stdout.split() == ["False", "Haswell"]
    kept = {**env, "OPENBLAS_CORETYPE": "Zen"}  # a value the user set is kept
    shown = subprocess.run([sys.executable, "-c", code], env=kept, capture_output=True, text=True, check=True)
    assert shown.stdout.split()[1] == "Zen"
