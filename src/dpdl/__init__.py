"""dpdl: regenerate the figures and tables of four papers on differentially private distributed learning."""

import os as _os
import platform as _platform

__version__ = "0.1.0"

# Numeric kernels pinned to x86-64-v3 (AVX2 and FMA) before numpy loads, so that a number re-derived from the
# published per-seed tables is the snapshot's on any x86 machine: numpy's AVX-512 loops and OpenBLAS's AVX-512
# kernels round otherwise, and on an AVX-512 machine `dpdl check published` found 24 verdict rows 1e-8 from
# the snapshot's (docs/operations.md, "Numbers across machines"). A value set in the environment is kept.
if _platform.machine().lower() in ("x86_64", "amd64"):
    _os.environ.setdefault("NPY_DISABLE_CPU_FEATURES", "X86_V4 AVX512_ICL AVX512_SPR")
    _os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")
