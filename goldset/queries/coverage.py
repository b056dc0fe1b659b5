"""How much of real traffic the golden set covers (``goldset coverage --queries FILE``).

Each real question (read, redacted and merged as ``goldset import --format queries`` does, nothing stored) is
matched with its nearest golden question: by embedding cosine when the generation endpoint has an embedding model
(``queries.embedding_threshold``), else lexically, by the Dice coefficient of token sets (CJK characters one token
each, so Chinese and English questions are both compared; ``queries.lexical_threshold``). A question is covered
when its nearest golden question reaches the threshold, which the report states. Coverage is given over the
distinct questions and weighted by how often each was asked; the uncovered ones are grouped into topic clusters
(greedy, token Dice ≥ ``queries.cluster_similarity``) with a few examples each.

The result is kept in the workspace as a :class:`~goldset.schema.coverage.CoverageRecord` of the dataset content it
was computed against (``.goldset/coverage/<manifest_hash>.json``, through :mod:`goldset.data`): the run report shows
it for runs of that content only.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from goldset.context import Context
from goldset.dataset import golden_ids
from goldset.errors import InputError
from goldset.filters.textsim import token_set
from goldset.queries.intake import import_queries, queries_path, read_queries
from goldset.queries.settings import QueriesSettings
from goldset.schema.coverage import CoverageCluster, CoverageMatch, CoverageRecord
from goldset.schema.queries import RealQuestion

if TYPE_CHECKING:
    from goldset.llm.endpoints import Endpoint
    from goldset.workspace import WorkspaceLike


@dataclass(frozen=True)
class Match:
    """One real question and its nearest golden question."""

    question: RealQuestion
    nearest: str | None
    nearest_id: str | None
    similarity: float
    covered: bool


@dataclass
class Cluster:
    """Uncovered questions on one topic: its most shared words, the questions, the times they were asked."""

    topic: str
    questions: list[RealQuestion]
    examples: list[str] = field(default_factory=list)

    @property
    def asked(self) -> int:
        return sum(q.count for q in self.questions)


@dataclass
class CoverageReport:
    """Coverage of real questions by a golden set (:func:`coverage`)."""

    source: str
    dataset: str
    method: str
    threshold: float
    golden: int
    matches: list[Match] = field(default_factory=list)
    clusters: list[Cluster] = field(default_factory=list)
    redacted: dict[str, int] = field(default_factory=dict)
    dataset_version: str | None = None
    manifest_hash: str = ""
    embedding_model: str | None = None
    stored: Path | None = None

    @property
    def questions(self) -> int:
        return len(self.matches)

    @property
    def covered(self) -> int:
        return sum(1 for m in self.matches if m.covered)

    @property
    def asked(self) -> int:
        return sum(m.question.count for m in self.matches)

    @property
    def asked_covered(self) -> int:
        return sum(m.question.count for m in self.matches if m.covered)

    @property
    def share(self) -> float:
        """Covered share of the distinct questions."""
        return self.covered / self.questions if self.questions else 0.0

    @property
    def weighted_share(self) -> float:
        """Covered share of the times questions were asked."""
        return self.asked_covered / self.asked if self.asked else 0.0

    @property
    def uncovered(self) -> list[RealQuestion]:
        return [m.question for m in self.matches if not m.covered]

    def record(self) -> CoverageRecord:
        """The coverage as the record the workspace keeps (matches and clusters most asked first)."""
        matches = sorted(self.matches, key=lambda m: (-m.question.count, m.question.id))
        return CoverageRecord(
            source=self.source, dataset=self.dataset, dataset_version=self.dataset_version,
            manifest_hash=self.manifest_hash, method="embedding" if self.method == "embedding" else "lexical",
            embedding_model=self.embedding_model, threshold=self.threshold, golden=self.golden,
            questions=self.questions, covered=self.covered, asked=self.asked, asked_covered=self.asked_covered,
            redacted=self.redacted,
            matches=[CoverageMatch(question_id=m.question.id, question=m.question.question, count=m.question.count,
                                   language=m.question.language, nearest=m.nearest, nearest_id=m.nearest_id,
                                   similarity=round(m.similarity, 4), covered=m.covered) for m in matches],
            clusters=[CoverageCluster(topic=c.topic, question_ids=[q.id for q in c.questions], asked=c.asked,
                                      examples=c.examples) for c in self.clusters],
        )  # fmt: skip

    def as_dict(self) -> dict[str, object]:
        """The figures and every match, for ``--json``."""
        return {
            "source": self.source, "dataset": self.dataset, "dataset_version": self.dataset_version,
            "manifest_hash": self.manifest_hash, "method": self.method, "threshold": self.threshold,
            "golden": self.golden, "questions": self.questions, "covered": self.covered, "share": self.share,
            "asked": self.asked, "asked_covered": self.asked_covered, "weighted_share": self.weighted_share,
            "redacted": self.redacted,
            "matches": [{"id": m.question.id, "question": m.question.question, "count": m.question.count,
                         "nearest": m.nearest, "nearest_id": m.nearest_id, "similarity": round(m.similarity, 4),
                         "covered": m.covered} for m in self.matches],
            "clusters": [{"topic": c.topic, "questions": len(c.questions), "asked": c.asked,
                          "examples": c.examples} for c in self.clusters],
        }  # fmt: skip


def dice(a: frozenset[str], b: frozenset[str]) -> float:
    """2|A∩B| / (|A|+|B|): token-set overlap, symmetric, 0 for an empty side."""
    return 2 * len(a & b) / (len(a) + len(b)) if a and b else 0.0


def _cosine(a: list[float], b: list[float]) -> float:
    num = sum(x * y for x, y in zip(a, b, strict=False))
    den = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return num / den if den else 0.0


#: Question words and CJK function characters: never a cluster's topic word.
_NOT_TOPICS = frozenset(
    ("what", "which", "does", "when", "where", "with", "that", "this", "have", "from", "your", "there", "about",
     "would", "could", "should", *"的了么怎我你吗是在有如何什哪为能可以样个这那和吧呢要会")
)  # fmt: skip
#: Two-character words that say "a question", not what it is about.
_NOT_TOPIC_WORDS = frozenset(("请问", "问题", "一下", "知道", "想问"))


_CJK_RUN = re.compile(r"[\u4e00-\u9fff\u3040-\u30ff\uac00-\ud7af]{2,}")


def _topic(questions: list[str]) -> str:
    """Up to three words the cluster's questions share most: English words of four letters or more, and for CJK
    text (no spaces, one token a character) two-character words, e.g. 上传 文件 of 怎么上传文件 (not 上 件 传), none
    holding a question or function character, none overlapping one already taken. Ties go to the earliest in the
    first question, then to the word, never to set order (which changes with the interpreter's hash seed)."""
    words: Counter[str] = Counter()
    first = re.sub(r"\[[a-z]+\]", " ", questions[0]).lower()
    for question in questions:
        text = re.sub(r"\[[a-z]+\]", " ", question).lower()  # a redaction mark ([email]) is no topic
        found = {t for t in token_set(text) if t.isascii() and len(t) > 3 and t not in _NOT_TOPICS}
        for run in _CJK_RUN.findall(text):
            pairs = (run[i : i + 2] for i in range(len(run) - 1))
            found.update(b for b in pairs if b not in _NOT_TOPIC_WORDS and not _NOT_TOPICS.intersection(b))
        words.update(found)
    ranked = sorted(words, key=lambda w: (-words[w], first.find(w) % (len(first) + 1), w))
    chosen: list[str] = []
    for w in ranked:
        if len(chosen) == 3:
            break
        if not w.isascii() and any(c[-1] == w[0] or c[0] == w[-1] for c in chosen if not c.isascii()):
            continue  # 传文 after 上传 and 文件: a window across two words
        chosen.append(w)
    return " ".join(sorted(chosen, key=lambda w: (first.find(w) % (len(first) + 1), w)))


def _clusters(questions: list[RealQuestion], similarity: float, examples: int) -> list[Cluster]:
    groups: list[tuple[frozenset[str], list[RealQuestion]]] = []
    for q in sorted(questions, key=lambda q: (-q.count, q.id)):
        tokens = token_set(q.question)
        for seed, members in groups:
            if dice(tokens, seed) >= similarity:
                members.append(q)
                break
        else:
            groups.append((tokens, [q]))
    out = []
    for _, members in groups:
        topic = _topic([q.question for q in members]) or members[0].question[:40]
        out.append(Cluster(topic, members, [q.question for q in members[:examples]]))
    out.sort(key=lambda c: -c.asked)
    return out


def coverage(
    queries: str | Path | None = None,
    ws: WorkspaceLike | Context = None,
    *,
    dataset: str | Path | None = None,
    threshold: float | None = None,
    store: bool = True,
) -> CoverageReport:
    """Which real questions of ``queries`` (a file as ``goldset import --format queries`` reads it; None: the
    questions imported into the workspace before) the golden set of ``dataset`` (a folder or a release such as
    ``v1.2.0``; default the workspace's data) covers.

    Embeddings when the generation endpoint has an embedding model, lexical otherwise; ``threshold`` replaces the
    method's setting. With ``store`` (and a workspace) the result is kept as the coverage of that dataset's content
    (:meth:`goldset.data.WorkspaceData.write_coverage`; ``report.stored`` says where), replacing an earlier one of
    the same content; the report of a run of that content shows it.
    """
    from goldset.dataset import Dataset
    from goldset.evaluation.datasets import dataset_fingerprint

    ctx = Context.of(ws)
    settings = ctx.section(QueriesSettings)
    if queries is not None:
        read = import_queries(queries, ctx, store=False)
        real, redacted, source = read.questions, read.redacted, str(queries)
    else:
        stored = read_queries(ctx.workspace)
        if not stored:
            raise InputError(
                f"{queries_path(ctx.workspace)}: no real questions imported; run `goldset import --format queries "
                "FILE` first, or pass the file (--queries FILE)"
            )
        real = sorted(stored, key=lambda q: (-q.count, q.id))
        redacted = dict(sorted(sum((Counter(q.redacted) for q in stored), Counter()).items()))
        source = str(queries_path(ctx.workspace))
    if dataset is not None:
        from goldset.evaluation.datasets import resolve_dataset

        data: Dataset = resolve_dataset(dataset, ctx)
        label = str(dataset)
    else:
        data = ctx.data.dataset()
        label = str(ctx.data.folder)
    ids = golden_ids(data.pairs, data.manifest)
    golden = [p for p in data.pairs if p.id in ids]
    if not golden:
        raise InputError(f"{label}: no golden pairs to compare with (accept or pass some pairs first)")
    endpoint = _embedding_endpoint(ctx)
    method = "embedding" if endpoint is not None else "lexical"
    if threshold is None:
        threshold = settings.embedding_threshold if endpoint is not None else settings.lexical_threshold
    report = CoverageReport(
        source, label, method, threshold, len(golden), redacted=redacted,
        dataset_version=data.manifest.version if data.manifest else None, manifest_hash=dataset_fingerprint(data),
        embedding_model=endpoint.embedding_model if endpoint is not None else None,
    )  # fmt: skip
    if endpoint is not None:
        from goldset.llm import session

        async def embed() -> list[list[float] | None]:
            async with session(ctx, endpoint) as client:
                return await client.embed([q.question for q in real] + [p.question for p in golden])

        vectors = asyncio.run(embed())
        qv, gv = vectors[: len(real)], vectors[len(real) :]

        def sim(i: int, j: int) -> float:
            a, b = qv[i], gv[j]
            return _cosine(a, b) if a is not None and b is not None else 0.0
    else:
        qsets = [token_set(q.question) for q in real]
        gsets = [token_set(p.question) for p in golden]

        def sim(i: int, j: int) -> float:
            return dice(qsets[i], gsets[j])

    for i, q in enumerate(real):
        best_j, best = max(((j, sim(i, j)) for j in range(len(golden))), key=lambda t: t[1])
        report.matches.append(Match(q, golden[best_j].question, golden[best_j].id, best, best >= threshold))
    report.clusters = _clusters(report.uncovered, settings.cluster_similarity, settings.examples)
    if store and ctx.ws is not None:
        report.stored = ctx.data.write_coverage(report.record())
    return report


def _embedding_endpoint(ctx: Context) -> Endpoint | None:
    from goldset.errors import EndpointError
    from goldset.llm import resolve_endpoint

    try:
        endpoint = resolve_endpoint(ctx, "generate")
    except EndpointError:
        return None
    return endpoint if endpoint.embedding_model else None
