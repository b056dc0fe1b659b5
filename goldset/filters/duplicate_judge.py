"""The LLM duplicate judge: candidate pairs of questions from a recall-oriented pre-filter, decided by the judge.

Reworded duplicates ("How do you make a query parameter required?" / "What should I do so that clients cannot omit
a query parameter?") sit at character similarities where close-but-different questions also sit, so no lexical
threshold separates them (benchmarks/RESULTS.md). Here a cheap pre-filter proposes *candidate* pairs and the
judge endpoint decides, per pair, "do these two questions ask for the same information?", with a reason:

* **Candidates** (:func:`candidates`), bounded per question so the calls stay linear in the number of pairs:
  each question's ``top_k`` most similar questions of its own language by the weighted Jaccard of the content
  words of question *and answer* (:func:`goldset.filters.textsim.content_units`, rarer units weigh more: two
  questions after the same information tend to get the same answer even when they share few words), above
  ``min_similarity``; with embeddings (the endpoint's embedding model), also its ``embedding_top_k`` nearest
  questions by cosine above ``min_cosine``, of its language (of any language with ``cross_language``: a question
  and its translation then count as duplicates); and every link the strict measures made (lexical
  threshold, semantic threshold), so the judge can overrule a lexical false positive. Identical questions (same
  canonical form) are duplicates without asking.
* **Calls** (:func:`batches`): several candidate pairs per call (``batch``), each pair anchored on the question
  that sorts first, anchors in sorted order with content-defined batch boundaries, so batches do not depend on
  the file's order. Each call goes through :class:`goldset.llm.LLMClient` and the call journal, and each verdict
  it returns is also kept in the journal under its pair's own key (:func:`pair_key`: the two questions and
  answers, the model and the prompt): only candidates no call has judged yet are batched and sent, so an
  unchanged re-run makes no call and a refresh pays for the new candidate pairs alone. The reply is a
  structured :class:`DuplicateJudgement` holding exactly one verdict per pair shown (a reply with a pair missing,
  repeated or out of range is invalid: the client asks once for a repair, then the call fails).
* **Verdicts** (:class:`Judged`): pairs judged the same, pairs judged different (a strict-measure link the judge
  calls different is dropped), and pairs whose call failed, which keep what the strict measures said; a "same"
  with no reason (``""``, ``"..."``, a bare "yes": :func:`reason_given`) is a failed judgement too, not a
  duplicate (``Judged.inconsistent`` counts them); the
  duplicate check (:func:`goldset.filters.duplicates.find`) turns them into one verdict per pair, each with its
  reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

from goldset.filters.textsim import canonical, content_units
from goldset.hashing import short_hash

if TYPE_CHECKING:
    import numpy as np

    from goldset.llm import CallJournal, Endpoint, LLMClient
    from goldset.prompts import Prompt
    from goldset.schema import QAPair

PROMPT_ID = "filter_duplicate"
SCHEMA_NAME = "duplicate_judge"
#: A content unit held by more questions than this is left out of the lexical candidate search (it says little
#: about any one pair, and its posting list would make the search quadratic).
MAX_POSTINGS = 300
#: Characters of an answer shown to the judge (the answer shows what the question was after; the question decides).
ANSWER_CHARS = 300
#: A batch also closes after an anchor whose hash is 0 modulo this (content-defined boundaries, see module doc).
_BOUNDARY = 8

Pair = tuple[int, int]


class DuplicateJudgeSettings(BaseModel):
    """``filter.checks.duplicate.judge``: the LLM duplicate judge over candidate pairs."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool | None = Field(
        None,
        description="None (default): on when a judge endpoint is configured (off with --no-llm); true: required; "
        "false: off (lexical and semantic thresholds only).",
    )
    top_k: int = Field(
        3, ge=0, le=50, description="Lexical candidates per question: its k most similar questions of its language."
    )
    min_similarity: float = Field(
        0.05, ge=0, le=1, description="Least weighted Jaccard (question + answer content words) of a lexical candidate."
    )
    embeddings: bool = Field(
        True, description="Also take embedding neighbours as candidates when the endpoint has an embedding model."
    )
    embedding_top_k: int = Field(3, ge=0, le=50, description="Embedding candidates per question.")
    cross_language: bool = Field(
        False,
        description="A question and its translation can be duplicates: embedding candidates in another language "
        "are judged too (false: a bilingual set keeps each language's question; candidates stay within a language).",
    )
    min_cosine: float = Field(0.5, ge=-1, le=1, description="Least cosine of an embedding candidate.")
    batch: int = Field(8, ge=1, le=50, description="Candidate pairs judged per call.")


