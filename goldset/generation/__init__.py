"""QA generation (:func:`goldset.generate`, defined in :mod:`goldset.generation.runner`): chunks in, candidate
pairs with full provenance out.

One LLM call per selected chunk asks for ``pairs_per_chunk`` pairs with a mix of question types drawn from the
configured weights. The draw is seeded by (seed, chunk id), so a re-run asks exactly the same question of the
model and the call journal (``.goldset/calls.sqlite``) answers it: an unchanged re-run pays for nothing, and a
run killed mid-way resumes by replaying the calls already paid for. When a chunk's draw includes ``multi_hop``,
``ambiguous`` or ``open_ended`` the call shows a second, related chunk (same document first, else the most
similar chunk by TF-IDF) and uses the ``generate_multi_hop`` prompt. Types added to goldset later (ambiguous,
open_ended) are drawn on top of the first six types' draw and listed in a call's reply schema only when asked
for, so a chunk that does not draw one is asked exactly what it was asked before they existed.

Every returned item is checked before it is kept (fields, type, evidence quotes found verbatim in the named
chunk after whitespace normalisation, language). Nothing is dropped silently:

* an item that is a well-formed pair but fails a check is kept as ``status=rejected`` with
  ``checks["generation"]`` giving the reason;
* an item too broken to be a pair (empty question, unknown type) and a call that failed (its reason says how:
  ``HTTP 500: …``, the reply still invalid after the repair attempt, cut off at max_tokens…) are written to
  ``.goldset/generation_failures.jsonl``;
* a run whose calls *all* failed raises :class:`goldset.errors.RunFailed` after writing that file, and writes no
  dataset; an endpoint that cannot work at all (authentication, unknown model, unreachable) stops the run at the
  first call with :class:`goldset.errors.EndpointError`.

:class:`GenerationReport` counts what happened; its ``llm`` field is the LLM client's own
:class:`goldset.llm.CallStats` (calls, HTTP requests, retries, repairs, cache hits, tokens, cost, the retry budget
left).

The candidates file (``data/pairs.jsonl``) is rewritten sorted, through a temp file and a rename, as batches
complete; pairs already in it (any status, reviewed or not) are never replaced or lost.

A pair's ``provenance.chunk_hashes`` lists the chunks shown in its call, the *primary* chunk first: "chunks
without pairs" means chunks that were never the primary chunk of a call, so a multi-hop partner still gets its
own call (and a resumed run selects the same chunks as an uninterrupted one).
"""
