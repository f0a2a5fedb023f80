"""toy: a study that lives outside dpdl.studies, to prove the registry (issue 60 item 6).

A Laplace-noised mean of generated records in [0, 1]: for each epsilon and seed the mean is released with
Laplace noise of scale 1 / (n epsilon), and the absolute error of the release is recorded. Two claims, one
figure. It is registered by ``DPDL_EXTRA_STUDIES=toy`` (with ``tests/toy_study`` on ``PYTHONPATH``), and its
config schema, rule file and page lie in this package (``schema.yaml``, ``rules.smk``, ``README.md``).
"""