class PairVerdict(BaseModel):
    """The judge's verdict on one candidate pair."""

    model_config = ConfigDict(extra="ignore")

    pair: int = Field(description="The number of the pair in the request (1-based).")
    same: bool = Field(description="The two questions ask for the same information (one answer serves both).")
    reason: str = Field(description="One sentence: what makes them the same, or what differs.")


class DuplicateJudgement(BaseModel):
    """The judge's structured reply: one verdict per candidate pair of the request, each pair exactly once."""

    model_config = ConfigDict(extra="ignore")

    verdicts: list[PairVerdict] = Field(description="One verdict per pair of the request.")

    @model_validator(mode="after")
    def _each_pair_once(self) -> DuplicateJudgement:
        numbers = sorted(v.pair for v in self.verdicts)
        if numbers != list(range(1, len(numbers) + 1)):
            raise ValueError(f"verdicts must number the pairs 1..{len(numbers)} once each; got {numbers}")
        return self


@lru_cache(maxsize=64)
def judgement_model(n: int) -> type[DuplicateJudgement]:
    """The reply schema of a call about ``n`` pairs: exactly ``n`` verdicts (an empty or short list is invalid)."""
    return create_model(
        f"DuplicateJudgement{n}",
        __base__=DuplicateJudgement,
        verdicts=(
            list[PairVerdict],
            Field(min_length=n, max_length=n, description=f"One verdict per pair of the request: {n} verdicts."),
        ),
    )


@dataclass(frozen=True)
class Candidate:
    """Participants ``i`` < ``j`` proposed to the judge; ``score``: the pre-filter similarity that proposed them
    (the higher of the lexical weighted Jaccard and the cosine, 1.0 for a strict link); ``sources``: which."""

    i: int
    j: int
    score: float
    sources: tuple[str, ...]


@dataclass
class Judged:
    """What the judge said, by participant pair (i < j): ``same`` / ``different`` hold the judge's reasons,
    ``failed`` why no verdict came (those pairs keep what the strict measures said), ``scores`` the candidates'
    pre-filter similarities. ``calls``: batches sent or taken from the journal."""

    same: dict[Pair, str] = field(default_factory=dict)
    different: dict[Pair, str] = field(default_factory=dict)
    failed: dict[Pair, str] = field(default_factory=dict)
    scores: dict[Pair, float] = field(default_factory=dict)
    calls: int = 0
    verdicts: int = 0  # verdicts the judge gave (sent or from the journal)
    inconsistent: int = 0  # of those, "same" with no reason: failed judgements


@dataclass(frozen=True)
class DuplicateJudgePlan:
    """The endpoint and prompt of the duplicate judge, resolved before anything runs."""

    endpoint: Endpoint
    prompt: Prompt

    def settings_extra(self) -> dict[str, Any]:
        """What of the plan changes verdicts (joins the duplicate check's settings hash)."""
        return {"judge_model": self.endpoint.model, "judge_prompt": self.prompt.hash}


def order_keys(pairs: Sequence[QAPair]) -> list[str]:
    """Each pair's place in the fixed order (canonical question, then id) that breaks candidate ties and anchors
    batches, so neither depends on the file's order."""
    return [f"{canonical(p.question)}\x1f{p.id}" for p in pairs]


