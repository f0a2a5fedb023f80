"""dpdl's privacy layer: noise samplers, each paper's calibration, and composed privacy of runs.

- ``samplers``: Laplace, Gaussian and Zhang & Zhu's norm-exponential noise from an explicit
  ``numpy.random.Generator``.
- ``dp_iadmm``, ``wddp``, ``dvp_pvp``, ``dzoa``: one function per paper formula.
- ``accounting``: privacy events, the adapter to ``dp_accounting``, RDP / PLD composition,
  noise calibration, and the provenance record of a run.
- ``exact``: the exact epsilon of Gaussian releases (Balle & Wang), without ``dp_accounting``.
- ``theorems``: closed forms: the classical Gaussian calibration, basic and advanced composition.

The package's ``__init__`` holds only this docstring: each caller imports the module it needs, so that
a job which only samples noise or calibrates a paper's formula never loads ``dp_accounting`` (and with it
scipy's statistics and signal processing), which only the accountant needs.
"""
