"""Study dvp_pvp: Zhang & Zhu, dual (DVP) and primal (PVP) variable perturbation on Adult.

Gap numbers (G#) and outputs (O#) refer to ``notes/zhang_zhu.md``; J(n) / C(n) are equations of
the journal / conference version. The modules follow :mod:`dpdl.studies`: ``grid`` (settings,
paths, runs, Snakemake input functions), ``run`` (one run's trace and provenance), ``tune`` (the
ADMM penalty eta, G14), ``aggregate``, ``tables``, ``figures``, ``claims`` and ``cli`` (the
``dpdl dvp_pvp`` steps that ``workflow/rules/dvp_pvp.smk`` calls).
"""