# -- candidates ----------------------------------------------------------------------------------------------------
def lexical_candidates(
    texts: Sequence[str], groups: Sequence[str], keys: Sequence[str], top_k: int, min_similarity: float
) -> dict[Pair, float]:
    """(i, j) -> weighted Jaccard for each text's ``top_k`` most similar texts of the same group (language).

    Units are :func:`content_units`, weighted by inverse document frequency ``log((N + 1) / (df + 0.5))``; found
    through an inverted index (units in more than :data:`MAX_POSTINGS` texts left out), so the work grows with the
    postings, not with every pair. Ties are broken by ``keys`` (not by position): the result does not depend on
    the order of ``texts``.
    """
    if top_k <= 0 or len(texts) < 2:
        return {}
    units = [content_units(t) for t in texts]
    postings: dict[tuple[str, str], list[int]] = {}
    for i, us in enumerate(units):
        for u in us:
            postings.setdefault((groups[i], u), []).append(i)
    n = len(texts)
    weight = {gu: math.log((n + 1) / (len(ids) + 0.5)) for gu, ids in postings.items() if len(ids) <= MAX_POSTINGS}
    total = [sum(weight.get((groups[i], u), 0.0) for u in us) for i, us in enumerate(units)]
    out: dict[Pair, float] = {}
    for i, us in enumerate(units):
        shared: dict[int, float] = {}
        for u in us:
            w = weight.get((groups[i], u))
            if w is None:
                continue
            for j in postings[(groups[i], u)]:
                if j != i:
                    shared[j] = shared.get(j, 0.0) + w
        scored = []
        for j, inter in shared.items():
            union = total[i] + total[j] - inter
            sim = inter / union if union > 0 else 0.0
            if sim >= min_similarity:
                scored.append((-sim, keys[j], j))
        scored.sort()
        for neg, _, j in scored[:top_k]:
            pair = (min(i, j), max(i, j))
            out[pair] = max(-neg, out.get(pair, 0.0))
    return out


def unit_rows(vectors: Sequence[Sequence[float] | None]) -> tuple[list[int], np.ndarray | None]:
    """The indices of the vectors given (not None, not empty) and those vectors scaled to unit length, one per
    row (float32): their products are cosines. None instead of the matrix when fewer than two are given."""
    import numpy as np

    present = [i for i, v in enumerate(vectors) if v is not None and len(v)]
    if len(present) < 2:
        return present, None
    mat = np.asarray([vectors[i] for i in present], dtype=np.float32)
    norms = np.linalg.norm(mat, axis=1, keepdims=True)
    return present, mat / np.where(norms == 0, 1.0, norms)


