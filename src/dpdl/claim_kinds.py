"""The kinds of claim (:class:`dpdl.claims.Claim`'s ``kind``): the vocabulary alone.

The vocabulary comes without the verdict engine. :mod:`dpdl.claims` re-exports them. What reads a
claim's kind before anything is judged (the readings' check of a config, :mod:`dpdl.readings`,
which Snakemake imports when it parses the workflow and every ``dpdl prepare`` job imports) imports
them from here, and so never loads the engine's statistics (scipy.stats).
"""

from __future__ import annotations

PAPER_NUMBER = "paper number"  # the paper prints this number
PAPER_STATEMENT = (
    "paper statement"  # the paper says this of its methods (a comparison, an ordering, an equivalence)
)
MECHANISM_PROPERTY = "mechanism property"  # the paper says this, but any working calibrated mechanism does it
# (the error falls as the budget grows, the iterates converge): reported apart from the substantive claims
IMPLEMENTATION_CHECK = "implementation check"  # holds by construction, a sanity range, a textbook fact
PRIVACY_CLAIM = (
    "privacy claim"  # the paper's (epsilon, delta)-DP guarantee, tested by the audit (dpdl.audit_report)
)
PREMISE_CLAIM = (
    "premise"  # a paper's stated assumption measured on its own data (dpdl.audit.data_premises): counted
)
# apart from every other kind, never in the substantive, mechanism or privacy counts
KINDS = (
    PAPER_NUMBER,
    PAPER_STATEMENT,
    MECHANISM_PROPERTY,
    IMPLEMENTATION_CHECK,
    PRIVACY_CLAIM,
    PREMISE_CLAIM,
)
SUBSTANTIVE_KINDS = (PAPER_NUMBER, PAPER_STATEMENT)  # what the headline counts
HEADLINE_KINDS = (*SUBSTANTIVE_KINDS, MECHANISM_PROPERTY)  # the paper's own claims, shown and counted by kind
