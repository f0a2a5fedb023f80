"""Study ``dp_iadmm``: Ryu & Kim, *Differentially Private Federated Learning via Inexact ADMM*.

Everything the workflow needs besides the algorithms (:mod:`dpdl.algorithms.dp_iadmm`), one
concern per module: the run grid of every figure and the rules' input functions (``grid``), one
run job with its provenance and privacy (``run``), the minimiser of (1) that non-private runs
approach (``tune``), the per-seed tables and their bands over seeds (``aggregate``), the Remark 3
table (``tables``), one plotting function per figure (``figures``), the claims judged from the
per-seed tables (``claims``) and the ``dpdl dp_iadmm`` commands (``cli``). Section numbers refer to
``notes/iadmm.md``.
"""
