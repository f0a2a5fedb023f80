"""``dpdl article``: a ReScience C style replication article per study, from the published snapshot alone.

:func:`dpdl.article.write.write_article` writes ``published/<study>/ARTICLE.md``, ``ARTICLE.html`` (the
same text, figures inline as data URIs, so it opens offline) and ``metadata.yaml``. Every number in an
article is a string copied from a snapshot file (``scorecard.csv``, the study rows of which are its
``claims.csv`` and its audit-judged privacy claims, ``MANIFEST.json``, the cards, ``readings.csv``, the
audit, ``RESULTS.md``); the only prose taken from the code is the claims' statements (in ``claims.csv``),
the readings' descriptions (each study's ``READINGS``), the post hoc register (:mod:`dpdl.post_hoc`) and
the original papers' references (each study's ``REFERENCE``). :func:`dpdl.article.write.article_problems`
is what ``dpdl check published`` runs: an article missing, or not what regenerating gives.

The modules, lowest first (a module imports only modules of a lower row; ``tests/unit/test_structure.py``):

- ``blocks`` (the block an article is made of), ``snapshot`` (what it reads of the snapshot);
- ``title`` ([Re] or [¬Re] by ``TITLE_RULE`` over the readings, and the scope it names), ``claim_text`` (a
  claim's row as printed), ``compute`` (the compute the snapshot records), ``front_matter`` (the original
  paper's citation, the code, the data);
- the sections: ``reproducibility_summary``, ``exhibits`` (the claims by figure and table of the paper),
  ``sensitivity`` (the readings and the post hoc register), ``privacy_audit``, ``deviations`` (and what was
  not run); and ``render`` (Markdown, one self-contained HTML page, ``metadata.yaml``);
- ``write``: the article assembled from the sections, written, and checked (``dpdl article``, ``dpdl check``).
"""
