"""The published snapshot (``published/``), one module per concern.

The modules, lowest first: :mod:`~dpdl.publishing.layout` (what a study folder holds and under which names),
:mod:`~dpdl.publishing.staging` (a study folder rewritten in one swap, and what an interrupted
command left), :mod:`~dpdl.publishing.compute` (the compute a manifest records),
:mod:`~dpdl.publishing.merged` (the merged files written from the study folders),
:mod:`~dpdl.publishing.problems` (what ``dpdl check published`` reports) and
:mod:`~dpdl.publishing.snapshot` (``dpdl publish``: writing a study's snapshot and adding to it).
"""
