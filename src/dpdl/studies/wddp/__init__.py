"""Study ``wddp``: Kang, Liu & Wang, Weighted Distributed Differential Privacy ERM (Figures 1-16, Table 1).

The modules (see :mod:`dpdl.studies`): ``grid`` (figures, batches, paths, settings, Snakemake input
functions), ``run`` (one batch of runs), ``tune`` (theta* and step-size cross-validation),
``aggregate``, ``tables`` (Table 1), ``figures``, ``claims`` and ``cli``. Section and gap numbers
refer to ``notes/wddp.md``.
"""