def embedding_candidates(
    vectors: Sequence[Sequence[float] | None],
    keys: Sequence[str],
    top_k: int,
    min_cosine: float,
    groups: Sequence[str] | None = None,
) -> dict[Pair, float]:
    """(i, j) -> cosine for each vector's ``top_k`` nearest vectors at ``min_cosine`` or above (None: no vector);
    with ``groups`` (languages), only vectors of the same group are neighbours.

    Blockwise (at most 2,048 rows, ~64 MB of similarities, at a time), ties broken by ``keys``.
    """
    import numpy as np

    if top_k <= 0:
        return {}
    present, mat = unit_rows(vectors)
    if mat is None:
        return {}
    out: dict[Pair, float] = {}
    block = max(16, min(2048, 2**24 // len(present)))  # rows per block: at most ~64 MB of float32 similarities
    k = min(top_k, len(present) - 1)
    group_ids = None
    if groups is not None:
        names = {g: n for n, g in enumerate(sorted({groups[i] for i in present}))}
        group_ids = np.asarray([names[groups[i]] for i in present])
    for start in range(0, len(present), block):
        sims = mat[start : start + block] @ mat.T
        if group_ids is not None:
            sims[group_ids[start : start + block, None] != group_ids[None, :]] = -np.inf
        for r in range(sims.shape[0]):
            sims[r, start + r] = -np.inf
        # k + a margin by value, then exact order by (-cosine, key) in Python for the few kept
        width = min(len(present) - 1, k + 8)
        top = np.argpartition(-sims, width - 1, axis=1)[:, :width] if width < len(present) else None
        for r in range(sims.shape[0]):
            cols = top[r].tolist() if top is not None else list(range(len(present)))
            row = [(-float(sims[r, c]), keys[present[c]], c) for c in cols if c != start + r]
            row.sort()
            i = present[start + r]
            for neg, _, c in row[:k]:
                if -neg < min_cosine:
                    break
                j = present[c]
                pair = (min(i, j), max(i, j))
                out[pair] = max(min(1.0, -neg), out.get(pair, -1.0))
    return out


def candidates(
    pairs: Sequence[QAPair],
    settings: DuplicateJudgeSettings,
    *,
    strict: Mapping[Pair, float] | None = None,
    vectors: Sequence[Sequence[float] | None] | None = None,
    skip: Callable[[int, int], bool] | None = None,
) -> list[Candidate]:
    """The candidate pairs to judge among ``pairs`` (participants of the duplicate check, indices into it).

    ``strict``: the links the lexical and semantic thresholds made (always judged); ``vectors``: the questions'
    embeddings, if any; ``skip(i, j)``: pairs not to judge (identical questions, two released pairs). Sorted by
    (i, j).
    """
    keys = order_keys(pairs)
    texts = [f"{p.question}\n{p.answer}" for p in pairs]
    found: dict[Pair, tuple[float, set[str]]] = {}

    def add(pair: Pair, score: float, source: str) -> None:
        old = found.get(pair)
        found[pair] = (max(score, old[0]) if old else score, (old[1] if old else set()) | {source})

    for pair, score in lexical_candidates(
        texts, [p.language for p in pairs], keys, settings.top_k, settings.min_similarity
    ).items():
        add(pair, score, "lexical")
    if vectors is not None and settings.embeddings:
        groups = None if settings.cross_language else [p.language for p in pairs]
        near = embedding_candidates(vectors, keys, settings.embedding_top_k, settings.min_cosine, groups)
        for pair, score in near.items():
            add(pair, score, "embedding")
    for (i, j), score in (strict or {}).items():
        add((min(i, j), max(i, j)), score, "threshold")
    out = [
        Candidate(i, j, round(score, 4), tuple(sorted(src)))
        for (i, j), (score, src) in sorted(found.items())
        if skip is None or not skip(i, j)
    ]
    return out


# -- calls ---------------------------------------------------------------------------------------------------------
def batches(pairs: Sequence[QAPair], found: Sequence[Candidate], size: int) -> list[list[Candidate]]:
    """Candidates grouped into calls of at most ``size`` pairs, independent of the order of ``pairs``.

    Each candidate belongs to its anchor (the participant whose canonical question, then id, sorts first); anchors
    go in sorted order, a batch closes when the next anchor's pairs would overflow it or after an anchor whose
    hash is 0 modulo :data:`_BOUNDARY`, so inserting a pair re-forms only the batches around its anchors.
    """
    keys = order_keys(pairs)
    by_anchor: dict[str, list[tuple[str, Candidate]]] = {}
    for c in found:
        a, b = (c.i, c.j) if keys[c.i] <= keys[c.j] else (c.j, c.i)
        by_anchor.setdefault(keys[a], []).append((keys[b], c))
    out: list[list[Candidate]] = []
    current: list[Candidate] = []
    for anchor in sorted(by_anchor):
        group = [c for _, c in sorted(by_anchor[anchor], key=lambda kc: kc[0])]
        if current and len(current) + len(group) > size:
            out.append(current)
            current = []
        while len(group) > size:
            out.append(group[:size])
            group = group[size:]
        current.extend(group)
        if int(short_hash(anchor), 16) % _BOUNDARY == 0 or len(current) >= size:
            out.append(current)
            current = []
    if current:
        out.append(current)
    return out


def ordered(pairs: Sequence[QAPair], c: Candidate) -> tuple[QAPair, QAPair]:
    """The two pairs of a candidate in a fixed order (canonical question, then id): the prompt is the same
    whichever order the file had."""
    a, b = pairs[c.i], pairs[c.j]
    ka, kb = (canonical(a.question), a.id), (canonical(b.question), b.id)
    return (a, b) if ka <= kb else (b, a)


def render_messages(pairs: Sequence[QAPair], batch: Sequence[Candidate], prompt: Prompt) -> list[dict[str, str]]:
    """The chat messages of one call: each candidate pair's two questions, with their answers for context."""

    def cut(text: str) -> str:
        text = " ".join(text.split())
        return text if len(text) <= ANSWER_CHARS else text[:ANSWER_CHARS] + " […]"

    blocks = []
    for n, c in enumerate(batch, 1):
        a, b = ordered(pairs, c)
        blocks.append(
            f'<pair n="{n}">\n<question_a>{a.question}</question_a>\n<answer_a>{cut(a.answer)}</answer_a>\n'
            f"<question_b>{b.question}</question_b>\n<answer_b>{cut(b.answer)}</answer_b>\n</pair>"
        )
    return prompt.render(count=str(len(batch)), pairs="\n\n".join(blocks))


def pair_key(pairs: Sequence[QAPair], c: Candidate, endpoint: Endpoint, prompt: Prompt) -> str:
    """The journal key of one candidate pair's verdict: the key of the call that would ask about that pair alone
    (its two questions and answers, the model, the prompt). Each verdict a batched call returns is also stored
    under it, so a later run asks only about pairs never judged, whatever batches the others fall in."""
    return batch_key(pairs, [c], endpoint, prompt)


def known_verdicts(
    pairs: Sequence[QAPair], found: Sequence[Candidate], endpoint: Endpoint, prompt: Prompt,
    journal: CallJournal | None,
) -> tuple[dict[Pair, PairVerdict], list[Candidate]]:
    """(the verdicts the journal holds, by candidate; the candidates it holds none for), calling nothing."""
    from pydantic import ValidationError

    known: dict[Pair, PairVerdict] = {}
    todo: list[Candidate] = []
    one = judgement_model(1)
    for c in found:
        entry = journal.get(pair_key(pairs, c, endpoint, prompt)) if journal is not None else None
        try:
            reply = one.model_validate(entry.reply) if entry is not None else None
        except ValidationError:
            reply = None
        if reply is None:
            todo.append(c)
        else:
            known[(c.i, c.j)] = reply.verdicts[0]
    return known, todo


def remember(
    pairs: Sequence[QAPair], batch: Sequence[Candidate], reply: DuplicateJudgement, endpoint: Endpoint,
    prompt: Prompt, journal: CallJournal | None,
) -> None:
    """Store each verdict of a validated reply under its pair's own key (:func:`pair_key`)."""
    if journal is None:
        return
    for v in reply.verdicts:
        c = batch[v.pair - 1]
        verdict = {"verdicts": [{"pair": 1, "same": v.same, "reason": v.reason}]}
        key = pair_key(pairs, c, endpoint, prompt)
        journal.put(key, model=endpoint.model, schema_name=SCHEMA_NAME, reply=verdict, prompt_tokens=0,
                    completion_tokens=0, usage_estimated=True, cost_usd=0.0)  # fmt: skip


def plan_calls(
    pairs: Sequence[QAPair],
    found: Sequence[Candidate],
    settings: DuplicateJudgeSettings,
    endpoint: Endpoint,
    prompt: Prompt,
    journal: CallJournal | None,
) -> tuple[dict[Pair, PairVerdict], list[list[Candidate]]]:
    """What :func:`judge` will do: the verdicts already known, and the batches of the other candidates."""
    known, todo = known_verdicts(pairs, found, endpoint, prompt, journal)
    return known, batches(pairs, todo, settings.batch)


async def judge(
    pairs: Sequence[QAPair],
    found: Sequence[Candidate],
    settings: DuplicateJudgeSettings,
    client: LLMClient,
    prompt: Prompt,
    *,
    on_done: Callable[[int, int], Any] | None = None,
) -> Judged:
    """Ask the judge about every candidate whose verdict the journal does not hold yet (:func:`pair_key`),
    ``settings.batch`` pairs per call, concurrently (:func:`~goldset.llm.fan_out`; the client bounds the requests
    and their rate). A failed call is recorded on each of its pairs, never turned into a verdict."""
    from goldset.llm.fanout import fan_out, fan_out_limit

    out = Judged(scores={(c.i, c.j): c.score for c in found})
    journal = client.journal if client.use_cache else None
    known, groups = plan_calls(pairs, found, settings, client.endpoint, prompt, journal)
    for pair, verdict in known.items():
        record_one(out, pair, verdict)

    async def one(batch: list[Candidate]) -> None:
        res = await client.complete_json(
            render_messages(pairs, batch, prompt), judgement_model(len(batch)), schema_name=SCHEMA_NAME
        )
        if res.value is None:
            for c in batch:
                out.failed[(c.i, c.j)] = res.error or "the judge call failed"
        else:
            record(out, batch, res.value)
            remember(pairs, batch, res.value, client.endpoint, prompt, client.journal)

    await fan_out(groups, one, limit=fan_out_limit(client.endpoint), on_done=on_done)
    out.calls = len(groups)
    return out


def reason_given(reason: str) -> bool:
    """The reason says something: two or more word tokens, one with a letter (not ``""``, ``"..."``, ``"yes"``)."""
    from goldset.text import tokenize

    words = tokenize(reason)
    return len(words) >= 2 and any(ch.isalpha() for w in words for ch in w)


#: Why a "same" verdict without a reason is not taken (the pair keeps what the thresholds said).
NO_REASON = "the judge said same but gave no reason"


def record_one(out: Judged, pair: Pair, verdict: PairVerdict) -> None:
    """Put one verdict into ``out``: a "same" with no reason (:func:`reason_given`) is a failed judgement."""
    reason = " ".join(verdict.reason.split())
    out.verdicts += 1
    if verdict.same and not reason_given(reason):
        out.inconsistent += 1
        out.failed[pair] = f"{NO_REASON} ({reason[:40]!r})"
        return
    (out.same if verdict.same else out.different)[pair] = reason or "no reason given"


def record(out: Judged, batch: Sequence[Candidate], reply: DuplicateJudgement) -> None:
    """Put the verdicts of one validated reply about ``batch`` into ``out``."""
    for v in reply.verdicts:
        c = batch[v.pair - 1]
        record_one(out, (c.i, c.j), v)


def replay(
    pairs: Sequence[QAPair],
    found: Sequence[Candidate],
    settings: DuplicateJudgeSettings,
    endpoint: Endpoint,
    prompt: Prompt,
    journal: CallJournal | None,
) -> Judged:
    """The verdicts the call journal already holds for these candidates, calling nothing (``--no-llm``): per pair
    (:func:`pair_key`), else from a stored call about the batch; a candidate the journal knows neither way stays
    unjudged (neither linked nor noted: the thresholds decide)."""
    from pydantic import ValidationError

    out = Judged(scores={(c.i, c.j): c.score for c in found})
    if journal is None:
        return out
    known, groups = plan_calls(pairs, found, settings, endpoint, prompt, journal)
    for pair, verdict in known.items():
        record_one(out, pair, verdict)
    for batch in groups:
        entry = journal.get(batch_key(pairs, batch, endpoint, prompt))
        if entry is None:
            continue
        try:
            reply = judgement_model(len(batch)).model_validate(entry.reply)
        except ValidationError:
            continue
        record(out, batch, reply)
        out.calls += 1
    return out


def batch_key(pairs: Sequence[QAPair], batch: Sequence[Candidate], endpoint: Endpoint, prompt: Prompt) -> str:
    """The journal key of the call :func:`judge` makes about ``batch``."""
    from goldset.llm.client import request_key

    return request_key(endpoint, render_messages(pairs, batch, prompt), judgement_model(len(batch)))
