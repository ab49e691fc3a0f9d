"""Research experiments: the code behind the figures in ``docs/``, kept out of the installed package.

Each module imports :mod:`compliance` like any user would and runs with ``python -m experiments.<name>`` from
the repository root (the shared development data comes through ``COMPLIANCE_SHARED_DATA``):

========================  =========================================================================================
module                    what it does
========================  =========================================================================================
``retrieval_evaluate``    the retrieval evaluation table of ``docs/retrieval.md`` (BM25, dense, fusion, date
                          filter, re-rankers on every task); ``python -m experiments.retrieval_evaluate --help``
``retrieval_tasks``       the tasks it evaluates (corpus, queries, gold, deterministic splits); no command
``prior_selection``       how the classifier's ensemble weights (law prior, lexical expert, umbrellas) were chosen
                          on the GDPRhub training half (``docs/classifier.md``); ``--model DIR [--json]``
``alert_expectations``    scores an alert run against the ePrivacy must/must-not expectations about the sample
                          policies in ``examples/`` (``docs/alerts.md``); used by the slow alert test
``role_regularisation``   how the paragraph role model's L2 penalty was chosen (grouped cross-validation over the
                          training documents of the labelled role set, ``docs/roles.md``)
``role_links``            links on paragraphs whose labelled role is not statement/definition, read from an
                          audited SQLite database (``docs/roles.md``; works on databases without roles too)
``review_learning_curve`` the learning curve of ``compliance train --with-reviews`` with reviewers simulated on the
                          GDPRhub training half, scored on the held-out half (``docs/officer.md``)
========================  =========================================================================================

What users run stays in the package: ``compliance evaluate`` evaluates the classifier and its baselines on the
built-in query sets and on the user's own labelled JSONL (``--queries FILE``).
"""
