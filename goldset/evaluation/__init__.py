"""Evaluation of RAG runs against a golden dataset: runs, relevance matcher, metrics, scoring, gates, reports.

The entry point is :func:`goldset.evaluate` (defined in :mod:`goldset.evaluation.evaluator`). Importing this package
is cheap: everything heavy is imported inside the functions that need it. Where things are:

- the dataset evaluated: ``datasets`` (folder, identity from its files, pairs chosen), ``sampling`` (subsets);
- where a run comes from: ``run_files`` (a JSONL file a system wrote), ``callables`` (a Python function),
  ``endpoints`` (an HTTP service), both asked through ``asking``;
- scoring: ``matcher`` (which contexts are relevant), ``metrics/`` (the registry of metric functions), ``scoring``
  (per sample, then summaries), ``judge/`` (the LLM judge of answers: faithfulness, completeness, hallucination,
  relevancy..., at most 3 calls per sample);
- a run folder: ``runs``; what is done with runs: ``gate`` (thresholds), ``compare`` (two runs, only when
  comparable), ``diagnose`` (likely causes), ``report`` (HTML and terminal tables); ``settings``: the eval section.
"""
