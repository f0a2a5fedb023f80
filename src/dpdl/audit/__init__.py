"""Empirical privacy audits: runs on neighbouring datasets -> a lower bound on epsilon.

:mod:`dpdl.audit.cells` says what is audited (a cell, the privacy claim it tests, the scores of
its runs); :mod:`dpdl.audit.bounds` turns scores into a Clopper-Pearson lower bound eps_LB and a
Gaussian-DP fit. Each study's cells live in ``dpdl.studies.<study>.audit``; the audit stage that
runs them and judges the claims is :mod:`dpdl.audit_report`.
"""
